"""Running evaluations: planning, concurrency, checkpoints, progress."""

from assay.engine.executor import ExceptionInRunner, Executor
from assay.engine.logs import set_logging_level
from assay.engine.run import aevaluate, evaluate
from assay.engine.run_config import RunConfig

__all__ = [
    "ExceptionInRunner",
    "Executor",
    "RunConfig",
    "aevaluate",
    "evaluate",
    "set_logging_level",
]
