# ruff: noqa
# Docs: Overview of Metrics > Output Types > 1. Discrete Metrics
# Changes:
#   - ragas -> assay in imports
from assay.metrics import discrete_metric


@discrete_metric(name="response_quality", allowed_values=["pass", "fail"])
def my_metric(predicted: str, expected: str) -> str:
    return "pass" if predicted.lower() == expected.lower() else "fail"
