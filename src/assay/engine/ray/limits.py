"""One rate limiter per endpoint for a whole Ray run, leased to the workers in chunks.

The limiter is the model layer's own `RateLimiter` (RPM and TPM token buckets, AIMD concurrency),
living in one small async actor per endpoint (`EndpointLimiter`, no CPU). Each worker's endpoint
gets a `LeasedRateLimiter` with the same two methods the LLM calls, `acquire` and `release`:

- `acquire` takes a permit the worker already holds, else joins the one lease request the worker
  has out. A lease asks for as many permits as calls are waiting (at most `lease_size`): the actor
  waits for the first and adds those it can give at once, so a limit of 3 is never held hostage by
  a request for 16, and a busy worker pays one actor call per chunk, not per request.
- A limiter with room to spare (no RPM or TPM bucket, under half its concurrency limit in use)
  also hands out the rest of the `lease_size` chunk in advance: a worker whose calls end one by
  one would otherwise ask for one permit per call, and every worker's actor calls go to the one
  limiter. Spares unused for 50 ms go back. A bucket's units are never taken in advance (a spare
  given back cannot refund them), and a limit in use beyond half is leased only as needed.
- `release` records how the call went (rate limited or not, latency). Results are sent back in
  batches, with the next lease or within 50 ms (within 0.5 s while the limiter said it has room
  to spare, as no one waits for those permits); a 429 is sent at once. The actor releases each
  one through the AIMD logic, so a 429 seen by any worker shrinks the limit every worker leases
  from.

All of a worker limiter's state lives on the loop that first used it (the actor's loop); a call
from another loop is forwarded there.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from dataclasses import dataclass
from typing import Any

from assay.models.limits import Limits, RateLimiter

# How long finished calls may wait to be reported when no lease is going out anyway, and how long
# spare permits may lie unused before they go back.
_REPORT_DELAY = 0.05
# The same wait while the limiter has room to spare: nobody waits for the permits those calls hold.
_ROOMY_REPORT_DELAY = 0.5


class EndpointLimiter:
    """The body of the limiter actor: the endpoint's `RateLimiter`, for every worker of the run."""

    def __init__(self, limits: Limits) -> None:
        self.limiter = RateLimiter(limits)
        self.leases = 0
        self.permits = 0
        self.rate_limited = 0

    async def lease(
        self,
        want: int,
        tokens_each: int,
        finished: list[tuple[bool, float | None]],
        ahead: int = 0,
    ) -> tuple[int, bool]:
        """Report `finished` calls, then grant 1 to `want` permits (waits for the first only),
        plus up to `ahead` in advance while the limiter has room to spare. Returns the permits
        granted and whether it still has room to spare."""
        self.finished(finished)
        await self.limiter.acquire(tokens_each)
        granted = 1
        while granted < want and await self._take_now(tokens_each):
            granted += 1
        while granted < want + ahead and self.roomy() and await self._take_now(tokens_each):
            granted += 1
        self.leases += 1
        self.permits += granted
        return granted, self.roomy()

    def roomy(self) -> bool:
        """No bucket to draw from in advance, and less than half the concurrency limit in use."""
        limiter = self.limiter
        concurrency = limiter.concurrency
        return (
            limiter.requests is None
            and limiter.tokens is None
            and concurrency.in_flight < concurrency.limit // 2
        )

    async def _take_now(self, tokens_each: int) -> bool:
        """One more permit if it is free right now; never waits for one."""
        limiter = self.limiter
        if limiter.concurrency.in_flight >= limiter.concurrency.limit:
            return False
        # Only when the buckets already hold enough (their last known level; a refill since can
        # only add): a take that had to wait would be cancelled, and a cancelled acquire hands
        # its slot back as if a call had ended, which the AIMD logic would count as a success.
        for bucket, amount in ((limiter.requests, 1), (limiter.tokens, tokens_each)):
            if bucket is not None and bucket.level < min(amount, bucket.capacity):
                return False
        attempt = asyncio.ensure_future(self.limiter.acquire(tokens_each))
        for _ in range(4):  # acquiring a free permit takes a couple of loop turns
            await asyncio.sleep(0)
            if attempt.done():
                break
        if not attempt.done():
            attempt.cancel()  # the limiter's own cancellation path hands the place back
        try:
            await attempt
        except asyncio.CancelledError:
            return False
        return True

    def finished(self, results: list[tuple[bool, float | None]]) -> None:
        """Calls that ended: free their permits and steer the limit (AIMD)."""
        for rate_limited, latency in results:
            self.rate_limited += bool(rate_limited)
            self.limiter.release(rate_limited=bool(rate_limited), latency=latency)

    def give_back(self, count: int) -> None:
        """Permits a worker leased and did not use."""
        for _ in range(count):
            self.limiter.release()

    def state(self) -> dict[str, Any]:
        concurrency = self.limiter.concurrency
        return {
            "limit": concurrency.limit,
            "in_flight": concurrency.in_flight,
            "peak_limit": concurrency.peak_limit,
            "rate_limited_seen": concurrency.rate_limited_seen,
            "rate_limited": self.rate_limited,
            "leases": self.leases,
            "permits": self.permits,
        }


