"""Experiment-centric workflow: keep test data in a `Dataset`, run your app over it with
`@experiment`, and compare runs (`assay experiments list|compare`).

    datasets/<name>.<csv|jsonl|sqlite>   Dataset files (see backends/)
    experiments/<name>.jsonl             results, one line per finished row (see store.py)
    experiments/<name>.meta.json         what the run was
    experiments/<name>.csv               the rows as a table, written when the run ends
"""

from assay.experiments.backends import DatasetBackend, backend_names, register_backend
from assay.experiments.compare import Comparison, compare_experiments
from assay.experiments.dataset import Dataset
from assay.experiments.runner import ExperimentFunction, experiment
from assay.experiments.store import Experiment, list_experiments, load_experiment

__all__ = [
    "Comparison",
    "Dataset",
    "DatasetBackend",
    "Experiment",
    "ExperimentFunction",
    "backend_names",
    "compare_experiments",
    "experiment",
    "list_experiments",
    "load_experiment",
    "register_backend",
]
