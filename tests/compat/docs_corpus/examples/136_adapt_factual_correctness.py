# ruff: noqa
# Docs: Adapting Metrics to Target Language > Adapting FactualCorrectness
# Changes:
#   - ragas -> assay in imports
#   - filled in: client and llm of the page's Setup cell
#   - model: AsyncOpenAI() reaches the loopback server via OPENAI_BASE_URL
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
# corpus: expect-stdout german
from openai import AsyncOpenAI  # filled in: Setup cell
from assay.llms import llm_factory  # filled in: Setup cell

client = AsyncOpenAI()  # filled in: Setup cell
llm = llm_factory("gpt-4o-mini", client=client)  # filled in: Setup cell

from assay.metrics.collections import FactualCorrectness

metric = FactualCorrectness(llm=llm)

# Adapt both prompts to German
metric.prompt = await metric.prompt.adapt(target_language="german", llm=llm)
metric.nli_prompt = await metric.nli_prompt.adapt(target_language="german", llm=llm)

# Verify adaptation
print(metric.prompt.language)  # german
print(metric.nli_prompt.language)  # german

# Now use the adapted metric
result = await metric.ascore(
    response="Einstein wurde 1879 in Deutschland geboren.",
    reference="Albert Einstein wurde am 14. März 1879 in Ulm, Deutschland geboren.",
)
print(f"Factual Correctness: {result.value}")
