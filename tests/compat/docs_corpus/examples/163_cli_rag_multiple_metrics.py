# ruff: noqa
# Docs: RAG Evaluation (CLI template) > Add Multiple Metrics
# Changes:
#   - ragas -> assay in imports
from assay.metrics import DiscreteMetric, NumericalMetric

correctness = DiscreteMetric(
    name="correctness",
    prompt="Is the response factually correct? {response}",
    allowed_values=["correct", "incorrect"],
)

relevance = NumericalMetric(
    name="relevance",
    prompt="Rate relevance 1-5: {response} for question: {question}",
    allowed_values=(1, 5),
)
