# ruff: noqa
# Docs: Prompt Evaluation > metric definition (discrete_metric accuracy)
# Changes:
#   - ragas -> assay in imports
from assay.metrics import discrete_metric
from assay.metrics.result import MetricResult


@discrete_metric(name="accuracy", allowed_values=["pass", "fail"])
def my_metric(prediction: str, actual: str):
    """Calculate accuracy of the prediction."""
    return (
        MetricResult(value="pass", reason="")
        if prediction == actual
        else MetricResult(value="fail", reason="")
    )
