"""The OpenAI batch client against the loopback fake: the JSONL it uploads, the states it reads,
each line's answer or error, cancel and a refused file; the journal's record of batches."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from assay.engine.batch.journal import BatchJournal
from assay.errors import ProviderError, RateLimited
from assay.models import llm_factory
from assay.models.providers.batch_api import BatchState, batch_client_for
from assay.models.providers.openai_batch import OpenAIBatches
from assay.models.types import ChatMessage, ModelRequest, ModelResponse, OutputSpec
from tests.engine.batch.fake_batches import FakeBatches, serve
from tests.models.fake_openai import ok


@pytest.fixture
def server() -> Iterator[FakeBatches]:
    yield from serve()


def client(server: FakeBatches) -> OpenAIBatches:
    judge = llm_factory("openai/gpt-4o-mini", base_url=server.url, api_key="sk-test", cache=False)
    found = batch_client_for(judge.provider)
    assert isinstance(found, OpenAIBatches)
    return found


def request(text: str, **params) -> ModelRequest:
    return ModelRequest((ChatMessage(role="user", content=text),), params=params)


async def until_ended(batches: OpenAIBatches, batch_id: str) -> list[BatchState]:
    states = [await batches.poll(batch_id)]
    while not states[-1].ended:
        states.append(await batches.poll(batch_id))
    return states


def test_a_batch_goes_up_as_jsonl_and_its_answers_come_back_as_responses(server):
    server.answer = ok("four", usage=(7, 1))
    batches = client(server)
    asked = {
        "a": request("2+2?", max_tokens=5),
        "b": ModelRequest(
            (ChatMessage(role="user", content="json"),),
            output=OutputSpec(name="Answer", schema={"type": "object"}, mode="json_schema"),
        ),
    }

    async def scenario() -> tuple[str, list[BatchState], dict]:
        batch_id = await batches.submit(asked)
        states = await until_ended(batches, batch_id)
        return batch_id, states, await batches.results(states[-1], asked)

    batch_id, states, answers = asyncio.run(scenario())

    made = server.created()[0]
    assert made.id == batch_id
    first, second = made.lines
    assert first == {
        "custom_id": "a",
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {
            "model": "gpt-4o-mini",
            "messages": [{"role": "user", "content": "2+2?"}],
            "max_tokens": 5,
        },
    }
    assert second["body"]["response_format"]["type"] == "json_schema"
    assert [state.status for state in states] == ["validating", "finalizing", "completed"]
    assert states[-1].total == states[-1].done == 2
    assert all(isinstance(answer, ModelResponse) for answer in answers.values())
    assert answers["a"].text == "four"
    assert (answers["a"].usage.input_tokens, answers["a"].usage.output_tokens) == (7, 1)


def test_lines_that_fail_carry_the_error_a_live_call_would_have(server):
    server.line_errors.extend([400, 429])
    batches = client(server)
    asked = {"bad": request("x"), "busy": request("y"), "fine": request("z")}

    async def scenario() -> dict:
        states = await until_ended(batches, await batches.submit(asked))
        return await batches.results(states[-1], asked)

    answers = asyncio.run(scenario())

    assert isinstance(answers["bad"], ProviderError) and answers["bad"].status == 400
    assert not answers["bad"].transient  # asked again, it would fail again
    assert isinstance(answers["busy"], RateLimited) and answers["busy"].transient
    assert isinstance(answers["fine"], ModelResponse)


def test_a_cancelled_batch_leaves_its_lines_unanswered(server):
    server.delay = 60.0
    batches = client(server)
    asked = {"a": request("x"), "b": request("y")}

    async def scenario() -> tuple[list[BatchState], dict]:
        batch_id = await batches.submit(asked)
        await batches.poll(batch_id)
        await batches.cancel(batch_id)
        states = await until_ended(batches, batch_id)
        return states, await batches.results(states[-1], asked)

    states, answers = asyncio.run(scenario())

    assert states[-1].status == "cancelled" and states[-1].failed == 2
    assert answers == {}  # nothing answered: the run asks them again


def test_a_file_the_provider_refuses_fails_every_line_with_its_reason(server):
    server.fail_validation = True
    batches = client(server)
    asked = {"a": request("x")}

    async def scenario() -> tuple[BatchState, dict]:
        state = await batches.poll(await batches.submit(asked))
        return state, await batches.results(state, asked)

    state, answers = asyncio.run(scenario())

    assert state.status == "failed" and state.ended
    assert isinstance(answers["a"], ProviderError) and answers["a"].status == 400
    assert "bad file" in str(answers["a"])


def test_the_journal_finds_the_batch_carrying_a_request_after_a_torn_line(tmp_path):
    path = tmp_path / "batches.jsonl"
    journal = BatchJournal(path)
    journal.submitted("b1", "e", {"r1": "k1", "r2": "k2"}, [[0, "m"]])
    journal.ended("b1", "completed", ["r2"])
    journal.close()
    with path.open("a") as handle:
        handle.write('{"event": "submitted", "batch": "b2", "requ')  # killed mid-line

    again = BatchJournal(path)
    assert again.carrier("e", "k1") == ("b1", "r1")
    assert again.carrier("e", "k2") is None  # it failed there: not looked up again
    assert again.carrier("other endpoint", "k1") is None
    again.submitted("b3", "e", {"r2": "k2"}, [])
    again.close()
    assert BatchJournal(path).carrier("e", "k2") == ("b3", "r2")


def test_anthropic_lines_that_failed_or_were_never_reached():
    from assay.models.providers.anthropic_batch import _joined

    asked = request("x")
    invalid = {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}

    refused = _joined([{"type": "errored", "error": invalid}], asked, "claude")
    busy = _joined([{"type": "errored", "error": overloaded}], asked, "claude")

    assert isinstance(refused, ProviderError) and refused.status == 400 and not refused.transient
    assert "invalid_request_error: no" in str(refused)
    assert isinstance(busy, RateLimited) and busy.status == 529 and busy.transient
    assert _joined([{"type": "expired"}], asked, "claude") is None
    assert _joined([{"type": "canceled"}], asked, "claude") is None
    assert _joined([None], asked, "claude") is None  # a line the results never listed
