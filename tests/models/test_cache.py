"""The persistent response cache: identical reruns make no HTTP request; errors are never cached."""

from __future__ import annotations

import asyncio

import pytest

from assay import evaluate
from assay.errors import ProviderError
from assay.models import ResponseCache, RetryPolicy
from assay.schema.outcome import Ok
from tests.models.fake_openai import dynamic, error, ok, reject_response_format, server_error
from tests.models.judge import JudgeMetric, Verdict, row_of, rows, score_for, verdict


def scored(request):
    row = row_of(request)
    return ok(verdict(score_for(row), f"row {row}"), usage=(50 + row, 5))


def test_a_second_identical_run_makes_zero_requests_and_returns_the_same_values(
    server, make_llm, tmp_path
):
    server.default = dynamic(scored)
    cache_path = tmp_path / "cache.sqlite"

    first = evaluate(rows(8), [JudgeMetric()], llm=make_llm(cache=cache_path), show_progress=False)
    calls_after_first = server.count
    # A fresh LLM on the same cache file: what a second process would do.
    second = evaluate(rows(8), [JudgeMetric()], llm=make_llm(cache=cache_path), show_progress=False)

    assert calls_after_first == 8
    assert server.count == 8
    for row in range(8):
        assert first.outcome(row, "judge") == Ok(value=score_for(row), reason=f"row {row}")
        assert second.outcome(row, "judge") == first.outcome(row, "judge")
    assert second.usage().requests == 0
    assert second.usage().cached_requests == 8


def test_the_same_call_twice_on_one_llm_is_answered_from_the_cache(server, make_llm, tmp_path):
    server.default = ok("an answer")
    llm = make_llm(cache=tmp_path / "c.sqlite")

    async def twice():
        return await llm.agenerate("same"), await llm.agenerate("same")

    first, second = asyncio.run(twice())

    assert server.count == 1
    assert first.text == second.text == "an answer"
    assert first.cached is False and second.cached is True


def test_errors_are_not_cached(server, make_llm, tmp_path):
    server.script(server_error(), error(401, "bad key"), ok("recovered"))
    llm = make_llm(
        cache=tmp_path / "c.sqlite", retry=RetryPolicy(max_attempts=1, initial_wait=0.01)
    )

    async def scenario():
        outcomes = []
        for _ in range(4):
            try:
                outcomes.append((await llm.agenerate("same question")).text)
            except ProviderError as exc:
                outcomes.append(exc.status)
        return outcomes

    assert asyncio.run(scenario()) == [500, 401, "recovered", "recovered"]
    assert server.count == 3  # the fourth call was the first one the cache could answer


def test_a_different_parameter_schema_or_prompt_is_a_cache_miss(server, make_llm, tmp_path):
    server.default = ok(verdict(0.5))
    llm = make_llm(cache=tmp_path / "c.sqlite")

    async def scenario():
        await llm.agenerate("q")
        await llm.agenerate("q", temperature=0.7)
        await llm.agenerate("q", schema=Verdict)
        await llm.agenerate("another q")
        await llm.agenerate("q", n=2)
        for again in ("q", "another q"):
            await llm.agenerate(again)
        await llm.agenerate("q", temperature=0.7)
        await llm.agenerate("q", schema=Verdict)

    asyncio.run(scenario())

    assert server.count == 5


def test_the_cache_is_per_model(server, make_llm, tmp_path):
    server.default = ok("x")
    path = tmp_path / "c.sqlite"

    async def ask(llm):
        return await llm.agenerate("q")

    asyncio.run(ask(make_llm(cache=path, model="judge-a")))
    asyncio.run(ask(make_llm(cache=path, model="judge-b")))
    asyncio.run(ask(make_llm(cache=path, model="judge-a")))

    assert [r.body["model"] for r in server.chat_requests] == ["judge-a", "judge-b"]


def test_stats_and_clear(server, make_llm, tmp_path):
    server.default = ok("x")
    cache = ResponseCache(tmp_path / "stats.sqlite")
    llm = make_llm(cache=cache)

    async def ask(*prompts):
        for prompt in prompts:
            await llm.agenerate(prompt)

    asyncio.run(ask("a", "b", "c", "a"))

    stats = cache.stats()
    assert stats["path"] == str(tmp_path / "stats.sqlite")
    assert stats["entries"] == 3
    assert stats["bytes"] > 0
    [entry] = stats["by_model"]
    assert (entry["kind"], entry["model"], entry["entries"]) == ("chat", "test-model", 3)
    assert entry["value_bytes"] > 0

    assert cache.clear() == 3
    assert cache.stats()["entries"] == 0
    assert cache.stats()["by_model"] == []

    fresh = make_llm(cache=cache)
    asyncio.run(fresh.agenerate("a"))
    assert server.count == 4  # after clear() the same prompt goes to the server again
    assert cache.stats()["entries"] == 1


@pytest.mark.parametrize("value", [True, "path"])
def test_the_cache_argument_accepts_a_path_or_true(server, make_llm, tmp_path, monkeypatch, value):
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "env-cache"))
    server.default = ok("x")
    cache = tmp_path / "given.sqlite" if value == "path" else True
    llm = make_llm(cache=cache)

    asyncio.run(llm.agenerate("q"))

    expected = (
        tmp_path / "given.sqlite" if value == "path" else tmp_path / "env-cache" / "cache.sqlite"
    )
    assert llm.cache is not None and llm.cache.path == expected
    assert ResponseCache(expected).stats()["entries"] == 1


def test_cache_false_always_calls_the_server(server, make_llm):
    server.default = ok("x")
    llm = make_llm(cache=False)

    async def twice():
        await llm.agenerate("q")
        await llm.agenerate("q")

    asyncio.run(twice())
    assert llm.cache is None
    assert server.count == 2


def test_a_rerun_after_a_ladder_step_down_makes_zero_requests(server, make_llm, tmp_path):
    """The model rejected json_schema and answered by tool call; those answers are cached.
    A second identical run (a new process: a fresh LLM on the same cache) must not call again."""
    server.default = reject_response_format(dynamic(scored))
    cache_path = tmp_path / "cache.sqlite"

    first = evaluate(rows(4), [JudgeMetric()], llm=make_llm(cache=cache_path), show_progress=False)
    calls_after_first = server.count
    second = evaluate(rows(4), [JudgeMetric()], llm=make_llm(cache=cache_path), show_progress=False)

    assert [first.outcome(r, "judge") for r in range(4)] == [
        second.outcome(r, "judge") for r in range(4)
    ]
    assert all(isinstance(first.outcome(r, "judge"), Ok) for r in range(4))
    assert server.count == calls_after_first, [
        (r.response_format_type, r.status) for r in server.chat_requests[calls_after_first:]
    ]
