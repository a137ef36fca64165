"""`RunConfig`: Ragas' run settings, mapped onto assay's.

    evaluate(dataset, metrics, run_config=RunConfig(timeout=60, max_workers=8, max_retries=3))

Only the fields you set change anything; an unset field leaves assay's own default, which is the
more forgiving one (600 s per cell instead of 180, concurrency that follows the judge's limiter
instead of a fixed 16, 8 attempts per call). The fields mean:

- `timeout`: seconds one (row, metric) cell may take, as Ragas' per-job timeout; a cell that runs
  over ends as an `error` outcome of type Timeout. Same as `evaluate(timeout=...)`.
- `max_workers`: cells scored at once (`evaluate(max_concurrency=...)`); -1 means no fixed limit
  (assay's adaptive default).
- `max_retries`, `max_wait`: attempts per model call and the longest wait between two (seconds),
  as a `RetryPolicy(max_attempts=max_retries, max_wait=max_wait)`. It applies to the models the run
  builds (model strings, the default judge, wrapped LangChain/LlamaIndex models) and to model
  objects still on the default policy, as copies; a model built with its own `retry=` keeps it.
- `exception_types`, `log_tenacity`, `seed`: accepted and kept, with no effect. assay retries
  exactly the transient model errors (429, 5xx, timeouts, cut connections) whatever the exception
  types; retries are counted in each error outcome's `attempts`; judged metrics are deterministic
  per call (temperature 0; AspectCritic's votes have fixed seeds). `rng` is a numpy Generator
  seeded with `seed`, for code that reads it.
"""

from __future__ import annotations

import math
from typing import Any

from assay.errors import UsageError
from assay.models.retry import RetryPolicy

_RAGAS_DEFAULTS: dict[str, Any] = {
    "timeout": 180,
    "max_retries": 10,
    "max_wait": 60,
    "max_workers": 16,
    "exception_types": (Exception,),
    "log_tenacity": False,
    "seed": 42,
}
_UNSET: Any = object()


def _number(name: str, value: Any, *, low: float, inclusive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UsageError(f"RunConfig {name} must be a number, got {value!r}")
    if value < low or (value == low and not inclusive):
        raise UsageError(
            f"RunConfig {name} must be {'at least' if inclusive else 'more than'} {low:g}, got {value!r}"
        )
    return value


class RunConfig:
    """Ragas' run settings (timeout, max_retries, max_wait, max_workers, exception_types,
    log_tenacity, seed), each mapped onto assay's settings as the module docstring says."""

    def __init__(
        self,
        timeout: float = _UNSET,
        max_retries: int = _UNSET,
        max_wait: float = _UNSET,
        max_workers: int = _UNSET,
        exception_types: Any = _UNSET,
        log_tenacity: bool = _UNSET,
        seed: int = _UNSET,
    ) -> None:
        given = {
            name: value
            for name, value in locals().items()
            if name in _RAGAS_DEFAULTS and value is not _UNSET
        }
        self.given = frozenset(given)
        values = {**_RAGAS_DEFAULTS, **given}
        self.timeout = _number("timeout", values["timeout"], low=0, inclusive=False)
        self.max_retries = values["max_retries"]
        if (
            isinstance(self.max_retries, bool)
            or not isinstance(self.max_retries, int)
            or self.max_retries < 0
        ):
            raise UsageError(
                f"RunConfig max_retries must be a whole number of 0 or more, got {self.max_retries!r}"
            )
        self.max_wait = _number("max_wait", values["max_wait"], low=0, inclusive=True)
        self.max_workers = values["max_workers"]
        if (
            isinstance(self.max_workers, bool)
            or not isinstance(self.max_workers, int)
            or not (self.max_workers >= 1 or self.max_workers == -1)
        ):
            raise UsageError(
                f"RunConfig max_workers must be a whole number of at least 1 (or -1: no fixed limit), "
                f"got {self.max_workers!r}"
            )
        types = values["exception_types"]
        types = types if isinstance(types, tuple) else (types,)
        if not types or not all(
            isinstance(t, type) and issubclass(t, BaseException) for t in types
        ):
            raise UsageError(
                f"RunConfig exception_types must be an exception class or a tuple of them, got {types!r}"
            )
        self.exception_types = types
        self.log_tenacity = bool(values["log_tenacity"])
        self.seed = values["seed"]
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise UsageError(f"RunConfig seed must be a whole number, got {self.seed!r}")
        self._rng: Any = None

    @property
    def rng(self) -> Any:
        """A numpy random Generator seeded with `seed` (numpy is imported on first use)."""
        if self._rng is None:
            import numpy

            self._rng = numpy.random.default_rng(self.seed)
        return self._rng

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _RAGAS_DEFAULTS)
        return f"RunConfig({shown})"

    # -- what it means for a run ------------------------------------------------------------------
    def retry_policy(self) -> RetryPolicy | None:
        """The retry policy the run's models get, or None when neither retry field was set."""
        if not self.given & {"max_retries", "max_wait"}:
            return None
        defaults = RetryPolicy()
        attempts = (
            max(1, self.max_retries) if "max_retries" in self.given else defaults.max_attempts
        )
        longest = float(self.max_wait) if "max_wait" in self.given else defaults.max_wait
        return RetryPolicy(
            max_attempts=attempts,
            initial_wait=min(defaults.initial_wait, longest),
            max_wait=longest,
        )


def run_settings(
    run_config: Any, timeout: float | None, max_concurrency: int | None, batch_size: Any
) -> tuple[float | None, int | None, RetryPolicy | None]:
    """(cell timeout, max_concurrency, retry policy) after `run_config` and `batch_size`."""
    retry = None
    if run_config is not None:
        if not isinstance(run_config, RunConfig):
            raise UsageError(f"run_config must be a RunConfig, got {type(run_config).__name__}")
        if "timeout" in run_config.given:
            if timeout not in (None, 600.0) and timeout != run_config.timeout:
                raise UsageError(
                    f"timeout={timeout!r} and run_config.timeout={run_config.timeout!r} disagree; give one"
                )
            timeout = run_config.timeout
        if "max_workers" in run_config.given and run_config.max_workers != -1:
            if max_concurrency is not None and max_concurrency != run_config.max_workers:
                raise UsageError(
                    f"max_concurrency={max_concurrency!r} and run_config.max_workers="
                    f"{run_config.max_workers!r} disagree; give one"
                )
            max_concurrency = run_config.max_workers
        retry = run_config.retry_policy()
    if batch_size is not None:
        # Ragas runs jobs in batches of this size; assay's pool never waits for a whole batch to
        # finish, so the batch size is a cap on the cells in flight.
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise UsageError(
                f"batch_size must be a whole number of at least 1 (or None), got {batch_size!r}"
            )
        max_concurrency = (
            batch_size if max_concurrency is None else min(max_concurrency, batch_size)
        )
    return timeout, max_concurrency, retry


__all__ = ["RunConfig", "run_settings"]
