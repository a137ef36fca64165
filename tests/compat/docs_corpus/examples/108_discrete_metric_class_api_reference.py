# ruff: noqa
# Docs: API Reference > Metrics > DiscreteMetric (Examples)
# Changes:
#   - ragas -> assay in imports
#   - the doctest prompts (>>>, ...) removed
#   - model: OpenAI(api_key=...) reaches the loopback server via OPENAI_BASE_URL
# corpus: calls-model
from assay.metrics import DiscreteMetric
from assay.llms import llm_factory
from openai import OpenAI

# Create an LLM instance
client = OpenAI(api_key="your-api-key")
llm = llm_factory("gpt-4o-mini", client=client)

# Create a custom discrete metric
metric = DiscreteMetric(
    name="quality_check",
    prompt="Check the quality of the response: {response}. Return 'excellent', 'good', or 'poor'.",
    allowed_values=["excellent", "good", "poor"],
)

# Score with the metric
result = metric.score(llm=llm, response="This is a great response!")
print(result.value)  # Output: "excellent" or similar
