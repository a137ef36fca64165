# ruff: noqa
# Docs: Quick Start > Understanding the Code (the template's load_dataset())
# Changes:
#   - ragas -> assay in imports
#   - filled in: a call of load_dataset() (the quickstart's evals.py calls it)
from assay.dataset_schema import SingleTurnSample
from assay import EvaluationDataset


def load_dataset():
    """Load test dataset for evaluation."""
    data_samples = [
        SingleTurnSample(
            user_input="What is Ragas?",
            response="",  # Will be filled by querying RAG
            reference="Ragas is an evaluation framework for LLM applications",
            retrieved_contexts=[],
        ),
        # Add more test cases...
    ]
    return EvaluationDataset(samples=data_samples)


dataset = load_dataset()  # filled in: the template calls it
