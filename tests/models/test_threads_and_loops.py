"""One model object used from many threads and event loops at once: no deadlock, no "bound to a
different event loop", one budget per endpoint. Every wait is bounded, so a deadlock fails the
test instead of hanging the suite."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_all

import openai
import pytest

from assay import evaluate
from assay.models import Limits, llm_factory
from assay.models.limits import AdaptiveConcurrency
from tests.models.fake_openai import dynamic, ok
from tests.models.judge import JudgeMetric, rows, verdict

DEADLINE = 30  # seconds any group of threads may take; they need well under one


def in_threads(count: int, work) -> list:
    """Run work(i) in `count` threads; fail (not hang) if any is still running at the deadline."""
    with ThreadPoolExecutor(count) as pool:
        futures = [pool.submit(work, i) for i in range(count)]
        _, pending = wait_all(futures, timeout=DEADLINE)
        assert not pending, f"{len(pending)} of {count} threads still blocked after {DEADLINE} s"
        return [future.result() for future in futures]


@pytest.mark.timeout(90)
@pytest.mark.parametrize(
    "shape", ["factory", "factory_limited", "caller_async_client", "caller_sync_client"]
)
def test_one_llm_shared_by_four_threads_answers_every_call(server, make_llm, shape):
    server.default = ok("fine", latency=0.02)
    if shape == "factory":
        llm = make_llm()
    elif shape == "factory_limited":
        llm = make_llm(limits=Limits(max_concurrency=2, rpm=6000, tpm=10_000_000))
    elif shape == "caller_async_client":
        llm = llm_factory(
            "test-model", client=openai.AsyncOpenAI(base_url=server.url, api_key="k"), cache=False
        )
    else:
        llm = llm_factory(
            "test-model", client=openai.OpenAI(base_url=server.url, api_key="k"), cache=False
        )

    def work(thread: int) -> list[str]:
        return [llm.generate(f"thread {thread} call {call}").text for call in range(6)]

    answers = in_threads(4, work)

    assert answers == [["fine"] * 6] * 4
    assert server.count == 24
    assert llm.limiter.concurrency.in_flight == 0


@pytest.mark.timeout(60)
def test_identical_requests_from_two_threads_share_one_call(server, make_llm):
    server.default = ok("shared", latency=0.5)
    llm = make_llm()
    barrier = threading.Barrier(2)

    def work(_: int) -> str:
        barrier.wait()
        return llm.generate("the very same question").text

    assert in_threads(2, work) == ["shared", "shared"]
    assert server.count == 1  # the second thread joined the first one's call, on another loop
    assert llm.usage.usage.requests == 1 and llm.usage.usage.cached_requests == 1


@pytest.mark.timeout(60)
def test_a_callers_async_client_survives_evaluate_after_evaluate_and_stays_usable(server):
    server.default = dynamic(lambda request: ok(verdict(0.5, "ok")))
    client = openai.AsyncOpenAI(base_url=server.url, api_key="k")
    llm = llm_factory("test-model", client=client, cache=False)

    results = [evaluate(rows(8), [JudgeMetric()], llm=llm, show_progress=False) for _ in range(3)]

    for result in results:
        assert result.summary("judge").n_ok == 8, [result.outcome(r, "judge") for r in range(8)]

    async def the_callers_own_use():
        reply = await client.chat.completions.create(
            model="test-model", messages=[{"role": "user", "content": "hi"}]
        )
        return reply.choices[0].message.content

    # assay's temporary loops used copies of it: the caller's client is not tied to a dead loop
    assert asyncio.run(the_callers_own_use()) is not None


@pytest.mark.timeout(60)
def test_two_llm_objects_for_one_endpoint_share_one_concurrency_budget(server, make_llm):
    server.default = ok("x", latency=0.1)
    first = make_llm(limits=Limits(max_concurrency=3, adaptive=False))
    second = make_llm(limits=Limits(max_concurrency=3, adaptive=False))
    assert first.limiter is second.limiter

    def work(thread: int) -> int:
        llm = first if thread % 2 else second
        return sum(1 for call in range(5) if llm.generate(f"{thread}-{call}").text == "x")

    assert in_threads(6, work) == [5] * 6
    assert (
        server.max_in_flight == 3
    )  # six threads on six loops, never more than three at the server
    other_limits = make_llm(limits=Limits(max_concurrency=5, adaptive=False))
    assert other_limits.limiter is not first.limiter  # different limits: a budget of its own


@pytest.mark.timeout(60)
def test_evaluations_in_several_threads_share_an_llm_and_lose_no_cell(server, make_llm):
    server.default = dynamic(lambda request: ok(verdict(0.25, "r"), latency=0.01))
    llm = make_llm(limits=Limits(max_concurrency=4))

    def work(_: int):
        return evaluate(rows(12), [JudgeMetric()], llm=llm, show_progress=False)

    for result in in_threads(4, work):
        assert result.summary("judge").n_ok == 12
    assert llm.limiter.concurrency.in_flight == 0


@pytest.mark.timeout(30)
def test_waiters_cancelled_on_one_loop_give_their_turn_to_waiters_on_another():
    gate = AdaptiveConcurrency(1, adaptive=False)
    held = threading.Event()
    release = threading.Event()
    got_in: list[str] = []

    def holder() -> None:
        async def hold():
            await gate.acquire()
            held.set()
            await asyncio.get_running_loop().run_in_executor(None, release.wait, DEADLINE)
            gate.release()

        asyncio.run(hold())

    def impatient() -> None:
        async def give_up():
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(gate.acquire(), timeout=0.2)

        asyncio.run(give_up())

    def patient() -> None:
        async def wait_turn():
            await asyncio.wait_for(gate.acquire(), timeout=DEADLINE)
            got_in.append("patient")
            gate.release()

        asyncio.run(wait_turn())

    threads = [threading.Thread(target=holder)]
    threads[0].start()
    assert held.wait(DEADLINE)
    for target in (impatient, patient):
        threads.append(threading.Thread(target=target))
        threads[-1].start()
    threads[1].join(DEADLINE)  # the impatient one gave up while the slot was held
    release.set()
    for thread in threads:
        thread.join(DEADLINE)
        assert not thread.is_alive()
    assert got_in == ["patient"]
    assert gate.in_flight == 0


@pytest.mark.timeout(60)
def test_adaptive_concurrency_grows_past_its_start_when_the_endpoint_keeps_up(server, make_llm):
    server.default = ok("x", latency=0.1)
    llm = make_llm(limits=Limits(initial_concurrency=4, max_concurrency=64))

    async def burst():
        await asyncio.gather(*(llm.agenerate(f"q{i}") for i in range(200)))

    asyncio.run(burst())

    assert server.count == 200
    assert llm.limiter.concurrency.limit > 4
    assert server.max_in_flight > 16  # it grew well past the start
    assert server.max_in_flight <= 64


@pytest.mark.timeout(60)
def test_adaptive_concurrency_stops_growing_when_latency_climbs(server, make_llm):
    # A server that slows down with load: each request in flight adds 40 ms.
    server.default = dynamic(lambda request: ok("x", latency=0.04 * request.in_flight))
    llm = make_llm(limits=Limits(initial_concurrency=2, max_concurrency=64))

    async def burst():
        await asyncio.gather(*(llm.agenerate(f"q{i}") for i in range(120)))

    asyncio.run(burst())

    assert server.count == 120
    assert llm.limiter.concurrency.peak_limit < 16  # it stopped probing once answers slowed down


def test_sync_calls_after_many_loops_leave_no_state_behind(server, make_llm):
    llm = make_llm()
    for i in range(20):  # twenty sync calls: twenty loops, each gone when the call returns
        assert llm.generate(f"call {i}").text
    assert len(llm.endpoint.calls) == 0
    assert llm.limiter.concurrency.in_flight == 0
