"""Retries, Retry-After, timeouts, non-transient errors, and no row ever dropped."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest

from assay import evaluate
from assay.errors import ModelConnectionError, ModelError, ModelTimeout, ProviderError, RateLimited
from assay.models import Limits, ModelResponse, RetryPolicy, llm_factory
from assay.schema.outcome import Error, Ok
from tests.models.fake_openai import dynamic, error, hang, ok, rate_limited, server_error
from tests.models.judge import JudgeMetric, Verdict, row_of, rows, score_for, verdict

SLOW_BACKOFF_IS_NOT_ENOUGH = 0.3  # every Retry-After below is far above initial_wait=0.01


def gap(requests, first=0, second=1) -> float:
    return requests[second].time - requests[first].time


def test_429_with_retry_after_is_honoured(server, make_llm):
    server.script(rate_limited(retry_after=SLOW_BACKOFF_IS_NOT_ENOUGH), ok("hello"))
    llm = make_llm()

    response = asyncio.run(llm.agenerate("hi"))

    assert response.text == "hello"
    requests = server.chat_requests
    assert [r.status for r in requests] == [429, 200]
    assert gap(requests) >= SLOW_BACKOFF_IS_NOT_ENOUGH


def test_retry_after_ms_is_honoured(server, make_llm):
    server.script(rate_limited(retry_after=None, retry_after_ms=250), ok("hello"))
    llm = make_llm()

    assert asyncio.run(llm.agenerate("hi")).text == "hello"
    assert gap(server.chat_requests) >= 0.25


def test_retry_after_on_a_503_is_honoured(server, make_llm):
    """Servers behind load balancers answer 503 + Retry-After while they are busy or restarting."""
    server.script(server_error(503, retry_after=SLOW_BACKOFF_IS_NOT_ENOUGH), ok("back"))
    llm = make_llm()

    assert asyncio.run(llm.agenerate("hi")).text == "back"
    assert [r.status for r in server.chat_requests] == [503, 200]
    assert gap(server.chat_requests) >= SLOW_BACKOFF_IS_NOT_ENOUGH


def test_a_429_on_a_structured_call_is_retried_on_the_same_rung(server, make_llm):
    server.script(rate_limited(retry_after=0.05), ok(verdict(0.5)))
    llm = make_llm()

    response = asyncio.run(llm.agenerate("rate", schema=Verdict))

    assert response.parsed.score == 0.5
    assert [r.response_format_type for r in server.chat_requests] == ["json_schema", "json_schema"]


def test_server_errors_are_retried_until_success(server, make_llm):
    server.script(server_error(), server_error(502), server_error(503), ok("finally"))
    llm = make_llm(retry=RetryPolicy(max_attempts=4, initial_wait=0.01, max_wait=0.05))

    response = asyncio.run(llm.agenerate("hi"))

    assert response.text == "finally"
    assert [r.status for r in server.chat_requests] == [500, 502, 503, 200]


def test_a_5xx_on_a_structured_call_is_retried_without_stepping_down_the_ladder(server, make_llm):
    server.script(server_error(), ok(verdict(0.2)))
    llm = make_llm()

    assert asyncio.run(llm.agenerate("rate", schema=Verdict)).parsed.score == 0.2
    assert [r.response_format_type for r in server.chat_requests] == ["json_schema", "json_schema"]


@pytest.mark.parametrize("attempts", [1, 3])
def test_after_max_attempts_the_error_carries_the_attempt_count(server, make_llm, attempts):
    server.default = server_error()
    llm = make_llm(retry=RetryPolicy(max_attempts=attempts, initial_wait=0.01, max_wait=0.05))

    with pytest.raises(ProviderError) as caught:
        asyncio.run(llm.agenerate("hi"))

    assert caught.value.status == 500
    assert caught.value.attempts == attempts
    assert server.count == attempts


def test_persistent_429s_end_as_rate_limited_with_attempts(server, make_llm):
    server.default = rate_limited(retry_after=0.02)
    llm = make_llm(retry=RetryPolicy(max_attempts=3, initial_wait=0.01, max_wait=0.05))

    with pytest.raises(RateLimited) as caught:
        asyncio.run(llm.agenerate("hi"))

    assert caught.value.attempts == 3
    assert caught.value.retry_after == pytest.approx(0.02)
    assert server.count == 3


def test_a_hang_past_the_client_timeout_is_a_model_timeout(server, make_llm):
    server.default = hang(5.0)
    llm = make_llm(timeout=0.3, retry=RetryPolicy(max_attempts=2, initial_wait=0.01, max_wait=0.05))

    started = time.monotonic()
    with pytest.raises(ModelTimeout) as caught:
        asyncio.run(llm.agenerate("hi"))

    assert time.monotonic() - started < 3.0  # nowhere near the 5 s the server would take
    assert caught.value.attempts == 2
    assert server.count == 2


def test_a_timeout_is_retried_and_the_next_attempt_can_succeed(server, make_llm):
    server.script(hang(5.0), ok("on time"))
    llm = make_llm(timeout=0.3)

    assert asyncio.run(llm.agenerate("hi")).text == "on time"
    assert server.count == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_non_transient_client_errors_are_not_retried(server, make_llm, status):
    server.default = error(status, "nope")
    llm = make_llm()

    with pytest.raises(ProviderError) as caught:
        asyncio.run(llm.agenerate("hi"))

    assert not isinstance(caught.value, RateLimited)
    assert caught.value.status == status
    assert caught.value.attempts == 1
    assert "nope" in str(caught.value)
    assert server.count == 1


def test_an_unreachable_server_is_a_connection_error_after_retries():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    llm = llm_factory(
        f"vllm/test-model@http://127.0.0.1:{port}/v1",
        cache=False,
        timeout=1.0,
        retry=RetryPolicy(max_attempts=2, initial_wait=0.01, max_wait=0.05),
    )

    with pytest.raises(ModelConnectionError) as caught:
        asyncio.run(llm.agenerate("hi"))

    assert caught.value.attempts == 2


def test_identical_concurrent_calls_each_get_an_answer_or_a_model_error(server, make_llm):
    """Three identical calls at once; the first one to reach the server fails. The other two
    must each end with a response or a ModelError, never an internal exception."""
    server.script(server_error(), ok("a", latency=0.05), ok("b", latency=0.1))
    server.default = ok("c")
    llm = make_llm(retry=RetryPolicy(max_attempts=1, initial_wait=0.01))

    async def three():
        return await asyncio.gather(
            *(llm.agenerate("the same prompt") for _ in range(3)), return_exceptions=True
        )

    results = asyncio.run(three())

    assert all(isinstance(r, (ModelResponse, ModelError)) for r in results), results
    assert sum(isinstance(r, ModelResponse) for r in results) >= 2


def test_a_cell_that_outlives_the_run_timeout_is_an_error_outcome(server, make_llm):
    server.default = dynamic(
        lambda request: hang(5.0) if row_of(request) == 1 else ok(verdict(0.5))
    )
    llm = make_llm(timeout=30.0)

    result = evaluate(rows(3), [JudgeMetric()], llm=llm, timeout=0.5, show_progress=False)

    assert isinstance(result.outcome(0, "judge"), Ok)
    assert isinstance(result.outcome(2, "judge"), Ok)
    stuck = result.outcome(1, "judge")
    assert isinstance(stuck, Error) and stuck.error_type == "Timeout"


def test_cells_cancelled_by_the_run_timeout_give_back_their_concurrency_slots(server, make_llm):
    """Two cells hang and are cancelled by the per-cell timeout; the LLM allows two calls in
    flight. The next cells must still get a slot and reach the server."""
    server.default = dynamic(lambda request: hang(5.0) if row_of(request) < 2 else ok(verdict(0.5)))
    llm = make_llm(timeout=30.0, limits=Limits(max_concurrency=2, adaptive=False))

    result = evaluate(
        rows(4), [JudgeMetric()], llm=llm, timeout=0.5, max_concurrency=2, show_progress=False
    )

    assert [type(result.outcome(row, "judge")).__name__ for row in range(4)] == [
        "Error",
        "Error",
        "Ok",
        "Ok",
    ]
    assert server.count == 4
    assert llm.limiter.concurrency.in_flight == 0


def test_no_row_is_dropped_under_429s_and_500s(server, make_llm):
    """30 rows: some see a 429 first, some two 500s, some are always refused or always garbled."""
    doomed = {4, 17}
    garbled = {9}
    seen: dict[int, int] = {}
    lock = threading.Lock()

    def behaviour(request):
        row = row_of(request)
        with lock:
            seen[row] = seen.get(row, 0) + 1
            attempt = seen[row]
        if row in doomed:
            return server_error()
        if row in garbled:
            return ok("I cannot answer in JSON today.")
        if row % 3 == 0 and attempt == 1:
            return rate_limited(retry_after=0.05)
        if row % 3 == 1 and attempt <= 2:
            return server_error()
        return ok(verdict(score_for(row), f"row {row}"))

    server.default = dynamic(behaviour)
    llm = make_llm(retry=RetryPolicy(max_attempts=4, initial_wait=0.01, max_wait=0.05))

    result = evaluate(rows(30), [JudgeMetric()], llm=llm, max_concurrency=8, show_progress=False)

    outcomes = [result.outcome(row, "judge") for row in range(30)]
    assert len(outcomes) == 30
    for row, outcome in enumerate(outcomes):
        if row in doomed:
            assert isinstance(outcome, Error), (row, outcome)
            assert outcome.error_type == "ProviderError"
            assert "HTTP 500" in outcome.message
            assert outcome.attempts == 4
        elif row in garbled:
            assert isinstance(outcome, Error), (row, outcome)
            assert outcome.error_type == "OutputParseError"
            assert outcome.raw == "I cannot answer in JSON today."
        else:
            assert outcome == Ok(value=score_for(row), reason=f"row {row}"), (row, outcome)
    summary = result.summary("judge")
    assert (summary.n_rows, summary.n_ok, summary.n_skipped, summary.n_error) == (30, 27, 0, 3)
    assert summary.coverage == pytest.approx(27 / 30)
    assert summary.mean == pytest.approx(
        sum(score_for(r) for r in range(30) if r not in doomed | garbled) / 27
    )
    # Every doomed row was tried exactly max_attempts times; retried rows needed no more than asked.
    assert all(seen[row] == 4 for row in doomed)
    assert all(seen[row] == 2 for row in range(30) if row % 3 == 0 and row not in doomed | garbled)
    assert all(seen[row] == 3 for row in range(30) if row % 3 == 1 and row not in doomed | garbled)
