"""Every exception assay raises, split by whose fault it is.

    AssayError
    ├── UsageError              the caller asked for something impossible (bad argument, unknown metric)
    │   └── MissingDependency   an optional extra is not installed; carries the pip line
    ├── DataError               input data is malformed; carries file, row and field
    ├── MetricError             a metric could not produce a score for one cell
    │   └── NotApplicable       the sample is outside the metric's domain (becomes a `skipped` outcome)
    ├── RunFailed               strict mode: the first error outcome of a run, with row and metric
    ├── CheckpointMismatch      a run directory belongs to a different run
    └── ModelError              a model call failed (filled in by assay.models)

Inside an evaluation run, exceptions never escape as NaN: the engine turns them into
`Error` outcomes (or `Skipped` for `NotApplicable`). Outside a run they propagate as usual.
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


class ModelError(AssayError):
    """A call to a language or embedding model failed."""


__all__ = [
    "AssayError",
    "CheckpointMismatch",
    "DataError",
    "MetricError",
    "MissingDependency",
    "ModelError",
    "NotApplicable",
    "RunFailed",
    "UsageError",
]
