# ruff: noqa
# Docs: API Reference > Metrics > RankingMetric (Examples)
# Changes:
#   - ragas -> assay in imports
#   - the doctest prompts (>>>, ...) removed
#   - model: OpenAI(api_key=...) reaches the loopback server via OPENAI_BASE_URL
# corpus: calls-model
# corpus: differs OutputParseError: not one of the items given to rank -- assay checks that a ranking holds only the items it was given; Ragas checks the length only
from assay.metrics import RankingMetric
from assay.llms import llm_factory
from openai import OpenAI

# Create an LLM instance
client = OpenAI(api_key="your-api-key")
llm = llm_factory("gpt-4o-mini", client=client)

# Create a ranking metric that returns top 3 items
metric = RankingMetric(
    name="relevance_ranking",
    llm=llm,
    prompt="Rank these results by relevance: {results}",
    allowed_values=3,
)

# Score with the metric
result = metric.score(llm=llm, results="result1, result2, result3")
print(result.value)  # Output: a list of 3 ranked items
