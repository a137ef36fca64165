"""`grow_budget=False`: a cut-off answer raises `OutputTruncated` after one request, its usage
counted, for plain and structured calls alike; the default still asks again with twice the budget."""

from __future__ import annotations

import asyncio

import pytest

from assay.errors import OutputTruncated
from assay.models.usage import UsageMeter, metering
from tests.models.fake_openai import ok, truncated
from tests.models.judge import Verdict, verdict


def _max_tokens(server) -> list[int | None]:
    return [
        r.body.get("max_tokens") or r.body.get("max_completion_tokens")
        for r in server.chat_requests
    ]


def test_a_cut_off_plain_answer_is_not_asked_again(server, make_llm):
    server.default = truncated("The first words of a long answ", usage=(40, 64))
    llm = make_llm()
    meter = UsageMeter()

    async def call():
        with metering(meter):
            return await llm.agenerate("Tell me everything", max_tokens=64, grow_budget=False)

    with pytest.raises(OutputTruncated) as caught:
        asyncio.run(call())

    assert server.count == 1
    assert _max_tokens(server) == [64]
    assert caught.value.raw == "The first words of a long answ"
    assert "grow_budget=False" in str(caught.value)
    assert (llm.usage.usage.requests, llm.usage.usage.output_tokens) == (1, 64)
    assert (meter.usage.requests, meter.usage.input_tokens) == (1, 40)


def test_a_cut_off_structured_answer_is_not_asked_again(server, make_llm):
    server.default = truncated('{"score": 0.5, "reason": "beca', usage=(30, 80))
    llm = make_llm()

    with pytest.raises(OutputTruncated):
        asyncio.run(llm.agenerate("rate", schema=Verdict, max_tokens=80, grow_budget=False))

    assert server.count == 1
    assert server.chat_requests[0].response_format_type == "json_schema"
    assert llm.usage.usage.requests == 1 and llm.usage.usage.output_tokens == 80


def test_response_model_spelling_passes_it_on(server, make_llm):
    server.default = truncated('{"score": 0.5, "reason": "beca', usage=(30, 80))
    with pytest.raises(OutputTruncated):
        make_llm().generate("rate", response_model=Verdict, max_tokens=80, grow_budget=False)
    assert server.count == 1


def test_a_complete_answer_is_returned_as_usual(server, make_llm):
    server.default = ok(verdict(0.9, "fine"), usage=(12, 9))
    response = asyncio.run(
        make_llm().agenerate("rate", schema=Verdict, max_tokens=80, grow_budget=False)
    )
    assert response.parsed == Verdict(score=0.9, reason="fine")
    assert server.count == 1


def test_a_repair_call_does_not_grow_its_budget_either(server, make_llm):
    # The first answer is not JSON; the repair request is cut off: one repair request, no growth.
    server.script(ok("not json at all", usage=(10, 5)))
    server.default = truncated('{"score": 0.', usage=(20, 80))
    with pytest.raises(OutputTruncated):
        asyncio.run(make_llm().agenerate("rate", schema=Verdict, max_tokens=80, grow_budget=False))
    assert server.count == 2
    assert _max_tokens(server) == [80, 80]


def test_the_default_still_doubles_the_budget_up_to_three_requests(server, make_llm):
    server.default = truncated('{"score": 0.5, "reason": "beca', usage=(30, 80))
    llm = make_llm()
    with pytest.raises(OutputTruncated):
        asyncio.run(llm.agenerate("rate", schema=Verdict, max_tokens=80))
    assert _max_tokens(server) == [80, 160, 320]
    assert llm.usage.usage.requests == 3
