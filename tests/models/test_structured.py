"""Structured output: the mode ladder, tolerant parsing, one repair call, and truncation."""

from __future__ import annotations

import asyncio
import itertools
import json

import pytest

from assay import evaluate
from assay.errors import OutputParseError, OutputTruncated
from assay.schema.outcome import Error, Ok
from tests.models.fake_openai import (
    dynamic,
    malformed_json,
    ok,
    reject_response_format,
    schema_violation,
    truncated,
)
from tests.models.judge import JudgeMetric, Verdict, verdict


def test_schema_answer_is_parsed_and_json_schema_is_asked_for_first(server, make_llm):
    server.default = ok(verdict(0.8, "good"))
    llm = make_llm()

    response = asyncio.run(llm.agenerate("Judge this answer", schema=Verdict))

    assert isinstance(response.parsed, Verdict)
    assert response.parsed == Verdict(score=0.8, reason="good")
    assert response.generations[0].finish_reason == "stop"
    assert response.text == verdict(0.8, "good")
    [request] = server.chat_requests
    body = request.body
    assert body["model"] == "test-model"
    assert body["messages"] == [{"role": "user", "content": "Judge this answer"}]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "Verdict"
    assert body["response_format"]["json_schema"]["schema"] == Verdict.model_json_schema()
    assert "tools" not in body and "tool_choice" not in body


def test_rejected_json_schema_falls_back_to_a_tool_call_and_is_remembered(server, make_llm):
    server.default = reject_response_format(ok(verdict(0.3, "meh")))
    llm = make_llm()

    async def twice():
        return await llm.agenerate("first", schema=Verdict), await llm.agenerate(
            "second", schema=Verdict
        )

    first, second = asyncio.run(twice())

    assert first.parsed == Verdict(score=0.3, reason="meh")
    assert second.parsed == Verdict(score=0.3, reason="meh")
    requests = server.chat_requests
    assert [r.status for r in requests] == [400, 200, 200]
    rejected, tool_call, remembered = requests
    assert rejected.response_format_type == "json_schema"
    for request in (tool_call, remembered):
        assert "response_format" not in request.body
        assert request.forced_tool == "Verdict"
        assert request.body["tools"][0]["function"]["name"] == "Verdict"
        assert request.body["tools"][0]["function"]["parameters"] == Verdict.model_json_schema()
    # The second call started at the rung that worked: no second json_schema attempt.
    assert remembered.last_user_text == "second"


