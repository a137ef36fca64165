"""Client-side rate limits: request and token budgets per minute, and adaptive concurrency.

One `RateLimiter` serves one endpoint, however many LLM objects, threads and event loops use it
(`endpoint.py` hands out the shared instance). So its state is guarded by a `threading.Lock`,
never by a loop-bound primitive, and a waiter is an asyncio future of *its own* loop, woken with
`call_soon_threadsafe`: a call on one loop can free a slot for a call waiting on another.

Concurrency is AIMD. It starts at `initial_concurrency` and, while no 429 has been seen and
latency does not climb, grows by one for every success that found the limit full (doubling per
round trip, like TCP's slow start) up to `max_concurrency`. A 429 cuts it to the number of
requests the server still accepts; from then on it probes upwards only slowly (+1 after 8 x limit
successes), since every probe past the server's capacity costs a rejected request.

`RateLimiter.hold()` keeps one slot for a run of consecutive calls (e.g. one verdict call per
statement over the same source). Without it, every call of the run queues behind the calls of
other rows, so on a llama.cpp server with few slots another row's prompt overwrites the slot
between two calls of the run and the shared prefix is read again (measured on the embedded
judge with four WikiEval rows scored at once: twice the seconds per row; llama.cpp's host-memory
prompt cache wins much of that back on longer runs). The calls inside a hold take turns on its
slot and still pay the request and token budgets.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import MappingProxyType

# Latency may rise this much over the fastest answer seen before growth stops (plus a small
# absolute slack, so that millisecond jitter on a fast endpoint does not count as congestion).
_LATENCY_RATIO = 2.0
_LATENCY_SLACK = 0.05


@dataclass(frozen=True)
class Limits:
    """rpm / tpm: requests and tokens per minute (None = unlimited).
    max_concurrency: ceiling of calls in flight. adaptive: start at `initial_concurrency`, grow
    while the endpoint keeps up, shrink on 429; with adaptive=False the limit is the ceiling."""

    rpm: float | None = None
    tpm: float | None = None
    max_concurrency: int = 256
    adaptive: bool = True
    initial_concurrency: int = 16

    def __post_init__(self) -> None:
        if self.max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if self.initial_concurrency < 1:
            raise ValueError("initial_concurrency must be at least 1")
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be positive, got {value}")


def _wake(
    loop: asyncio.AbstractEventLoop, future: asyncio.Future[None], on_lost: Callable[[], None]
) -> bool:
    """Resolve `future` on its own loop. False when that loop is gone (the grant is then void)."""

    def deliver() -> None:
        if future.done():  # cancelled while the grant was on its way: hand it back
            on_lost()
        else:
            future.set_result(None)

    try:
        loop.call_soon_threadsafe(deliver)
    except RuntimeError:  # the loop is closed
        return False
    return True


class TokenBucket:
    """Holds up to `capacity` units and refills at `rate` units per second. Thread-safe.

    Each taker reserves its amount at once (the level may go below zero) and sleeps until the
    refill covers it, so takers are served in arrival order and no lock is held while sleeping.
    """

    def __init__(self, per_minute: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = per_minute
        self.rate = per_minute / 60.0
        self.level = per_minute
        self._clock = clock
        self._stamp = clock()
        self._lock = threading.Lock()

    def _reserve(self, amount: float) -> float:
        with self._lock:
            now = self._clock()
            self.level = min(self.capacity, self.level + (now - self._stamp) * self.rate)
            self._stamp = now
            self.level -= amount
            return max(0.0, -self.level / self.rate)

    def _refund(self, amount: float) -> None:
        with self._lock:
            self.level = min(self.capacity, self.level + amount)

    async def take(self, amount: float) -> None:
        # A single request larger than the whole bucket still goes through once the bucket is full.
        amount = min(amount, self.capacity)
        wait = self._reserve(amount)
        if wait <= 0:
            return
        try:
            await asyncio.sleep(wait)
        except BaseException:
            self._refund(amount)  # cancelled before its turn: the units were never used
            raise


class AdaptiveConcurrency:
    """A semaphore shared across threads and loops whose size moves (AIMD, see the module)."""

    def __init__(self, ceiling: int, *, adaptive: bool = True, initial: int | None = None) -> None:
        self.ceiling = ceiling
        self.adaptive = adaptive
        self.limit = min(initial or ceiling, ceiling) if adaptive else ceiling
        self.in_flight = 0
        self.peak_limit = self.limit
        self.rate_limited_seen = False
        self._successes = 0
        self._fastest: float | None = None  # the quickest answer seen, seconds
        self._recent: float | None = None  # moving average of recent latencies
        self._lock = threading.Lock()
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()

    async def acquire(self) -> None:
        # Always a scheduling point, as acquiring an async lock is: a call that needs no waiting
        # still lets the tasks started beside it run (and join it when they ask the same thing).
        await asyncio.sleep(0)
        with self._lock:
            if self.in_flight < self.limit and not self._waiters:
                self.in_flight += 1
                return
            loop = asyncio.get_running_loop()
            future: asyncio.Future[None] = loop.create_future()
            entry = (loop, future)
            self._waiters.append(entry)
        try:
            await future
        except BaseException:
            with self._lock:
                try:
                    self._waiters.remove(entry)
                    holding = False
                except ValueError:  # already granted a slot
                    holding = not future.cancelled()  # a cancelled grant is handed back on delivery
            if holding:
                self.give_back()
            raise

    def release(self, *, rate_limited: bool = False, latency: float | None = None) -> None:
        """Give a slot back; `rate_limited` and `latency` steer the limit."""
        with self._lock:
            saturated = self._saturated_locked()
            self.in_flight -= 1  # before adapting: a 429 shrinks to the load still accepted
            self._adapt_locked(rate_limited, latency, saturated)
            self._grant_locked()

    def observe(self, *, rate_limited: bool = False, latency: float | None = None) -> None:
        """Steer the limit by a call that ran on a held slot (it frees no slot of its own)."""
        with self._lock:
            self._adapt_locked(rate_limited, latency, self._saturated_locked())
            self._grant_locked()  # a 429 may lower the limit, growth may make room

    def _saturated_locked(self) -> bool:
        return self.in_flight >= self.limit or bool(self._waiters)

    def _adapt_locked(self, rate_limited: bool, latency: float | None, saturated: bool) -> None:
        if not self.adaptive:
            return
        if rate_limited:
            self._shrink()
        else:
            self._grow(saturated, latency)

    def give_back(self) -> None:
        """Return a slot unused: nothing was learnt about the endpoint."""
        with self._lock:
            self.in_flight -= 1
            self._grant_locked()

    def _shrink(self) -> None:
        # The requests still in flight are ones the server accepted: that is roughly its capacity.
        # Shrinking to it (not halving on every 429 of a burst) avoids collapsing to 1 when several
        # rejections arrive at once.
        self.limit = max(1, min(self.limit - 1, self.in_flight))
        self.rate_limited_seen = True
        self._successes = 0

    def _grow(self, saturated: bool, latency: float | None) -> None:
        if latency is not None:
            self._fastest = latency if self._fastest is None else min(self._fastest, latency)
            self._recent = latency if self._recent is None else 0.8 * self._recent + 0.2 * latency
        if not saturated or self.limit >= self.ceiling:
            return  # a limit nobody is waiting for needs no raising
        if not self.rate_limited_seen:
            congested = (
                self._recent is not None
                and self._fastest is not None
                and self._recent > _LATENCY_RATIO * self._fastest + _LATENCY_SLACK
            )
            if not congested:
                self.limit += 1
        else:
            self._successes += 1
            if self._successes >= 8 * self.limit:
                self.limit += 1
                self._successes = 0
        self.peak_limit = max(self.peak_limit, self.limit)

    def _grant_locked(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            loop, future = self._waiters.popleft()
            self.in_flight += 1
            if not _wake(loop, future, self.give_back):
                self.in_flight -= 1


class HeldSlot:
    """One slot of an endpoint kept by a `RateLimiter.hold()` block: its calls take turns on it.
    The slot is taken by the block's first call that reaches the limiter, so a block whose
    answers all come from the cache never waits for one."""

    def __init__(self) -> None:
        self.turns = AdaptiveConcurrency(1, adaptive=False)
        self.taken = False
        self.open = True


# The slots the current task holds, by limiter. A context variable, so a hold covers the calls made
# inside its block (and tasks started there) and nothing else.
_HELD: ContextVar[Mapping[RateLimiter, HeldSlot]] = ContextVar(
    "assay_held_slots", default=MappingProxyType({})
)


class RateLimiter:
    """All client-side limits for one endpoint."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.concurrency = AdaptiveConcurrency(
            limits.max_concurrency, adaptive=limits.adaptive, initial=limits.initial_concurrency
        )
        self.requests = TokenBucket(limits.rpm) if limits.rpm else None
        self.tokens = TokenBucket(limits.tpm) if limits.tpm else None

    async def acquire(self, estimated_tokens: int) -> HeldSlot | None:
        """Wait for a slot and the budgets. Returns the held slot the call runs on (inside a
        `hold()` block), else None; hand it to `release`."""
        held = _HELD.get().get(self)
        held = held if held is not None and held.open else None
        gate = self.concurrency if held is None else held.turns
        await gate.acquire()
        if held is not None and not held.taken:
            try:
                await self.concurrency.acquire()
            except BaseException:
                gate.give_back()
                raise
            held.taken = True
        try:
            if self.requests is not None:
                await self.requests.take(1)
            if self.tokens is not None:
                await self.tokens.take(estimated_tokens)
        except BaseException:
            gate.give_back()  # never used: no success or failure to learn from
            raise
        return held

    def release(
        self,
        *,
        rate_limited: bool = False,
        latency: float | None = None,
        held: HeldSlot | None = None,
    ) -> None:
        """End a call; `held` is what `acquire` returned."""
        if held is None:
            self.concurrency.release(rate_limited=rate_limited, latency=latency)
        else:
            held.turns.release()
            self.concurrency.observe(rate_limited=rate_limited, latency=latency)

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Keep one slot of this endpoint for the calls made inside the block, one at a time
        (see the module's docstring). Nested holds of one limiter share the outer slot."""
        current = _HELD.get()
        if self in current and current[self].open:
            yield
            return
        held = HeldSlot()
        token = _HELD.set(MappingProxyType({**current, self: held}))
        try:
            yield
        finally:
            _HELD.reset(token)
            held.open = False  # a task started inside that lives on queues normally from now on
            if held.taken:
                self.concurrency.give_back()


__all__ = ["AdaptiveConcurrency", "HeldSlot", "Limits", "RateLimiter", "TokenBucket"]
