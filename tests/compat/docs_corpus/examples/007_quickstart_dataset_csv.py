# ruff: noqa
# Docs: Quick Start > Evaluating on a Dataset
# Changes:
#   - ragas -> assay in imports
from assay import Dataset

# Create a dataset with multiple test samples
dataset = Dataset(
    name="test_dataset",
    backend="local/csv",  # Can also use JSONL, Google Drive, or in-memory
    root_dir=".",
)

# Add samples to the dataset
data_samples = [
    {
        "user_input": "What is ragas?",
        "response": "Ragas is an evaluation framework...",
        "expected": "Ragas provides objective metrics...",
    },
    {
        "user_input": "How do metrics work?",
        "response": "Metrics score your application...",
        "expected": "Metrics evaluate performance...",
    },
]

for sample in data_samples:
    dataset.append(sample)

# Save to disk
dataset.save()
