# ruff: noqa
# Docs: Quick Start > Customize Your Evaluation > Add More Test Cases
# Changes:
#   - ragas -> assay in imports
#   - filled in: a call of load_dataset() (evals.py calls it)
from assay import Dataset


def load_dataset():
    """Load test dataset for evaluation."""
    dataset = Dataset(
        name="test_dataset",
        backend="local/csv",
        root_dir=".",
    )

    data_samples = [
        {
            "question": "What is Ragas?",
            "grading_notes": "Ragas is an evaluation framework for LLM applications",
        },
        {
            "question": "How do metrics work?",
            "grading_notes": "Metrics evaluate the quality and performance of LLM responses",
        },
        # Add more test cases here
    ]

    for sample in data_samples:
        dataset.append(sample)

    dataset.save()
    return dataset


dataset = load_dataset()  # filled in: evals.py calls it
