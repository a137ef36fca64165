# ruff: noqa
# Docs: Prompt Evaluation (CLI template) > Add More Metrics
# Changes:
#   - ragas -> assay in imports
from assay.metrics import NumericalMetric

confidence = NumericalMetric(
    name="confidence",
    prompt="Rate confidence 1-5 in this classification: {prediction}",
    allowed_values=(1, 5),
)
