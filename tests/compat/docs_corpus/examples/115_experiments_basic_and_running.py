# ruff: noqa
# Docs: Experiments > Basic Experiment Structure, Running Experiments
# Changes:
#   - ragas -> assay in imports
#   - filled in: my_system_function, `from datetime import datetime`, and the "test_data"
#     dataset on disk (the docs leave them to the reader)
#   - top-level await: run by the corpus runner as a notebook cell
from datetime import datetime  # filled in


def my_system_function(text):  # filled in: the reader's system
    return f"response to {text}"


from assay import experiment
import asyncio


@experiment()
async def my_experiment(row):
    # Process the input through your system
    response = await asyncio.to_thread(my_system_function, row["input"])

    # Return results for evaluation
    return {
        **row,  # Include original data
        "response": response,
        "experiment_name": "baseline_v1",
        # Add any additional metadata
        "model_version": "gpt-4o",
        "timestamp": datetime.now().isoformat(),
    }


from assay import Dataset

_setup = Dataset(name="test_data", backend="local/csv", root_dir="./data")  # filled in
for _text in ["What is Ragas?", "How do metrics work?"]:  # filled in
    _setup.append({"input": _text})
_setup.save()  # filled in

# Load your test dataset
dataset = Dataset.load(name="test_data", backend="local/csv", root_dir="./data")

# Run the experiment
results = await my_experiment.arun(dataset)
