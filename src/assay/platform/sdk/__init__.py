"""The RagMetrics-compatible SDK (seed 004) for the assay server: httpx, pydantic and rich only."""

from assay.platform.sdk.client import RateLimited, login, whoami
from assay.platform.sdk.errors import (
    AuthError,
    Conflict,
    NotFound,
    PlatformError,
    ServerUnavailable,
    ValidationFailed,
)
from assay.platform.sdk.evaluators import OnlineEvaluator
from assay.platform.sdk.experiment import Experiment
from assay.platform.sdk.export import export_stats, flush
from assay.platform.sdk.monitor import monitor
from assay.platform.sdk.objects import Cohort, Criteria, Dataset, Example, RagMetricsObject, Task
from assay.platform.sdk.pipelines import RagPipeline
from assay.platform.sdk.result_export import add_scores, upload_result
from assay.platform.sdk.review import ReviewQueue
from assay.platform.sdk.sessions import Session
from assay.platform.sdk.traces import Trace
from assay.platform.sdk.tracing import trace_function_call, trace_session

__all__ = [
    "AuthError",
    "Cohort",
    "Conflict",
    "Criteria",
    "Dataset",
    "Example",
    "Experiment",
    "NotFound",
    "OnlineEvaluator",
    "PlatformError",
    "RagMetricsObject",
    "RagPipeline",
    "RateLimited",
    "ReviewQueue",
    "ServerUnavailable",
    "Session",
    "Task",
    "Trace",
    "ValidationFailed",
    "add_scores",
    "export_stats",
    "flush",
    "login",
    "monitor",
    "trace_function_call",
    "trace_session",
    "upload_result",
    "whoami",
]
