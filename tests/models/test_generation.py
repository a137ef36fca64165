"""Plain generation: n completions, logprobs with alternatives, the sync API, and reuse across runs."""

from __future__ import annotations

import asyncio

from assay import evaluate
from assay.models import ChatMessage, TokenLogprob
from assay.schema.outcome import Ok
from tests.models.fake_openai import dynamic, ok
from tests.models.judge import JudgeMetric, Verdict, row_of, rows, score_for, verdict


def test_logprobs_carry_tokens_and_top_alternatives(server, make_llm):
    server.default = ok("Yes, it is")
    llm = make_llm()

    response = asyncio.run(llm.agenerate("Is it?", logprobs=True, top_logprobs=3))

    [request] = server.chat_requests
    assert request.body["logprobs"] is True and request.body["top_logprobs"] == 3
    logprobs = response.generations[0].logprobs
    assert logprobs is not None
    assert all(isinstance(item, TokenLogprob) for item in logprobs)
    assert "".join(item.token for item in logprobs) == "Yes, it is"
    first = logprobs[0]
    assert first.token == "Yes" and first.logprob == -0.01
    assert first.top == {"Yes": -0.01, "alt1": -1.01, "alt2": -2.01}
    assert all(len(item.top) == 3 and item.top[item.token] == item.logprob for item in logprobs)


def test_without_a_request_there_are_no_logprobs(server, make_llm):
    llm = make_llm()
    response = asyncio.run(llm.agenerate("hi"))
    assert response.generations[0].logprobs is None
    assert "logprobs" not in server.chat_requests[0].body


def test_logprobs_with_a_schema(server, make_llm):
    server.default = ok(verdict(1.0, "yes"))
    llm = make_llm()

    response = asyncio.run(llm.agenerate("rate", schema=Verdict, logprobs=True, top_logprobs=2))

    assert response.parsed == Verdict(score=1.0, reason="yes")
    logprobs = response.generations[0].logprobs
    assert "".join(item.token for item in logprobs) == verdict(1.0, "yes")
    assert all(len(item.top) == 2 for item in logprobs)


def test_n_completions_in_one_request(server, make_llm):
    server.default = ok(["one", "two", "three"], usage=(20, 9))
    llm = make_llm()

    response = asyncio.run(llm.agenerate("count", n=3))

    assert [g.text for g in response.generations] == ["one", "two", "three"]
    assert response.usage.input_tokens == 20 and response.usage.output_tokens == 9
    [request] = server.chat_requests
    assert request.body["n"] == 3


def test_messages_in_openai_shape_and_as_chat_messages(server, make_llm):
    llm = make_llm()
    conversation = [
        {"role": "system", "content": "You are a strict judge."},
        {"role": "user", "content": "Rate: 2+2=4"},
    ]

    async def both():
        await llm.agenerate(conversation)
        await llm.agenerate([ChatMessage(**message) for message in conversation])

    asyncio.run(both())
    assert [r.messages for r in server.chat_requests] == [conversation, conversation]


def test_the_sync_api_can_be_called_repeatedly(server, make_llm):
    server.default = ok("sync answer")
    llm = make_llm()

    answers = [llm.generate(f"question {i}").text for i in range(3)]

    assert answers == ["sync answer"] * 3
    assert server.count == 3


def test_one_llm_serves_two_consecutive_runs(server, make_llm):
    server.default = dynamic(lambda request: ok(verdict(score_for(row_of(request)))))
    llm = make_llm()  # no cache: the second run must really call the server again

    first = evaluate(rows(6), [JudgeMetric()], llm=llm, show_progress=False)
    second = evaluate(rows(6), [JudgeMetric()], llm=llm, show_progress=False)

    for result in (first, second):
        assert [result.outcome(row, "judge") for row in range(6)] == [
            Ok(value=score_for(row), reason="fine") for row in range(6)
        ]
    assert server.count == 12
