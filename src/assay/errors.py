"""Every exception assay raises, split by whose fault it is: one tree, drawn here in full.

    AssayError
    ├── UsageError               the caller asked for something impossible (bad argument, unknown metric)
    │   ├── MissingDependency    an optional extra is not installed; carries the pip line
    │   ├── MissingCredentials   a provider's API key is not set; names the environment variable
    │   ├── WeightsMismatch      (models.local_weights) a judge weights file is not the one expected
    │   ├── PromptFileError      (prompts.localize) a saved prompt file cannot be used
    │   │   └── PromptSchemaMismatch (prompts.localize) it was written for another answer shape
    │   ├── ConditionError       (platform.server.conditions) a review-queue condition does not parse
    │   └── CriteriaProblem      (platform.criteria_rules) a platform criterion breaks a rule
    ├── DataError                input data is malformed; carries file, row and field
    ├── MetricError              a metric could not produce a score for one cell
    │   └── NotApplicable        the sample is outside the metric's domain (becomes a `skipped` outcome)
    ├── RunFailed                strict mode: the first error outcome of a run, with row and metric
    │   └── ExceptionInRunner    (engine.executor) Ragas' name for it
    ├── CheckpointMismatch       a run directory belongs to a different run
    ├── ModelError               a model call failed (raised by assay.models, translated from SDK errors)
    │   ├── ProviderError        the provider answered with an error status (status, body)
    │   │   └── RateLimited      429 / overloaded; carries retry_after when the server sent one
    │   ├── ModelTimeout         no answer within the per-attempt timeout
    │   ├── ModelConnectionError the provider could not be reached (refused, reset, protocol error)
    │   ├── MalformedResponse    a 200 whose body cannot be read (bad JSON or UTF-8, no choices); retried
    │   ├── OutputParseError     the answer could not be parsed into the requested schema (raw kept)
    │   ├── OutputTruncated      the answer hit the token limit even after retrying with a bigger budget
    │   ├── BudgetExhausted      the run's spending cap was reached before this call
    │   ├── CacheMiss            (models.cache) replay-only cache: no recorded answer for this call
    │   ├── ClassifierFailed     (models.nli_classifier) the HHEM/NLI classifier could not score
    │   └── Interrupted          (engine.interrupt) the run was stopped before this call was sent
    ├── PlatformError            (platform.sdk.errors) a request to the assay server failed
    │   ├── AuthError            (platform.sdk.errors) no key, a wrong or revoked key, a missing scope
    │   ├── NotFound             (platform.sdk.errors) no such object in this project (404)
    │   ├── Conflict             (platform.sdk.errors) the name is taken, or the object changed (409)
    │   ├── ValidationFailed     (platform.sdk.errors) the object breaks a rule; names the field
    │   ├── RateLimited          (platform.sdk.errors) 429 after the SDK's retries; also the RateLimited above
    │   └── ServerUnavailable    (platform.sdk.errors) unreachable, timed out, or 5xx
    ├── GateFailed               (testing.gate) a pytest gate did not pass (also an AssertionError)
    │   └── ReplayMiss           (testing.gate) a judge call had no recorded answer in a replay
    ├── AgentRunFailed           (integrations._messages) an agent trace reports a failed run
    ├── UnreadableAppOutput      (integrations._apps) an application's answer has no readable text
    ├── OtelExportFailed         (integrations.otel) the OTLP collector refused the export
    ├── UnreadableAgentReply     (simulation.errors) a simulated conversation's agent returned no readable reply
    ├── AgentLooped              (simulation.errors) the agent repeated the same reply or tool call
    ├── AgentEndpointError       (simulation.errors) an HTTP agent failed or answered an error status
    ├── SimulatedUserFailed      (simulation.errors) the user model's answer cannot be the user's turn
    └── ReplayMiss               (simulation.replay.tools) a replayed agent called a tool the recording does not answer

A class defined outside this module is shown with its module in parentheses (under `assay.`);
`tests/test_error_tree.py` checks that the drawing is the tree the code defines, so a new
exception class must be drawn here. Several also derive from a built-in (`UsageError` and
`DataError` are `ValueError`s, `MissingDependency` an `ImportError`, `NotFound` a `LookupError`).

Not in the tree, on purpose: the server's HTTP control flow (`ApiError`, `UiError`,
`LoginRequired`, `AuthFailed`, `PipelineError`, and `ImportRefused`, a dataset file the import
routes refuse with a 422) is turned into a response inside the server, and a
worker's `LostClaim` / `JobCancelled` stop one job, as `EndpointDown` / `ModelsDown`
(platform.server.jobs.calls) stop a job's calls to a model that does not answer; none reaches a
caller. `ParseFailure`
(models.structured) is caught inside the structured-output ladder, `_Invalid` inside the
spec-003 evaluator, which answers `None` as its contract says, and `_Failed`
(simulation.conversation) inside one simulated conversation, which records its typed error.

Inside an evaluation run, exceptions never escape as NaN: the engine turns them into `Error`
outcomes with `Error.from_exception` (or `Skipped` for `NotApplicable`). Outside a run they
propagate as usual.
"""

