"""What every user of one endpoint shares, across LLM objects, threads and event loops.

An `Endpoint` holds the rate limiter and the table of calls in flight for one provider endpoint
(provider, model, base URL, credentials) under one set of `Limits`. Two LLM objects built for the
same endpoint get the same `Endpoint`, so they spend one budget: the server's limits do not care
how many Python objects the requests came from. Nothing in it is bound to an event loop; per-loop
things (HTTP connection pools) stay with the providers (`_util/loop_local.py`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import hashlib
import json
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from assay.models.limits import Limits, RateLimiter

if TYPE_CHECKING:
    from assay.models.types import ModelResponse

T = TypeVar("T")


async def wait_for_future(shared: concurrent.futures.Future[T]) -> T:
    """Await a `concurrent.futures.Future` completed on any thread, without cancelling it when
    this waiter is cancelled (others may still be waiting for it)."""
    loop = asyncio.get_running_loop()
    mine: asyncio.Future[T] = loop.create_future()

    def copy(done: concurrent.futures.Future[T]) -> None:
        def settle() -> None:
            if not mine.done():
                mine.set_result(done.result())

        # RuntimeError: this waiter's loop has ended, and nobody is left to tell.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle)

    shared.add_done_callback(copy)
    return await mine


class SharedCalls(Generic[T]):
    """Identical requests in flight at the same time share one call, from whichever thread or
    loop they come. If the call fails, each waiter makes (or joins) a fresh attempt of its own,
    so a failure is never handed to a caller who did not make it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[str, concurrent.futures.Future[T | None]] = {}

    async def run(self, key: str, call: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """The call's result and whether it came from another caller's call."""
        while True:
            with self._lock:
                shared = self._calls.get(key)
                leading = shared is None
                if shared is None:
                    shared = self._calls[key] = concurrent.futures.Future()
            if not leading:
                theirs = await wait_for_future(shared)
                if theirs is not None:
                    return theirs, True
                continue  # that attempt failed: join a newer one or lead our own
            result: T | None = None
            try:
                result = await call()
                return result, False
            finally:
                with self._lock:
                    if self._calls.get(key) is shared:
                        del self._calls[key]
                shared.set_result(result)

    def __len__(self) -> int:
        with self._lock:
            return len(self._calls)


class Endpoint:
    """The shared state of one endpoint under one set of limits."""

    def __init__(self, key: str, limits: Limits) -> None:
        self.key = key
        self.limiter = RateLimiter(limits)
        self.calls: SharedCalls[ModelResponse] = SharedCalls()


# Answers already given during the current run, by request key. Two metrics that send the same
# request (the same claim split, say) get one call even when the second asks after the first has
# finished and no persistent cache is configured.
_RUN_ANSWERS: contextvars.ContextVar[dict[str, ModelResponse] | None] = contextvars.ContextVar(
    "assay_run_answers", default=None
)


@contextmanager
def sharing_answers() -> Iterator[dict[str, ModelResponse]]:
    """Within the block (one evaluation run), an identical request is answered once."""
    answers: dict[str, ModelResponse] = {}
    token = _RUN_ANSWERS.set(answers)
    try:
        yield answers
    finally:
        _RUN_ANSWERS.reset(token)


def run_answers() -> dict[str, ModelResponse] | None:
    """The current run's answers, or None outside a run."""
    return _RUN_ANSWERS.get()


_ENDPOINTS: weakref.WeakValueDictionary[str, Endpoint] = weakref.WeakValueDictionary()
_LOCK = threading.Lock()


def credential_fingerprint(secret: str | None) -> str | None:
    """Tells two API keys apart (they have separate quotas) without keeping either."""
    if not secret:
        return None
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()[:16]


def shared_endpoint(address: dict[str, Any], limits: Limits) -> Endpoint:
    """The one `Endpoint` for this address and these limits, made on first use and kept while any
    model object refers to it."""
    key = json.dumps({"address": address, "limits": asdict(limits)}, sort_keys=True, default=str)
    with _LOCK:
        endpoint = _ENDPOINTS.get(key)
        if endpoint is None:
            endpoint = _ENDPOINTS[key] = Endpoint(key, limits)
        return endpoint


__all__ = [
    "Endpoint",
    "SharedCalls",
    "credential_fingerprint",
    "run_answers",
    "shared_endpoint",
    "sharing_answers",
    "wait_for_future",
]
