"""Client-side rate limits: request and token budgets per minute, and adaptive concurrency.

Each LLM object owns one `RateLimiter`. Before a call it waits for a slot (concurrency),
a request token (RPM) and enough token budget (TPM). After a 429 the concurrency limit drops
to the number of requests the server still holds; after a long run of successes it grows by
one, never above the ceiling.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import anyio


@dataclass(frozen=True)
class Limits:
    """rpm / tpm: requests and tokens per minute (None = unlimited); max_concurrency: ceiling
    of calls in flight; adaptive: shrink on 429 and grow back on success."""

    rpm: float | None = None
    tpm: float | None = None
    max_concurrency: int = 16
    adaptive: bool = True

    def __post_init__(self) -> None:
        if self.max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")


class TokenBucket:
    """Holds up to `capacity` units and refills at `rate` units per second."""

    def __init__(self, per_minute: float, *, clock=time.monotonic) -> None:
        self.capacity = per_minute
        self.rate = per_minute / 60.0
        self.level = per_minute
        self._clock = clock
        self._stamp = clock()
        self._lock = anyio.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self.level = min(self.capacity, self.level + (now - self._stamp) * self.rate)
        self._stamp = now

    async def take(self, amount: float) -> None:
        # A single request larger than the whole bucket still goes through once the bucket is full.
        amount = min(amount, self.capacity)
        async with self._lock:
            while True:
                self._refill()
                if self.level >= amount:
                    self.level -= amount
                    return
                await anyio.sleep((amount - self.level) / self.rate)


class AdaptiveConcurrency:
    """A semaphore whose size moves: down to the accepted load on a rate-limit error, +1 after a
    run of 8 x limit successes."""

    def __init__(self, ceiling: int, *, adaptive: bool = True) -> None:
        self.ceiling = ceiling
        self.limit = ceiling
        self.adaptive = adaptive
        self.in_flight = 0
        self._successes = 0
        self._changed = anyio.Condition()

    async def acquire(self) -> None:
        async with self._changed:
            while self.in_flight >= self.limit:
                await self._changed.wait()
            self.in_flight += 1

    async def release(self, *, rate_limited: bool) -> None:
        # Shielded: a cell cancelled by its timeout must still give its slot back.
        with anyio.CancelScope(shield=True):
            await self._release(rate_limited=rate_limited)

    async def _release(self, *, rate_limited: bool) -> None:
        async with self._changed:
            self.in_flight -= 1
            if self.adaptive:
                if rate_limited:
                    # The requests still in flight are ones the server accepted: that is roughly
                    # its capacity. Shrinking to it (not halving on every 429 of a burst) avoids
                    # collapsing to 1 when several rejections arrive at once.
                    self.limit = max(1, min(self.limit - 1, self.in_flight))
                    self._successes = 0
                else:
                    self._successes += 1
                    # Probe one step higher only after a sustained run of successes.
                    if self._successes >= 8 * self.limit and self.limit < self.ceiling:
                        self.limit += 1
                        self._successes = 0
            self._changed.notify_all()


class RateLimiter:
    """All client-side limits for one provider + model."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.concurrency = AdaptiveConcurrency(limits.max_concurrency, adaptive=limits.adaptive)
        self.requests = TokenBucket(limits.rpm) if limits.rpm else None
        self.tokens = TokenBucket(limits.tpm) if limits.tpm else None

    async def acquire(self, estimated_tokens: int) -> None:
        await self.concurrency.acquire()
        try:
            if self.requests is not None:
                await self.requests.take(1)
            if self.tokens is not None:
                await self.tokens.take(estimated_tokens)
        except BaseException:
            await self.concurrency.release(rate_limited=False)
            raise

    async def release(self, *, rate_limited: bool) -> None:
        await self.concurrency.release(rate_limited=rate_limited)


__all__ = ["AdaptiveConcurrency", "Limits", "RateLimiter", "TokenBucket"]