from __future__ import annotations


class AssayError(Exception):
    """Root of every error assay raises on purpose."""


class UsageError(AssayError, ValueError):
    """The caller passed an argument assay cannot act on."""


class MissingDependency(UsageError, ImportError):
    """An optional dependency is missing; the message says which extra to install."""

    def __init__(self, package: str, extra: str, feature: str | None = None) -> None:
        self.package = package
        self.extra = extra
        what = f"{feature} needs" if feature else "this feature needs"
        super().__init__(
            f"{what} the package '{package}', which is not installed. "
            f"Install it with: pip install 'assay[{extra}]'"
        )


class DataError(AssayError, ValueError):
    """Input data is malformed. `file`, `row` and `field` locate the problem when known.

    `row` is 1-based for rows read from a file and 0-based (an index) for in-memory lists;
    the message says which ("row 17" vs "index 16").
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        row: int | None = None,
        field: str | None = None,
        row_is_index: bool = False,
    ) -> None:
        self.file = file
        self.row = row
        self.field = field
        self.detail = message
        parts: list[str] = []
        if file is not None:
            parts.append(str(file))
        if row is not None:
            parts.append(f"index {row}" if row_is_index else f"row {row}")
        prefix = ": ".join(parts)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class MetricError(AssayError):
    """A metric failed on one cell for a reason of its own (not a model failure)."""


class NotApplicable(MetricError):
    """Raised inside a metric when the sample is outside its domain; recorded as `skipped`."""


class RunFailed(AssayError):
    """Raised by `evaluate(strict=True)` at the first error outcome."""

    def __init__(self, row: int, metric: str, error_type: str, message: str) -> None:
        self.row = row
        self.metric = metric
        self.error_type = error_type
        super().__init__(f"row {row}, metric {metric}: {error_type}: {message}")


class CheckpointMismatch(AssayError):
    """The run directory was written by a run with other data, metrics or settings."""


class MissingCredentials(UsageError):
    """A provider needs an API key that is not configured."""

    def __init__(self, provider: str, variable: str) -> None:
        self.provider = provider
        self.variable = variable
        super().__init__(
            f"{provider} needs an API key: set the environment variable {variable} or pass api_key=..."
        )


class ModelError(AssayError):
    """A call to a language or embedding model failed.

    `attempts` is how many tries were made (set by the retry layer); `raw` holds the model's
    unparsed output when there was one.
    """

    attempts: int = 1
    raw: str | None = None
    transient: bool = False  # worth retrying

    def __init__(self, message: str, *, raw: str | None = None) -> None:
        super().__init__(message)
        self.raw = raw


class ProviderError(ModelError):
    """The provider returned an error status. 5xx and 408/409 are transient; other 4xx are not."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        body: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.retry_after = retry_after  # seconds the server asked us to wait, if it said
        self.transient = status is None or status >= 500 or status in (408, 409)


class RateLimited(ProviderError):
    """The provider refused for rate or capacity reasons; wait `retry_after` seconds if given."""

    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        status: int = 429,
        body: str | None = None,
    ):
        super().__init__(message, status=status, body=body, retry_after=retry_after)
        self.transient = True


class ModelTimeout(ModelError):
    transient = True


class ModelConnectionError(ModelError):
    transient = True


class MalformedResponse(ModelError):
    """The provider's answer could not be read: the body is not JSON, not UTF-8, or lacks the
    fields of a completion. A fault on the wire or in the server, so worth another attempt."""

    transient = True


class OutputParseError(ModelError):
    """The model's answer did not parse into the requested schema, even after repair."""


class OutputTruncated(ModelError):
    """The model stopped at its token limit (finish_reason 'length') and the answer is incomplete."""


class BudgetExhausted(ModelError):
    """The run's spending cap was reached; the call was not made."""


def first_leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside (possibly nested) exception groups: concurrent calls
    (a task group's judges) fail as groups, and the cause a user needs is the first leaf."""
    while leaves := getattr(exc, "exceptions", None):  # an exception group's
        exc = leaves[0]
    return exc


__all__ = [
    "AssayError",
    "BudgetExhausted",
    "CheckpointMismatch",
    "DataError",
    "MalformedResponse",
    "MetricError",
    "MissingCredentials",
    "MissingDependency",
    "ModelConnectionError",
    "ModelError",
    "ModelTimeout",
    "NotApplicable",
    "OutputParseError",
    "OutputTruncated",
    "ProviderError",
    "RateLimited",
    "RunFailed",
    "UsageError",
    "first_leaf",
]
