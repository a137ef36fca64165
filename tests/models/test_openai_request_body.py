"""The OpenAI-compatible provider sends chat requests through the SDK's generic `post` (to skip
`create`'s parameter transform, a large share of the client's CPU). These tests pin that the
request the server receives and the answer assay reads are the same as through `create`."""

from __future__ import annotations

import asyncio

import openai
import pytest

from assay.models.providers.openai_compat import OpenAICompatible
from assay.models.types import ChatMessage, ModelRequest, OutputSpec
from tests.models.fake_openai import empty_choices, error, ok

SCHEMA = {
    "type": "object",
    "properties": {"verdicts": {"type": "array", "items": {"type": "integer"}}},
    "required": ["verdicts"],
}

REQUESTS = {
    "plain": ModelRequest(messages=(ChatMessage(role="user", content="Say yes"),)),
    "system, sampling and provider knobs": ModelRequest(
        messages=(
            ChatMessage(role="system", content="You judge."),
            ChatMessage(role="user", content="Is ünïcode kept? 日本語"),
        ),
        n=3,
        params={
            "temperature": 0.2,
            "max_tokens": 64,
            "seed": 7,
            "logprobs": True,
            "top_logprobs": 3,
            "stop": ["\n\n"],
            "guided_json": SCHEMA,  # not an OpenAI field: sent as extra_body
        },
    ),
    "json schema": ModelRequest(
        messages=(ChatMessage(role="user", content="verdicts please"),),
        output=OutputSpec(name="Verdicts", schema=SCHEMA, mode="json_schema"),
    ),
    "forced tool": ModelRequest(
        messages=(ChatMessage(role="user", content="verdicts please"),),
        output=OutputSpec(name="Verdicts", schema=SCHEMA, mode="tool"),
    ),
    "json object": ModelRequest(
        messages=(ChatMessage(role="user", content="an object"),),
        output=OutputSpec(name="Verdicts", schema=SCHEMA, mode="json_object"),
    ),
    "image parts": ModelRequest(
        messages=(
            ChatMessage(
                role="user",
                content=[
                    {"type": "text", "text": "what is this?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                ],
            ),
        ),
    ),
}

# Headers that legitimately differ between two otherwise identical requests.
VARYING = {"content-length", "x-stainless-retry-count", "x-stainless-read-timeout"}


def _sent_by_create(provider: OpenAICompatible, request: ModelRequest):
    arguments = provider._arguments(request)

    async def call():
        client = openai.AsyncOpenAI(api_key="sk-test", base_url=provider.base_url, max_retries=0)
        try:
            return await client.chat.completions.create(**arguments)
        finally:
            await client.close()

    return asyncio.run(call())


@pytest.mark.parametrize("name", list(REQUESTS))
def test_the_body_and_the_answer_are_those_of_create(server, name):
    server.default = ok('{"verdicts": [1, 0]}', usage=(11, 4))
    request = REQUESTS[name]
    provider = OpenAICompatible("test-model", base_url=server.url, api_key="sk-test")

    ours = asyncio.run(provider.complete(request))
    theirs = provider._read_response(_sent_by_create(provider, request), request)

    sent, reference = server.chat_requests
    assert sent.body == reference.body
    assert {k: v for k, v in sent.headers.items() if k not in VARYING} == {
        k: v for k, v in reference.headers.items() if k not in VARYING
    }
    assert ours == theirs
    assert ours.usage.input_tokens == 11 and ours.usage.output_tokens == 4


def test_a_callers_sync_client_takes_the_same_route(server):
    server.default = ok('{"verdicts": [1]}')
    client = openai.OpenAI(api_key="sk-test", base_url=server.url, max_retries=0)
    provider = OpenAICompatible("test-model", client=client)

    answer = asyncio.run(provider.complete(REQUESTS["json schema"]))

    assert answer.generations[0].text == '{"verdicts": [1]}'
    [sent] = server.chat_requests
    assert sent.body["response_format"]["json_schema"]["name"] == "Verdicts"


def test_errors_keep_their_sdk_classes_on_this_route(server):
    from assay.errors import MalformedResponse, ModelError

    provider = OpenAICompatible("test-model", base_url=server.url, api_key="sk-test")
    server.script(error(400, "bad field"), empty_choices())

    with pytest.raises(ModelError) as bad_request:
        asyncio.run(provider.complete(REQUESTS["plain"]))
    with pytest.raises(MalformedResponse):
        asyncio.run(provider.complete(REQUESTS["plain"]))

    assert isinstance(bad_request.value.__cause__, openai.BadRequestError)
    assert "bad field" in str(bad_request.value)
