# ruff: noqa
# Docs: Evaluate an AI agent > metric definition (numeric_metric correctness)
# Changes:
#   - ragas -> assay in imports
from assay.metrics import numeric_metric
from assay.metrics.result import MetricResult


@numeric_metric(name="correctness")
def correctness_metric(prediction: float, actual: float):
    """Calculate correctness of the prediction."""
    if isinstance(prediction, str) and "ERROR" in prediction:
        return 0.0
    result = 1.0 if abs(prediction - actual) < 1e-5 else 0.0
    return MetricResult(value=result, reason=f"Prediction: {prediction}, Actual: {actual}")
