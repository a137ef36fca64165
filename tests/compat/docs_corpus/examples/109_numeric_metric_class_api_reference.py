# ruff: noqa
# Docs: API Reference > Metrics > NumericMetric (Examples)
# Changes:
#   - ragas -> assay in imports
#   - the doctest prompts (>>>, ...) removed
#   - model: OpenAI(api_key=...) reaches the loopback server via OPENAI_BASE_URL
# corpus: calls-model
from assay.metrics import NumericMetric
from assay.llms import llm_factory
from openai import OpenAI

# Create an LLM instance
client = OpenAI(api_key="your-api-key")
llm = llm_factory("gpt-4o-mini", client=client)

# Create a custom numeric metric with 0-10 range
metric = NumericMetric(
    name="quality_score",
    llm=llm,
    prompt="Rate the quality of this response on a scale of 0-10: {response}",
    allowed_values=(0.0, 10.0),
)

# Score with the metric
result = metric.score(llm=llm, response="This is a great response!")
print(result.value)  # Output: a float between 0.0 and 10.0
