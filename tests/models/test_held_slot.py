"""`LLM.consecutive()` / `RateLimiter.hold()`: a run of calls keeps one slot of the endpoint.

Measured at the fake server: which calls arrive when, and how many are in flight."""

from __future__ import annotations

import asyncio

import pytest

from assay import SingleTurnSample
from assay.metrics.rag.dual_judge import ContextRelevance
from assay.metrics.rag.faithfulness import Faithfulness
from assay.models import Limits, RetryPolicy
from assay.models.limits import RateLimiter
from tests.models.fake_openai import dynamic, ok, rate_limited

TWO_SLOTS = Limits(max_concurrency=2, adaptive=False)


def arrivals(server) -> list[str]:
    return [r.last_user_text for r in sorted(server.chat_requests, key=lambda r: r.time)]


async def run_and_others(llm, *, held: bool, run_calls: int = 3, others: int = 8) -> None:
    """One run of sequential calls started beside a crowd of one-off calls."""

    async def run() -> None:
        if held:
            async with llm.consecutive():
                for i in range(run_calls):
                    await llm.agenerate(f"run {i}")
        else:
            for i in range(run_calls):
                await llm.agenerate(f"run {i}")

    async def one_off(i: int) -> None:
        await asyncio.sleep(0.01)  # queued after the run's first call
        await llm.agenerate(f"other {i}")

    await asyncio.gather(run(), *(one_off(i) for i in range(others)))


def test_a_held_run_does_not_queue_behind_other_calls_between_its_own(server, make_llm):
    server.default = ok("fine", latency=0.1)
    llm = make_llm(limits=TWO_SLOTS)

    asyncio.run(run_and_others(llm, held=True))

    order = arrivals(server)
    assert len(order) == 11
    # the run's three calls go back to back on its slot; the eight others share the other one
    last_run_call = order.index("run 2")
    assert last_run_call < order.index("other 4"), order
    assert server.max_in_flight <= 2
    assert llm.limiter.concurrency.in_flight == 0


def test_without_a_hold_the_run_waits_behind_every_queued_call(server, make_llm):
    # the control for the test above: first come, first served
    server.default = ok("fine", latency=0.1)
    llm = make_llm(limits=TWO_SLOTS)

    asyncio.run(run_and_others(llm, held=False))

    order = arrivals(server)
    assert order.index("run 1") > order.index("other 6"), order


def test_calls_started_together_inside_one_hold_take_turns(server, make_llm):
    server.default = ok("fine", latency=0.05)
    llm = make_llm(limits=Limits(max_concurrency=4, adaptive=False))

    async def scenario():
        async with llm.consecutive():
            return await asyncio.gather(*(llm.agenerate(f"q{i}") for i in range(4)))

    answers = asyncio.run(scenario())

    assert [a.text for a in answers] == ["fine"] * 4
    assert server.max_in_flight == 1
    assert llm.limiter.concurrency.in_flight == 0


def test_a_hold_whose_calls_are_all_cached_never_waits_for_a_slot():
    limiter = RateLimiter(Limits(max_concurrency=1, adaptive=False))

    async def scenario():
        await limiter.concurrency.acquire()  # someone else has the only slot
        async with limiter.hold():
            pass  # no call reached the limiter
        assert limiter.concurrency.in_flight == 1
        limiter.concurrency.release()

    asyncio.run(asyncio.wait_for(scenario(), timeout=5))
    assert limiter.concurrency.in_flight == 0


def test_nested_holds_share_one_slot_and_an_error_inside_gives_it_back(server, make_llm):
    server.default = ok("fine")
    llm = make_llm(limits=Limits(max_concurrency=2, adaptive=False))

    async def scenario():
        async with llm.consecutive():
            await llm.agenerate("outer")
            async with llm.consecutive():
                await llm.agenerate("inner")
                assert llm.limiter.concurrency.in_flight == 1
            assert llm.limiter.concurrency.in_flight == 1
            raise KeyError("the caller's own failure")

    with pytest.raises(KeyError):
        asyncio.run(scenario())
    assert llm.limiter.concurrency.in_flight == 0


def test_a_rate_limited_call_in_a_hold_is_retried_on_its_slot_and_steers_the_limit(
    server, make_llm
):
    server.script(rate_limited(retry_after=0.01), ok("fine"), ok("fine"))
    llm = make_llm(
        limits=Limits(max_concurrency=4, initial_concurrency=4),
        retry=RetryPolicy(max_attempts=5, initial_wait=0.01, max_wait=0.02),
    )

    async def scenario():
        async with llm.consecutive():
            first = await llm.agenerate("a")
            second = await llm.agenerate("b")
        return first.text, second.text

    assert asyncio.run(scenario()) == ("fine", "fine")
    assert [r.status for r in server.chat_requests] == [429, 200, 200]
    assert llm.limiter.concurrency.limit < 4  # the 429 lowered the shared limit
    assert llm.limiter.concurrency.in_flight == 0


def test_per_statement_verdicts_of_one_row_are_not_interleaved_with_many_rows(server, make_llm):
    # four rows scored at once on two slots: each row's statement calls run on one held slot, so
    # while a row is being judged at most one other row's calls arrive in between
    server.default = dynamic(lambda request: ok("1. yes", latency=0.03))
    llm = make_llm(limits=TWO_SLOTS)
    metric = Faithfulness(llm=llm, verdicts="each")
    rows = [
        SingleTurnSample(
            response=f"Row {row} first. Row {row} second. Row {row} third. Row {row} fourth.",
            retrieved_contexts=[f"Source text of row {row}."],
        )
        for row in range(4)
    ]

    async def scenario():
        return await asyncio.gather(*(metric.single_turn_ascore(r) for r in rows))

    scores = asyncio.run(scenario())

    assert len(scores) == 4
    order = [text.split("<items>")[0] for text in arrivals(server)]
    assert len(order) == 16
    for row in range(4):
        marker = f"Source text of row {row}."
        mine = [i for i, prefix in enumerate(order) if marker in prefix]
        assert len(mine) == 4
        between = {prefix for prefix in order[mine[0] : mine[-1] + 1] if marker not in prefix}
        assert len(between) <= 1, (row, order)
    assert server.max_in_flight <= 2


def test_each_judge_rates_its_passages_on_one_held_slot(server, make_llm):
    server.default = dynamic(lambda request: ok("2", latency=0.03))
    llm = make_llm(limits=TWO_SLOTS)
    metric = ContextRelevance(llm=llm, granularity="passage")
    paragraph = "This paragraph of row {row} is long enough to be a passage of its own. " * 3
    rows = [
        SingleTurnSample(
            user_input=f"Question of row {row}?",
            retrieved_contexts=["\n\n".join([paragraph.format(row=row)] * 3)],
        )
        for row in range(3)
    ]

    async def scenario():
        return await asyncio.gather(*(metric.single_turn_ascore(r) for r in rows))

    assert asyncio.run(scenario()) == [1.0] * 3

    def run_of(text: str) -> tuple[int, bool]:
        row = next(r for r in range(3) if f"Question of row {r}?" in text)
        return row, "Below is a passage" in text

    requests = sorted(server.chat_requests, key=lambda r: r.time)
    order = [run_of(str(r.messages)) for r in requests]
    assert len(order) == 18  # 3 rows x 3 passages x 2 judges
    for run in set(order):
        mine = [i for i, other in enumerate(order) if other == run]
        assert len(mine) == 3
        # while a judge rates a row's passages, at most one other run holds the other slot
        assert len({other for other in order[mine[0] : mine[-1] + 1]} - {run}) <= 1, order
    assert server.max_in_flight <= 2
