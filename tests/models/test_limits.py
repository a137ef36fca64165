"""Client-side limits measured at the server: RPM, TPM, a concurrency ceiling, and AIMD."""

from __future__ import annotations

import asyncio
import time

import pytest

from assay.models import Limits, RetryPolicy
from tests.models.fake_openai import ok


async def burst(llm, count: int, **params) -> list[str]:
    responses = await asyncio.gather(*(llm.agenerate(f"q{i}", **params) for i in range(count)))
    return [r.text for r in responses]


def tail_rate(times: list[float], last: int) -> float:
    """Requests per second over the last `last` arrivals (well past the bucket's initial burst)."""
    window = times[-last:]
    return (len(window) - 1) / (window[-1] - window[0])


@pytest.mark.parametrize(
    ("limits", "params", "per_second", "capacity"),
    [
        # 300 requests per minute: a full bucket of 300, then 5 per second.
        (Limits(rpm=300), {}, 5.0, 300),
        # 150k tokens per minute at ~500 tokens a request: a bucket of ~300 requests, then ~5 per second.
        (Limits(tpm=150_000), {"max_tokens": 500}, 5.0, 300),
    ],
    ids=["rpm", "tpm"],
)
def test_the_request_rate_stays_within_the_limit(
    server, make_llm, limits, params, per_second, capacity
):
    extra = 14
    created = time.monotonic()
    llm = make_llm(limits=limits)

    texts = asyncio.run(burst(llm, capacity + extra, **params))

    assert len(texts) == capacity + extra
    times = sorted(r.time for r in server.chat_requests)
    assert len(times) == capacity + extra
    # A token bucket admits at most `capacity + rate * t` requests in the first t seconds ...
    assert times[-1] - created >= extra / per_second * 0.95
    # ... at every moment, not just at the end: the k-th arrival needs k requests' worth of
    # bucket plus refill. (A late wake-up on a busy machine may legally be followed by a quick
    # catch-up, so this bound, not the rate between two neighbours, is what the limiter promises.)
    for k, arrival in enumerate(times, start=1):
        assert k <= capacity + per_second * (arrival - created) + 1, f"arrival {k} came too early"
    # ... and, once the initial burst is spent, requests keep arriving at about the refill rate.
    assert tail_rate(times, 6) <= per_second * 2


def test_max_concurrency_is_never_exceeded_at_the_server(server, make_llm):
    server.default = ok("slow", latency=0.1)
    llm = make_llm(limits=Limits(max_concurrency=3, adaptive=False))

    asyncio.run(burst(llm, 15))

    assert server.count == 15
    assert max(r.in_flight for r in server.chat_requests) <= 3
    assert server.max_in_flight == 3  # the ceiling is also reached: the calls did run concurrently


def test_adaptive_concurrency_shrinks_after_429s_and_every_call_still_succeeds(server, make_llm):
    server.default = ok("done", latency=0.05)
    server.capacity = 2  # 429 beyond two requests in flight
    server.capacity_retry_after = 0.02
    llm = make_llm(
        limits=Limits(max_concurrency=8),
        retry=RetryPolicy(max_attempts=20, initial_wait=0.01, max_wait=0.05),
    )

    texts = asyncio.run(burst(llm, 24))

    assert texts == ["done"] * 24
    statuses = [r.status for r in server.chat_requests]
    assert statuses.count(429) >= 1
    assert statuses.count(200) == 24
    assert llm.limiter.concurrency.limit < 8
    assert llm.limiter.concurrency.in_flight == 0


def test_without_adaptation_the_limit_stays_at_the_ceiling(server, make_llm):
    server.default = ok("done", latency=0.05)
    server.capacity = 2
    server.capacity_retry_after = 0.02
    llm = make_llm(
        limits=Limits(max_concurrency=8, adaptive=False),
        retry=RetryPolicy(max_attempts=20, initial_wait=0.01, max_wait=0.05),
    )

    asyncio.run(burst(llm, 12))

    assert [r.status for r in server.chat_requests].count(429) >= 1
    assert llm.limiter.concurrency.limit == 8


def test_adaptive_concurrency_grows_back_after_successes(server, make_llm):
    server.script(*[ok("x", latency=0.05)] * 4)
    server.capacity = 1
    llm = make_llm(
        limits=Limits(max_concurrency=4),
        retry=RetryPolicy(max_attempts=30, initial_wait=0.01, max_wait=0.02),
    )

    async def scenario():
        await burst(llm, 4)
        lowered = llm.limiter.concurrency.limit
        server.capacity = None
        for i in range(10):  # one at a time: never more than one in flight, never a 429
            await llm.agenerate(f"sequential {i}")
        return lowered, llm.limiter.concurrency.limit

    lowered, recovered = asyncio.run(scenario())

    assert lowered < 4
    assert lowered < recovered <= 4
