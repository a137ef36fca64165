"""The metric catalogue. Importing this package registers every built-in metric."""

from assay.metrics.answer import *  # noqa: F403
from assay.metrics.answer import __all__ as _answer_all
from assay.metrics.base import Metric
from assay.metrics.classic import *  # noqa: F403
from assay.metrics.classic import __all__ as _classic_all
from assay.metrics.rag import *  # noqa: F403
from assay.metrics.rag import __all__ as _rag_all
from assay.schema.outcome import MetricResult

__all__ = ["Metric", "MetricResult", *_classic_all, *_rag_all, *_answer_all]
