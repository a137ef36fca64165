# ruff: noqa
# Docs: Datasets and Experiment Results > Integration with Evaluation Workflows
# Changes:
#   - ragas -> assay in imports
#   - filled in: my_ai_system (the reader's AI system) and the "my_evaluation" dataset on disk
#     (the page's "Creating a Dataset" cell, saved)
#   - top-level await: run by the corpus runner as a notebook cell
from assay import experiment, Dataset


async def my_ai_system(query):  # filled in: the reader's AI system
    return f"An answer to: {query}"


_setup = Dataset(name="my_evaluation", backend="local/csv", root_dir="./data")  # filled in
_setup.append(
    {"id": "sample_1", "query": "What is the capital of France?", "expected_answer": "Paris"}
)
_setup.save()  # filled in

# Load your dataset
dataset = Dataset.load(name="my_evaluation", backend="local/csv", root_dir="./data")


# Define your experiment
@experiment()
async def my_experiment(row):
    # Process the input through your AI system
    response = await my_ai_system(row["query"])

    # Return results for metric evaluation
    return {
        **row,  # Include original data
        "response": response,
        "experiment_name": "baseline_v1",
    }


# Run evaluation on the dataset
results = await my_experiment.arun(dataset)
