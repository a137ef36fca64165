# ruff: noqa
# Docs: Caching in Ragas > Caching in Experiments
# Changes:
#   - ragas -> assay in imports
#   - filled in: client (the page's earlier cells use OpenAI(api_key="..."))
#   - model: OpenAI reaches the loopback server via OPENAI_BASE_URL
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from openai import OpenAI  # filled in: earlier cells

client = OpenAI(api_key="...")  # filled in: earlier cells

from assay import experiment, Dataset
from assay.cache import DiskCacheBackend
from assay.llms import llm_factory
from assay.metrics.collections import FactualCorrectness

# Setup cached LLM once
cache = DiskCacheBackend()
llm = llm_factory("gpt-4o-mini", client=client, cache=cache)

# Use in metric
metric = FactualCorrectness(llm=llm)


@experiment()
async def evaluate_model(row):
    score = metric.score(response=row["response"], reference=row["reference"])
    return {**row, "factual_correctness": score.value, "reason": score.reason}


# Load your dataset
dataset = Dataset.from_list(
    [
        {"response": "Paris is the capital of France", "reference": "Paris"},
        {"response": "London is the capital of UK", "reference": "London"},
    ]
)

# First run - makes API calls and caches results
print("First run (populating cache)...")
results1 = await evaluate_model.arun(dataset)
# Takes ~2 seconds for 2 samples

# Second run - uses cache, nearly instant!
print("Second run (using cache)...")
results2 = await evaluate_model.arun(dataset)
# Takes ~0.1 seconds for 2 samples
# Results are identical, but 20x faster!
