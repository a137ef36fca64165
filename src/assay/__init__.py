"""assay: measure how good LLM, RAG and agent applications are.

The public surface is re-exported here; everything else is an implementation detail.
"""

from assay._version import __version__
from assay.engine import (
    ExceptionInRunner,
    Executor,
    RunConfig,
    aevaluate,
    evaluate,
    set_logging_level,
)
from assay.errors import (
    AssayError,
    CheckpointMismatch,
    DataError,
    MetricError,
    MissingDependency,
    ModelError,
    NotApplicable,
    RunFailed,
    UsageError,
)
from assay.experiments import Dataset, experiment
from assay.metrics import *  # noqa: F403
from assay.metrics import __all__ as _metrics_all
from assay.schema import *  # noqa: F403
from assay.schema import __all__ as _schema_all

__all__ = [
    "AssayError",
    "CheckpointMismatch",
    "DataError",
    "Dataset",
    "ExceptionInRunner",
    "Executor",
    "MetricError",
    "MissingDependency",
    "ModelError",
    "NotApplicable",
    "RunConfig",
    "RunFailed",
    "UsageError",
    "__version__",
    "aevaluate",
    "evaluate",
    "experiment",
    "set_logging_level",
    *_metrics_all,
    *_schema_all,
]
