"""Running evaluations: planning, concurrency, checkpoints, progress; `evaluate_file` runs from a
dataset file to a results file, as `assay evaluate` does."""

from assay.engine.executor import ExceptionInRunner, Executor
from assay.engine.file_run import FileRun, FileRunOptions, estimate_file, evaluate_file
from assay.engine.logs import set_logging_level
from assay.engine.model_choice import ModelChoice
from assay.engine.run import aevaluate, evaluate
from assay.engine.run_config import RunConfig

__all__ = [
    "ExceptionInRunner",
    "Executor",
    "FileRun",
    "FileRunOptions",
    "ModelChoice",
    "RunConfig",
    "aevaluate",
    "estimate_file",
    "evaluate",
    "evaluate_file",
    "set_logging_level",
]
