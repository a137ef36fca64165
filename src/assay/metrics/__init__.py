"""The metric catalogue: every built-in metric, imported here so `assay.metrics.registry` finds
them all; metrics of other packages join through `register_metric` or the `assay.metrics`
entry-point group (see `assay.metrics.registry`).

`assay.metrics` is also Ragas' `ragas.metrics`: Ragas' base-class names (`MetricWithLLM`,
`SingleTurnMetric`, ...) are added to it from `assay.compat.ragas` when `assay` is imported.
"""

from assay.metrics.agent import *  # noqa: F403
from assay.metrics.agent import __all__ as _agent_all
from assay.metrics.answer import *  # noqa: F403
from assay.metrics.answer import __all__ as _answer_all
from assay.metrics.base import CallEstimate, Metric
from assay.metrics.callbacks import EvaluationCallback
from assay.metrics.classic import *  # noqa: F403
from assay.metrics.classic import __all__ as _classic_all
from assay.metrics.criteria import Criteria
from assay.metrics.custom import *  # noqa: F403
from assay.metrics.custom import __all__ as _custom_all
from assay.metrics.faithfulness_hhem import FaithfulnesswithHHEM
from assay.metrics.general import *  # noqa: F403
from assay.metrics.general import __all__ as _general_all
from assay.metrics.llm_metric import LLMMetric
from assay.metrics.rag import *  # noqa: F403
from assay.metrics.rag import __all__ as _rag_all
from assay.metrics.registry import create_metric, register_metric
from assay.metrics.singletons import *  # noqa: F403
from assay.metrics.singletons import __all__ as _singletons_all
from assay.metrics.sql import *  # noqa: F403
from assay.metrics.sql import __all__ as _sql_all
from assay.schema.outcome import MetricResult

__all__ = [
    "CallEstimate",
    "Criteria",
    "EvaluationCallback",
    "FaithfulnesswithHHEM",
    "LLMMetric",
    "Metric",
    "MetricResult",
    "create_metric",
    "register_metric",
    *_agent_all,
    *_answer_all,
    *_classic_all,
    *_custom_all,
    *_general_all,
    *_rag_all,
    *_singletons_all,
    *_sql_all,
]