@dataclass(frozen=True)
class _Ceiling:
    """What the engine reads of a limiter's concurrency: its ceiling."""

    ceiling: int


class LeasedRateLimiter:
    """A worker's view of the endpoint's global limiter (same interface as `RateLimiter`)."""

    def __init__(self, handle: Any, limits: Limits, *, lease_size: int = 16) -> None:
        self.limits = limits
        self.concurrency = _Ceiling(limits.max_concurrency)
        self._handle = handle
        self._lease_size = max(1, lease_size)
        self._home: asyncio.AbstractEventLoop | None = None
        self._spare = 0  # permits held and not in use
        self._waiting: collections.deque[tuple[asyncio.Future[None], int]] = collections.deque()
        self._leasing: asyncio.Task[None] | None = None
        self._results: list[tuple[bool, float | None]] = []
        self._report_timer: asyncio.TimerHandle | None = None
        self._roomy = False  # what the limiter said with its last lease
        self._spare_used = 0.0  # when a spare permit was last taken (loop time)
        self._spare_timer: asyncio.TimerHandle | None = None

    # -- the interface the LLM uses -------------------------------------------------------
    async def acquire(self, estimated_tokens: int) -> None:
        loop = asyncio.get_running_loop()
        if self._home is None or self._home.is_closed():
            self._home = loop
        if loop is self._home:
            await self._acquire(estimated_tokens)
        else:
            await asyncio.wrap_future(
                asyncio.run_coroutine_threadsafe(self._acquire(estimated_tokens), self._home)
            )

    def release(
        self, *, rate_limited: bool = False, latency: float | None = None, held: None = None
    ) -> None:
        # `held` is always None: a leased limiter cannot hold a slot (see `LLM.consecutive`).
        home = self._home
        if home is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is home:
            self._finished(rate_limited, latency)
        else:
            with contextlib.suppress(RuntimeError):  # the home loop has ended: nothing to report to
                home.call_soon_threadsafe(self._finished, rate_limited, latency)

    # -- on the home loop ----------------------------------------------------------------
    async def _acquire(self, tokens: int) -> None:
        if self._spare and not self._waiting:
            self._spare -= 1
            self._spare_used = asyncio.get_running_loop().time()
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (future, tokens)
        self._waiting.append(entry)
        if self._leasing is None or self._leasing.done():
            self._leasing = asyncio.ensure_future(self._lease())
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._keep_spare(1)  # granted just as it was cancelled: keep the permit
            else:
                with contextlib.suppress(ValueError):
                    self._waiting.remove(entry)
            raise

    async def _lease(self) -> None:
        while self._waiting:
            batch = list(self._waiting)[: self._lease_size]
            tokens_each = max(tokens for _, tokens in batch)
            finished, self._results = self._results, []
            ahead = self._lease_size - len(batch)
            try:
                granted, self._roomy = await self._handle.lease.remote(
                    len(batch), tokens_each, finished, ahead
                )
            except Exception as exc:  # the limiter actor is gone: the calls waiting fail, typed
                while self._waiting:
                    future, _ = self._waiting.popleft()
                    if not future.done():
                        future.set_exception(exc)
                return
            for _ in range(granted):
                self._grant_one()

    def _grant_one(self) -> None:
        while self._waiting:
            future, _ = self._waiting.popleft()
            if not future.done():
                future.set_result(None)
                return
        self._keep_spare(1)

    def _keep_spare(self, count: int) -> None:
        self._spare += count
        if self._spare_timer is None:
            loop = asyncio.get_running_loop()
            self._spare_used = loop.time()
            self._spare_timer = loop.call_later(_REPORT_DELAY, self._return_spares)

    def _return_spares(self) -> None:
        """Give back the spares once none has been taken for `_REPORT_DELAY`."""
        self._spare_timer = None
        if not self._spare:
            return
        loop = asyncio.get_running_loop()
        idle = loop.time() - self._spare_used
        if self._waiting or idle < _REPORT_DELAY:  # in use: look again later
            self._spare_timer = loop.call_later(
                max(_REPORT_DELAY - idle, _REPORT_DELAY / 5), self._return_spares
            )
            return
        count, self._spare = self._spare, 0
        self._handle.give_back.remote(count)

    def _finished(self, rate_limited: bool, latency: float | None) -> None:
        self._results.append((rate_limited, latency))
        if rate_limited or len(self._results) >= self._lease_size:
            self._report()
        elif self._report_timer is None:
            delay = _ROOMY_REPORT_DELAY if self._roomy else _REPORT_DELAY
            self._report_timer = asyncio.get_running_loop().call_later(delay, self._report)

    def _report(self) -> None:
        if self._report_timer is not None:
            self._report_timer.cancel()
            self._report_timer = None
        if self._results:
            results, self._results = self._results, []
            self._handle.finished.remote(results)


__all__ = ["EndpointLimiter", "LeasedRateLimiter"]
