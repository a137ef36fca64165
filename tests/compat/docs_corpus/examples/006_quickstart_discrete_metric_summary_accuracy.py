# ruff: noqa
# Docs: Quick Start > Using Pre-Built Metrics (DiscreteMetric)
# Changes:
#   - ragas -> assay in imports
#   - model: llm_factory("gpt-4o") reaches the loopback server via OPENAI_BASE_URL
#   - top-level await: run by the corpus runner as a notebook cell
# corpus: calls-model
from assay.metrics import DiscreteMetric
from assay.llms import llm_factory

# Setup your evaluator LLM
evaluator_llm = llm_factory("gpt-4o")

# Create a custom aspect evaluator
metric = DiscreteMetric(
    name="summary_accuracy",
    allowed_values=["accurate", "inaccurate"],
    prompt="""Evaluate if the summary is accurate and captures key information.

Response: {response}

Answer with only 'accurate' or 'inaccurate'.""",
    llm=evaluator_llm,
)

# Score your application's output
score = await metric.ascore(response="The summary of the text is...")
print(f"Score: {score.value}")  # 'accurate' or 'inaccurate'
print(f"Reason: {score.reason}")
