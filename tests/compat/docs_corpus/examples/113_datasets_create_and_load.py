# ruff: noqa
# Docs: Datasets and Experiment Results > Working with Datasets in Ragas (Creating a Dataset,
#       Loading an Existing Dataset, Dataset Storage and Management, Dataset Versioning)
# Changes:
#   - ragas -> assay in imports
# corpus: docs-bug UsageError: no dataset 'my_evaluation' -- the page appends rows but never calls save(), and Ragas' local/csv backend keeps appended rows in memory, so load() finds nothing there either
from assay import Dataset

# Create a new dataset
dataset = Dataset(name="my_evaluation", backend="local/csv", root_dir="./data")

# Add a sample to the dataset
dataset.append(
    {
        "id": "sample_1",
        "query": "What is the capital of France?",
        "expected_answer": "Paris",
        "metadata": {"complexity": "simple", "language": "en"},
    }
)

# Load an existing dataset
dataset = Dataset.load(name="my_evaluation", backend="local/csv", root_dir="./data")

dataset = Dataset(name="my_eval", backend="local/csv", root_dir="./datasets")

# Include version in dataset name
dataset = Dataset(name="my_eval_v1.2", backend="local/csv", root_dir="./datasets")
