"""Retries with exponential backoff and jitter, honouring the server's Retry-After."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

from assay.errors import ModelError, ProviderError

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How persistently to retry transient failures (429, 5xx, timeouts, connection errors)."""

    max_attempts: int = 8
    initial_wait: float = 1.0
    max_wait: float = 60.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")


def _is_transient(exc: BaseException) -> bool:
    return isinstance(exc, ModelError) and exc.transient


class _Wait:
    """Wait what the server asked for; otherwise back off exponentially with full jitter."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.backoff = wait_random_exponential(multiplier=policy.initial_wait, max=policy.max_wait)
        self.max_wait = policy.max_wait

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, ProviderError) and exc.retry_after is not None:
            # The server knows when capacity frees up; waiting less only earns another 429.
            return min(max(exc.retry_after, 0.0), max(self.max_wait, exc.retry_after))
        return self.backoff(state)


async def call_with_retry(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    on_attempt_failed: Callable[[BaseException], None] | None = None,
) -> T:
    """Run `call` until it succeeds, a non-transient error occurs, or attempts run out.

    The error that ends the loop carries `attempts`, so a failed cell can report how hard
    assay tried.
    """
    attempts = 0

    def record(state: RetryCallState) -> None:
        if on_attempt_failed is not None and state.outcome is not None and state.outcome.failed:
            failure = state.outcome.exception()
            if failure is not None:  # a failed outcome holds its exception
                on_attempt_failed(failure)

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.max_attempts),
        wait=_Wait(policy),
        retry=retry_if_exception(_is_transient),
        after=record,
        reraise=True,
    )
    try:
        async for attempt in retrying:
            with attempt:
                attempts = attempt.retry_state.attempt_number
                return await call()
    except ModelError as exc:
        exc.attempts = attempts
        raise
    raise AssertionError("unreachable: tenacity either returns or raises")  # pragma: no cover


def run_config_options(run_config: Any) -> dict[str, Any]:
    """The model options a run configuration (assay's or Ragas' RunConfig) sets: its retry policy,
    when it sets one. Duck-typed, so models need not import the engine."""
    if run_config is None:
        return {}
    policy = getattr(run_config, "retry_policy", None)
    retry = policy() if callable(policy) else None
    if retry is None and isinstance(getattr(run_config, "max_retries", None), int):
        retry = RetryPolicy(max_attempts=max(1, run_config.max_retries))
    return {"retry": retry} if retry is not None else {}


__all__ = ["RetryPolicy", "call_with_retry", "run_config_options"]
