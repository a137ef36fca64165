# ruff: noqa
# Docs: Quick Start > Customize Your Evaluation > Customize Evaluation Metrics
# Changes:
#   - ragas -> assay in imports
from assay.metrics import DiscreteMetric
from assay.llms import llm_factory

my_metric = DiscreteMetric(
    name="custom_evaluation",
    prompt="Evaluate this response: {response} based on: {context}. Return 'excellent', 'good', or 'poor'.",
    allowed_values=["excellent", "good", "poor"],
)
