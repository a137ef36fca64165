# ruff: noqa
# Docs: Cancelling Long-Running Tasks > Basic Usage > Cancellable Evaluation
# Changes:
#   - ragas -> assay in imports
#   - filled in: EvaluationDataset(...) and metrics = [...] (placeholders in the docs)
#   - model: none named; the default judge is the loopback server (ASSAY_LLM)
from assay import evaluate
from assay.dataset_schema import EvaluationDataset

from assay import SingleTurnSample  # filled in
from assay.metrics import AspectCritic  # filled in

# Your dataset and metrics
dataset = EvaluationDataset(  # filled in
    samples=[SingleTurnSample(user_input="Where is the Eiffel Tower?", response="In Paris.")]
)
metrics = [AspectCritic(name="correctness", definition="Is the response correct?")]  # filled in

# Get executor instead of running evaluation immediately
executor = evaluate(
    dataset=dataset,
    metrics=metrics,
    return_executor=True,  # Key parameter
)

# Now you can:
# - Cancel: executor.cancel()
# - Check status: executor.is_cancelled()
# - Get results: executor.results()  # This blocks until completion
