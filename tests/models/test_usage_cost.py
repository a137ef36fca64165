"""Token usage and cost per call, per cell, per metric and per run; cached calls are free; budgets."""

from __future__ import annotations

import asyncio

import pytest

from assay import evaluate
from assay.errors import BudgetExhausted
from assay.models import Budget, Price, RetryPolicy
from assay.models.usage import budgeting
from assay.schema.outcome import Error, Ok
from assay.schema.usage import Usage
from tests.models.fake_openai import dynamic, malformed_json, ok, server_error, truncated
from tests.models.judge import JudgeMetric, Verdict, row_of, rows, score_for, verdict

EXACT = {"rel": 1e-12, "abs": 0.0}


def usage_of(row: int, metric: str) -> tuple[int, int]:
    """Scripted token counts: different for every cell, so any mix-up shows."""
    bump = 0 if metric == "judge_a" else 5_000
    return 1_000 * (row + 1) + 7 + bump, 100 * (row + 1) + 3 + bump // 10


def answer(request):
    row = row_of(request)
    metric = "judge_a" if "[judge_a]" in request.last_user_text else "judge_b"
    return ok(verdict(score_for(row)), usage=usage_of(row, metric))


def test_token_and_cost_sums_are_exact(server, make_llm):
    server.default = dynamic(answer)
    llm = make_llm(price=(1.0, 2.0))
    n = 5

    result = evaluate(
        rows(n),
        [JudgeMetric(name="judge_a"), JudgeMetric(name="judge_b")],
        llm=llm,
        show_progress=False,
    )

    # judge_a: input 1000*(1+..+5) + 5*7 = 15035, output 100*15 + 5*3 = 1515
    # judge_b: input 15035 + 5*5000 = 40035, output 1515 + 5*500 = 4015
    judge_a = result.usage("judge_a")
    assert judge_a.model_copy(update={"cost": 0.0}) == Usage(
        input_tokens=15_035, output_tokens=1_515, requests=5
    )
    assert judge_a.cost == pytest.approx((15_035 * 1.0 + 1_515 * 2.0) / 1e6, **EXACT)  # $0.018065
    assert result.usage("judge_b").input_tokens == 40_035
    assert result.usage("judge_b").output_tokens == 4_015
    total = result.total_tokens()
    assert (total.input_tokens, total.output_tokens, total.requests, total.cached_requests) == (
        55_070,
        5_530,
        10,
        0,
    )
    # 55070 * $1/M + 5530 * $2/M = $0.06613
    assert result.total_cost() == pytest.approx(0.06613, **EXACT)
    assert total.unpriced_requests == 0
    # Each cell carries its own call's usage.
    cell = result.usages[2]["judge_b"]
    assert (cell.input_tokens, cell.output_tokens, cell.requests) == (8_007, 803, 1)
    assert cell.cost == pytest.approx((8_007 + 2 * 803) / 1e6, **EXACT)
    assert llm.usage.usage.input_tokens == 55_070
    assert llm.usage.usage.cost == pytest.approx(0.06613, **EXACT)


def test_cached_requests_cost_nothing(server, make_llm, tmp_path):
    server.default = dynamic(answer)
    path = tmp_path / "cache.sqlite"
    metrics = [JudgeMetric(name="judge_a")]

    first = evaluate(
        rows(4), metrics, llm=make_llm(cache=path, price=(1.0, 2.0)), show_progress=False
    )
    second = evaluate(
        rows(4), metrics, llm=make_llm(cache=path, price=(1.0, 2.0)), show_progress=False
    )

    # 1000*(1+2+3+4) + 4*7 = 10028 input, 100*10 + 4*3 = 1012 output
    assert first.total_cost() == pytest.approx((10_028 + 2 * 1_012) / 1e6, **EXACT)
    assert second.total_cost() == 0.0
    usage = second.total_tokens()
    assert (usage.input_tokens, usage.output_tokens, usage.requests, usage.cached_requests) == (
        0,
        0,
        0,
        4,
    )
    assert server.count == 4