def test_ladder_reaches_json_mode_with_the_schema_in_the_prompt(server, make_llm):
    server.default = reject_response_format(ok(verdict(0.6)), tools=True)
    llm = make_llm()

    async def twice():
        return await llm.agenerate("rate it", schema=Verdict), await llm.agenerate(
            "again", schema=Verdict
        )

    first, second = asyncio.run(twice())

    assert first.parsed.score == 0.6 and second.parsed.score == 0.6
    requests = server.chat_requests
    assert [r.status for r in requests] == [400, 400, 200, 200]
    assert requests[0].response_format_type == "json_schema"
    assert requests[1].forced_tool == "Verdict"
    for request in requests[2:]:
        assert request.response_format_type == "json_object"
        assert "tools" not in request.body
        prompt = request.last_user_text
        assert json.dumps(Verdict.model_json_schema(), separators=(",", ":")) in prompt
    assert requests[2].last_user_text.startswith("rate it")
    assert requests[3].last_user_text.startswith("again")


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"score": 0.5, "reason": "fenced"}\n```',
        '{"score": 0.5, "reason": "trailing comma",}',
        '```\n{"score": 0.5, "reason": "fence and comma",}\n```',
        'Here is my verdict: {"score": 0.5, "reason": "prose around"} Hope that helps!',
        '[{"score": 0.5, "reason": "wrapped in a list"}]',
    ],
)
def test_tolerant_extraction_needs_no_repair_call(server, make_llm, text):
    server.default = ok(text)
    llm = make_llm()

    response = asyncio.run(llm.agenerate("rate", schema=Verdict))

    assert response.parsed.score == 0.5
    assert server.count == 1


def test_a_malformed_answer_gets_exactly_one_repair_call(server, make_llm):
    server.script(malformed_json(), ok(verdict(0.9, "repaired")))
    llm = make_llm()

    response = asyncio.run(llm.agenerate("rate this", schema=Verdict))

    assert response.parsed == Verdict(score=0.9, reason="repaired")
    original, repair = server.chat_requests
    messages = repair.messages
    assert messages[0] == {"role": "user", "content": "rate this"}
    assert messages[1]["role"] == "assistant"
    assert messages[1]["content"] == "Sure! The score is high, I would say about nine out of ten."
    assert messages[2]["role"] == "user" and "JSON" in messages[2]["content"]
    assert repair.response_format_type == original.response_format_type == "json_schema"


def test_the_usage_of_a_repaired_or_retried_answer_counts_every_request(server, make_llm):
    server.script(malformed_json(), ok(verdict(0.9, "repaired"), usage=(40, 7)))
    response = asyncio.run(make_llm().agenerate("rate this", schema=Verdict))
    # the malformed answer (10 in, 5 out by default) plus the repair turn (40 in, 7 out)
    assert (response.usage.requests, response.usage.input_tokens, response.usage.output_tokens) == (
        2,
        50,
        12,
    )

    server.script(truncated(usage=(10, 300)), ok(verdict(0.4), usage=(10, 20)))
    response = asyncio.run(make_llm().agenerate("rate", schema=Verdict))
    assert (response.usage.requests, response.usage.output_tokens) == (2, 320)


def test_a_failed_repair_is_an_output_parse_error_with_the_raw_text(server, make_llm):
    server.script(malformed_json(), ok("Still no JSON here, sorry."))
    server.default = ok(verdict(1.0))  # a third call would succeed: it must not be made
    llm = make_llm()

    with pytest.raises(OutputParseError) as caught:
        asyncio.run(llm.agenerate("rate this", schema=Verdict))

    assert caught.value.raw == "Still no JSON here, sorry."
    assert "Verdict" in str(caught.value)
    assert server.count == 2


def test_a_schema_violation_is_repaired_once_then_reported(server, make_llm):
    server.default = schema_violation()
    llm = make_llm()

    with pytest.raises(OutputParseError) as caught:
        asyncio.run(llm.agenerate("rate this", schema=Verdict))

    assert caught.value.raw == '{"verdict": "yes"}'
    assert "score" in str(caught.value)
    assert server.count == 2
    # The repair request told the model what was wrong.
    assert "score" in server.chat_requests[1].messages[-1]["content"]


def test_parse_failures_in_a_run_are_typed_error_outcomes_with_the_raw_output(server, make_llm):
    def answer(request):
        return (
            malformed_json()
            if "row-1" in request.last_user_text or "That reply" in request.last_user_text
            else ok(verdict(0.7))
        )

    server.default = dynamic(answer)
    llm = make_llm()

    result = evaluate(
        [{"response": "row-0"}, {"response": "row-1"}, {"response": "row-2"}],
        [JudgeMetric()],
        llm=llm,
        show_progress=False,
    )

    assert result.outcome(0, "judge") == Ok(value=0.7, reason="fine")
    assert result.outcome(2, "judge") == Ok(value=0.7, reason="fine")
    failed = result.outcome(1, "judge")
    assert isinstance(failed, Error)
    assert failed.error_type == "OutputParseError"
    assert failed.raw == "Sure! The score is high, I would say about nine out of ten."


def test_truncated_answers_are_retried_with_a_growing_budget_then_reported(server, make_llm):
    server.default = truncated()
    llm = make_llm()

    with pytest.raises(OutputTruncated) as caught:
        asyncio.run(llm.agenerate("rate", schema=Verdict, max_tokens=64))

    budgets = [r.body.get("max_tokens") for r in server.chat_requests]
    assert budgets[0] == 64
    assert len(budgets) >= 2
    assert all(later > earlier for earlier, later in itertools.pairwise(budgets))
    assert caught.value.raw == '{"score": 0.5, "reason": "because the answer cov'


def test_truncation_error_names_the_last_budget_that_was_tried(server, make_llm):
    server.default = truncated()
    llm = make_llm()

    with pytest.raises(OutputTruncated) as caught:
        asyncio.run(llm.agenerate("rate", schema=Verdict, max_tokens=64))

    last_sent = server.chat_requests[-1].body["max_tokens"]
    assert f"max_tokens={last_sent})" in str(caught.value)


def test_a_truncated_answer_is_never_parsed_even_when_it_looks_complete(server, make_llm):
    # Valid JSON, but the server says it stopped at the limit: it must not be trusted.
    server.script(truncated(verdict(0.1, "cut")), ok(verdict(0.95, "whole")))
    llm = make_llm()

    response = asyncio.run(llm.agenerate("rate", schema=Verdict, max_tokens=100))

    assert response.parsed == Verdict(score=0.95, reason="whole")
    assert [r.body["max_tokens"] for r in server.chat_requests] == [100, 200]


def test_truncation_without_a_budget_sets_one_larger_than_what_was_used(server, make_llm):
    server.script(truncated(usage=(10, 300)), ok(verdict(0.4)))
    llm = make_llm()

    response = asyncio.run(llm.agenerate("rate", schema=Verdict))

    assert response.parsed.score == 0.4
    first, second = server.chat_requests
    assert "max_tokens" not in first.body
    assert second.body["max_tokens"] > 300


def test_n_completions_are_each_parsed(server, make_llm):
    server.default = ok([verdict(0.1, "a"), verdict(0.2, "b"), verdict(0.3, "c")])
    llm = make_llm()

    response = asyncio.run(llm.agenerate("rate", schema=Verdict, n=3))

    assert [g.parsed for g in response.generations] == [
        Verdict(score=0.1, reason="a"),
        Verdict(score=0.2, reason="b"),
        Verdict(score=0.3, reason="c"),
    ]
    [request] = server.chat_requests
    assert request.body["n"] == 3
