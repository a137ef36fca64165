"""One limiter per endpoint for the whole run: what one worker learns (a 429) every worker obeys,
and requests per minute are counted across workers."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from assay import evaluate
from assay.engine.ray.executor import RayExecutor
from assay.engine.ray.limits import EndpointLimiter, LeasedRateLimiter
from assay.metrics.general.aspect_critic import AspectCritic
from assay.models import llm_factory
from assay.models.limits import Limits
from tests.engine.ray.conftest import FAST_RETRY

pytestmark = pytest.mark.ray


class Holder:
    """A stand-in worker: takes permits from its leased limiter and hands them back."""

    def __init__(self, limiter: Any, limits: Limits) -> None:
        self.limiter = LeasedRateLimiter(limiter, limits, lease_size=16)

    async def hold(self, count: int, within: float) -> int:
        """Ask for `count` permits at once; keep those granted within `within` seconds."""
        asks = [asyncio.ensure_future(self.limiter.acquire(10)) for _ in range(count)]
        done, waiting = await asyncio.wait(asks, timeout=within)
        for ask in waiting:
            ask.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)
        return len(done)

    async def finish(self, count: int, rate_limited: bool) -> None:
        for _ in range(count):
            self.limiter.release(rate_limited=rate_limited, latency=0.01)
        await asyncio.sleep(0.2)  # a 429 is reported at once, other results within 50 ms


def start(ray: Any, limits: Limits) -> tuple[Any, Any, Any]:
    limiter = ray.remote(EndpointLimiter).options(num_cpus=0).remote(limits)
    holder = ray.remote(Holder).options(num_cpus=0)
    return limiter, holder.remote(limiter, limits), holder.remote(limiter, limits)


def test_a_429_seen_by_one_worker_shrinks_what_every_worker_gets(ray_cluster):
    ray = ray_cluster
    limiter, first, second = start(ray, Limits(max_concurrency=16, initial_concurrency=16))
    assert ray.get(first.hold.remote(8, 2.0)) == 8
    assert ray.get(second.hold.remote(2, 2.0)) == 2
    assert ray.get(second.hold.remote(4, 2.0)) == 4  # room for 16 in all
    ray.get(second.finish.remote(4, False))

    ray.get(first.finish.remote(8, True))  # the first worker's 8 calls all got 429s

    state = ray.get(limiter.state.remote())
    assert state["rate_limited_seen"] and state["rate_limited"] == 8
    assert state["limit"] == 2 and state["in_flight"] == 2  # the load the server still accepted
    assert ray.get(second.hold.remote(4, 0.5)) == 0  # the other worker is held to it too
    ray.kill(limiter)


def test_requests_per_minute_are_one_budget_for_all_workers(ray_cluster):
    ray = ray_cluster
    # A full bucket of 60, then 1 a second; no concurrency limit to speak of.
    limiter, first, second = start(ray, Limits(rpm=60, adaptive=False))
    started = time.monotonic()
    assert ray.get(first.hold.remote(30, 2.0)) == 30
    assert ray.get(second.hold.remote(30, 2.0)) == 30
    # The bucket both drew from is empty: of 10 more asked at once, only what refilled at 1 a
    # second since the start can come (one or two on a loaded host; 10 from a bucket of its own)
    extra = ray.get(second.hold.remote(10, 0.4))
    assert extra <= int(time.monotonic() - started) + 1 and extra < 10
    assert ray.get(first.hold.remote(1, 3.0)) == 1  # and refills at 1 a second
    state = ray.get(limiter.state.remote())
    # A permit of the ask given up at 0.4 s may still be granted, and is then given back.
    assert 61 + extra <= state["permits"] <= 62 + extra
    assert state["leases"] <= 10  # permits go out in chunks, not one actor call each
    ray.kill(limiter)


class OneByOne(Holder):
    """A worker whose calls end one at a time, each followed by the next."""

    async def one_after_another(self, count: int) -> int:
        for _ in range(count):
            await self.limiter.acquire(10)
            self.limiter.release(latency=0.01)
        await asyncio.sleep(0.7)  # spares go back after 50 ms unused, results within 0.5 s
        return count


def test_a_limiter_with_room_leases_ahead_and_a_tight_one_does_not(ray_cluster):
    ray = ray_cluster
    roomy = ray.remote(EndpointLimiter).options(num_cpus=0).remote(Limits(max_concurrency=256))
    worker = ray.remote(OneByOne).options(num_cpus=0).remote(roomy, Limits(max_concurrency=256))
    assert ray.get(worker.one_after_another.remote(64)) == 64
    state = ray.get(roomy.state.remote())
    assert state["leases"] <= 8  # one actor call per chunk of 16, not one per call
    assert state["in_flight"] == 0  # the spares left over went back

    tight = Limits(max_concurrency=2, adaptive=False)
    limiter = ray.remote(EndpointLimiter).options(num_cpus=0).remote(tight)
    first = ray.remote(OneByOne).options(num_cpus=0).remote(limiter, tight)
    second = ray.remote(Holder).options(num_cpus=0).remote(limiter, tight)
    assert ray.get(first.one_after_another.remote(8)) == 8
    assert ray.get(limiter.state.remote())["permits"] == 8  # nothing taken in advance
    assert ray.get(second.hold.remote(2, 2.0)) == 2  # so the other worker gets the whole limit
    for actor in (roomy, worker, limiter, first, second):
        ray.kill(actor)


def test_a_429_storm_brings_the_whole_run_to_what_the_server_accepts(ray_cluster, server, tmp_path):
    from tests.models.fake_openai import ok

    server.default = ok("yes", latency=0.05)
    server.capacity = 4  # a 429 for every request beyond 4 in flight
    server.capacity_retry_after = 0.05
    judge = llm_factory(
        server.model_string(),
        cache=False,
        retry=FAST_RETRY,
        limits=Limits(max_concurrency=64, initial_concurrency=16),
    )
    rows = [{"user_input": f"q{n}", "response": f"a{n}"} for n in range(120)]
    executor = RayExecutor(num_workers=2, max_in_flight=16, output=tmp_path / "out")
    result = evaluate(
        rows,
        [AspectCritic(name="critic", definition="anything")],
        llm=judge,
        executor=executor,
        show_progress=False,
    )

    assert all(row["critic"].status == "ok" for row in result.outcomes)
    (state,) = executor.last_run.limiters.values()
    assert state["rate_limited_seen"] and state["rate_limited"] > 0
    assert state["limit"] <= 5  # from 16, down to about the server's capacity
    statuses = [request.status for request in server.chat_requests]
    later = statuses[len(statuses) // 2 :]
    assert later.count(200) >= 0.85 * len(later)  # once learnt, rarely over the limit
