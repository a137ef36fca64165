# ruff: noqa
# Docs: Overview of Metrics > Output Types > 2. Numeric Metrics
# Changes:
#   - ragas -> assay in imports
from assay.metrics import numeric_metric


@numeric_metric(name="response_accuracy", allowed_values=(0, 1))
def my_metric(predicted: float, expected: float) -> float:
    return abs(predicted - expected) / max(expected, 1e-5)


my_metric.score(predicted=0.8, expected=1.0)  # Returns a float value
