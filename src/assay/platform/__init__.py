"""The assay platform: a self-hosted server (`assay serve`) and the RagMetrics-compatible SDK.

    import assay.platform as ragmetrics
    ragmetrics.login()                      # ASSAY_API_KEY / RAGMETRICS_API_KEY, ASSAY_BASE_URL
    from assay.platform import Dataset, Example, Task, Criteria, Cohort, Experiment
    from assay.platform import monitor, trace_function_call, Trace, ReviewQueue, OnlineEvaluator
    from assay.platform import Session, trace_session

This package re-exports the SDK only (httpx, pydantic and rich: no server dependency). The server
lives in `assay.platform.server` and needs `pip install 'assay[platform]'`. The library (`assay`)
never imports this package.
"""

from assay.platform.sdk import (
    AuthError,
    Cohort,
    Conflict,
    Criteria,
    Dataset,
    Example,
    Experiment,
    NotFound,
    OnlineEvaluator,
    PlatformError,
    RagMetricsObject,
    RagPipeline,
    RateLimited,
    ReviewQueue,
    ServerUnavailable,
    Session,
    Task,
    Trace,
    ValidationFailed,
    add_scores,
    export_stats,
    flush,
    login,
    monitor,
    trace_function_call,
    trace_session,
    upload_result,
    whoami,
)

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