def test_failed_attempts_are_free_and_repair_and_truncation_retries_are_charged(server, make_llm):
    server.script(
        server_error(),  # no usage: an error
        malformed_json(),  # 10 in, 5 out (the default usage)
        truncated(usage=(200, 30)),  # the repair, cut off
        ok(verdict(0.25), usage=(300, 40)),  # the repair with a larger budget
    )
    llm = make_llm(price=(1.0, 2.0))

    response = asyncio.run(llm.agenerate("rate", schema=Verdict, max_tokens=50))

    assert response.parsed.score == 0.25
    spent = llm.usage.usage
    assert (spent.input_tokens, spent.output_tokens, spent.requests) == (510, 75, 3)
    assert spent.cost == pytest.approx((510 + 2 * 75) / 1e6, **EXACT)


def test_an_unpriced_model_is_counted_not_guessed(server, make_llm):
    server.default = dynamic(answer)
    llm = make_llm(model="my-finetune")  # not in the price table, no price given

    result = evaluate(rows(3), [JudgeMetric(name="judge_a")], llm=llm, show_progress=False)

    usage = result.total_tokens()
    assert usage.requests == 3 and usage.unpriced_requests == 3
    assert usage.input_tokens == 6_021
    assert result.total_cost() == 0.0


def test_a_listed_model_is_priced_from_the_table(server, make_llm):
    server.default = ok("x", usage=(1_000_000, 1_000_000))
    llm = make_llm(model="gpt-4o-mini-2024-07-18")

    response = asyncio.run(llm.agenerate("q"))

    assert llm.price == Price(0.15, 0.60)
    assert response.usage.cost == pytest.approx(0.75, **EXACT)


def test_the_budget_stops_further_calls_once_the_cap_is_reached(server, make_llm):
    # Every call costs 100_000 input tokens at $1/M = $0.10; the cap of $0.25 allows three calls.
    server.default = dynamic(
        lambda request: ok(verdict(score_for(row_of(request))), usage=(100_000, 0))
    )
    llm = make_llm(price=(1.0, 2.0))

    result = evaluate(
        rows(10), [JudgeMetric()], llm=llm, budget=0.25, max_concurrency=1, show_progress=False
    )

    outcomes = [result.outcome(row, "judge") for row in range(10)]
    assert [type(o).__name__ for o in outcomes] == ["Ok"] * 3 + ["Error"] * 7
    assert all(o.error_type == "BudgetExhausted" for o in outcomes[3:])
    assert server.count == 3
    assert result.total_cost() == pytest.approx(0.3, **EXACT)


def test_a_concurrent_run_under_a_budget_drops_no_row(server, make_llm):
    server.default = dynamic(
        lambda request: ok(verdict(score_for(row_of(request))), usage=(100_000, 0), latency=0.02)
    )
    llm = make_llm(price=(1.0, 2.0))

    result = evaluate(
        rows(20), [JudgeMetric()], llm=llm, budget=0.25, max_concurrency=4, show_progress=False
    )

    outcomes = [result.outcome(row, "judge") for row in range(20)]
    ok_count = sum(isinstance(o, Ok) for o in outcomes)
    assert ok_count == server.count
    assert 3 <= server.count <= 3 + 3  # at most the cells already in flight finish past the cap
    assert all(
        isinstance(o, Ok) or (isinstance(o, Error) and o.error_type == "BudgetExhausted")
        for o in outcomes
    )
    assert result.total_cost() == pytest.approx(0.1 * server.count, **EXACT)


def test_a_budget_check_inside_a_cell_raises_budget_exhausted(server, make_llm):
    server.default = ok("x", usage=(100_000, 0))
    llm = make_llm(price=(1.0, 2.0), retry=RetryPolicy(max_attempts=1))
    budget = Budget(0.1)

    async def spend():
        with budgeting(budget):
            await llm.agenerate("first")
            await llm.agenerate("second")

    with pytest.raises(BudgetExhausted):
        asyncio.run(spend())
    assert server.count == 1
    assert budget.spent == pytest.approx(0.1, **EXACT)
