# ruff: noqa
# Docs: Cancelling Long-Running Tasks > Production Patterns > 1. Timeout Pattern
# Changes:
#   - ragas -> assay in imports
#   - filled in: the `evaluate` import and dataset / metrics (the docs leave them to the reader)
#   - model: none named; the default judge is the loopback server (ASSAY_LLM)
# corpus: calls-model
from assay import evaluate, EvaluationDataset, SingleTurnSample  # filled in
from assay.metrics import AspectCritic  # filled in

dataset = EvaluationDataset(  # filled in
    samples=[SingleTurnSample(user_input="Where is the Eiffel Tower?", response="In Paris.")]
)
metrics = [AspectCritic(name="correctness", definition="Is the response correct?")]  # filled in

import threading
import time


def evaluate_with_timeout(dataset, metrics, timeout_seconds=300):
    """Run evaluation with automatic timeout."""
    # Get cancellable executor
    executor = evaluate(dataset=dataset, metrics=metrics, return_executor=True)

    results = None
    exception = None

    def run_evaluation():
        nonlocal results, exception
        try:
            results = executor.results()
        except Exception as e:
            exception = e

    # Start evaluation in background thread
    thread = threading.Thread(target=run_evaluation)
    thread.start()

    # Wait for completion or timeout
    thread.join(timeout=timeout_seconds)

    if thread.is_alive():
        print(f"Evaluation exceeded {timeout_seconds}s timeout, cancelling...")
        executor.cancel()
        thread.join(timeout=10)  # Custom timeout as per need
        return None, "timeout"

    return results, exception


# Usage
results, error = evaluate_with_timeout(dataset, metrics, timeout_seconds=600)
if error == "timeout":
    print("Evaluation was cancelled due to timeout")
else:
    print(f"Evaluation completed: {results}")
