"""`BatchOptions`: how a batch run submits, waits and retries; checked when made."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

from assay.errors import UsageError

FALLBACKS = ("retry", "live")


def _seconds_from_environment(name: str, default: float) -> float:
    value = os.environ.get(name)
    if value is None:
        return default
    try:
        return float(value)
    except ValueError:
        raise UsageError(f"{name} must be a number of seconds, got {value!r}") from None


@dataclass(frozen=True)
class BatchOptions:
    """fallback: what becomes of a request whose batch line failed or expired: "retry" puts it
        in the next batch (up to `max_attempts` batches in all), "live" asks it at once through
        the live API, at the live price.
    poll_interval: seconds between two looks at a batch in flight (default 30, or
        `ASSAY_BATCH_POLL_SECONDS`).
    settle: a wave is submitted once every cell in flight waits for a queued request, or when no
        new request has been queued for this many seconds (a cell busy with something else, such
        as an embedding call, does not hold the others back for long).
    max_attempts: batches a request may go in before its error stands (as a live run's retries).
    max_requests: requests in one batch at most (OpenAI takes 50,000); a larger wave is several.
    max_cells: cells in flight at once (each waits for its answers in memory; the default fits
        a run of 20,000 cells in one wave).
    """

    fallback: str = "retry"
    poll_interval: float = field(
        default_factory=lambda: _seconds_from_environment("ASSAY_BATCH_POLL_SECONDS", 30.0)
    )
    settle: float = 2.0
    max_attempts: int = 3
    max_requests: int = 50_000
    max_cells: int = 20_000

    def __post_init__(self) -> None:
        if self.fallback not in FALLBACKS:
            raise UsageError(
                f"batch fallback must be {' or '.join(FALLBACKS)}, got {self.fallback!r}"
            )
        for name in ("poll_interval", "settle"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise UsageError(f"BatchOptions.{name} must be a number of seconds, got {value!r}")
            if not value > 0 or math.isinf(value):
                raise UsageError(f"BatchOptions.{name} must be more than 0 seconds, got {value!r}")
        for name in ("max_attempts", "max_requests", "max_cells"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(
                    f"BatchOptions.{name} must be a whole number of at least 1, got {value!r}"
                )


def check_batch(batch: bool, fallback: str | None) -> None:
    """The command line's batch options: `--batch-fallback` needs `--batch`. (With `--ray` the
    driver submits the batches: docs/ray.md.)"""
    if fallback is not None and not batch:
        raise UsageError("--batch-fallback goes with --batch")
    if fallback is not None and fallback not in FALLBACKS:
        raise UsageError(f"--batch-fallback must be {' or '.join(FALLBACKS)}, got {fallback!r}")


def batch_options(batch: Any) -> BatchOptions | None:
    """`evaluate(batch=...)`: False (live), True (the defaults) or `BatchOptions`."""
    if batch is False or batch is None:
        return None
    if batch is True:
        return BatchOptions()
    if isinstance(batch, BatchOptions):
        return batch
    raise UsageError(f"batch must be True, False or a BatchOptions, got {batch!r}")


__all__ = ["FALLBACKS", "BatchOptions", "batch_options", "check_batch"]
