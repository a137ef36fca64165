# ruff: noqa
# Docs: Factual Correctness > Example
# Changes:
#   - ragas -> assay in imports
#   - model: AsyncOpenAI() reaches the loopback server via OPENAI_BASE_URL
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from openai import AsyncOpenAI
from assay.llms import llm_factory
from assay.metrics.collections import FactualCorrectness

# Setup LLM
client = AsyncOpenAI()
llm = llm_factory("gpt-4o-mini", client=client)

# Create metric
scorer = FactualCorrectness(llm=llm)

# Evaluate
result = await scorer.ascore(
    response="The Eiffel Tower is located in Paris.",
    reference="The Eiffel Tower is located in Paris. It has a height of 1000ft.",
)
print(f"Factual Correctness Score: {result.value}")
