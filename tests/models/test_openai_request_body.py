"""The OpenAI-compatible provider builds the request body itself and reads the answer's JSON
itself: through its own aiohttp client for the clients assay makes (`openai_http.py`), through
the SDK's generic `post` for a caller's own client (`openai_wire.py`). Both skip `create`'s
parameter transform and the SDK's strict validation of optional unions, most of the client's CPU.
These tests pin that the request the server receives and the answer assay reads are the same as
through `create` and the SDK's parsing, on both routes."""

from __future__ import annotations

import asyncio

import openai
import pytest

from assay.models.providers.openai_compat import OpenAICompatible
from assay.models.types import ChatMessage, ModelRequest, OutputSpec
from tests.models.fake_openai import Behaviour, RecordedRequest, Reply, empty_choices, error, ok

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

# Headers that legitimately differ between two otherwise identical requests on the SDK's route.
VARYING = {"content-length", "x-stainless-retry-count", "x-stainless-read-timeout"}
# What a server reads from the SDK's headers; assay's own client sends these alike.
MEANINGFUL = ("authorization", "content-type", "accept", "host")


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
    assert {k: sent.headers.get(k) for k in MEANINGFUL} == {
        k: reference.headers.get(k) for k in MEANINGFUL
    }
    assert sent.headers["user-agent"].startswith("assay/")
    assert ours == theirs
    assert ours.usage.input_tokens == 11 and ours.usage.output_tokens == 4


@pytest.mark.parametrize("name", ["plain", "system, sampling and provider knobs", "forced tool"])
def test_a_callers_async_client_sends_the_same_request_through_the_sdk(server, name):
    server.default = ok('{"verdicts": [1, 0]}', usage=(11, 4))
    request = REQUESTS[name]
    client = openai.AsyncOpenAI(api_key="sk-test", base_url=server.url, max_retries=0)
    provider = OpenAICompatible("test-model", client=client)

    ours = asyncio.run(provider.complete(request))
    theirs = provider._read_response(_sent_by_create(provider, request), request)

    sent, reference = server.chat_requests
    assert sent.body == reference.body
    assert {k: v for k, v in sent.headers.items() if k not in VARYING} == {
        k: v for k, v in reference.headers.items() if k not in VARYING
    }
    assert ours == theirs


def test_headers_from_the_environment_and_the_caller_are_sent(server, monkeypatch):
    monkeypatch.setenv("OPENAI_ORG_ID", "org-42")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-7")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    server.default = ok("yes")
    provider = OpenAICompatible(
        "test-model", base_url=server.url, default_headers={"X-Team": "evals"}
    )

    asyncio.run(provider.complete(REQUESTS["plain"]))

    [sent] = server.chat_requests
    assert sent.headers["authorization"] == "Bearer sk-from-env"
    assert sent.headers["openai-organization"] == "org-42"
    assert sent.headers["openai-project"] == "proj-7"
    assert sent.headers["x-team"] == "evals"


def test_embeddings_are_read_alike_on_both_routes(server):
    from tests.models.fake_openai import embed

    server.embedding_default = embed(reverse=True)  # data out of order: read by index
    ours_provider = OpenAICompatible("emb-model", base_url=server.url, api_key="sk-test")
    client = openai.AsyncOpenAI(api_key="sk-test", base_url=server.url, max_retries=0)
    sdk_provider = OpenAICompatible("emb-model", client=client)

    ours = asyncio.run(ours_provider.embed(["one", "two words", "three more words"]))
    theirs = asyncio.run(sdk_provider.embed(["one", "two words", "three more words"]))

    assert ours == theirs
    vectors, tokens = ours
    assert len(vectors) == 3 and tokens == 9
    assert vectors[0] != vectors[1]


def test_a_callers_sync_client_takes_the_same_route(server):
    server.default = ok('{"verdicts": [1]}')
    client = openai.OpenAI(api_key="sk-test", base_url=server.url, max_retries=0)
    provider = OpenAICompatible("test-model", client=client)

    answer = asyncio.run(provider.complete(REQUESTS["json schema"]))

    assert answer.generations[0].text == '{"verdicts": [1]}'
    [sent] = server.chat_requests
    assert sent.body["response_format"]["json_schema"]["name"] == "Verdicts"


@pytest.mark.parametrize("route", ["assay's client", "the caller's SDK client"])
def test_error_statuses_become_the_same_assay_errors_on_both_routes(server, route):
    from assay.errors import MalformedResponse, ProviderError, RateLimited

    if route == "assay's client":
        provider = OpenAICompatible("test-model", base_url=server.url, api_key="sk-test")
    else:
        client = openai.AsyncOpenAI(api_key="sk-test", base_url=server.url, max_retries=0)
        provider = OpenAICompatible("test-model", client=client)
    server.script(error(400, "bad field"), empty_choices(), error(429, "slow down"))

    async def three_calls() -> list[BaseException]:
        outcomes = []
        for _ in range(3):  # on one loop: a caller's async client belongs to its loop
            try:
                await provider.complete(REQUESTS["plain"])
            except Exception as exc:
                outcomes.append(exc)
        return outcomes

    bad_request, malformed, limited = asyncio.run(three_calls())

    assert isinstance(bad_request, ProviderError) and not isinstance(bad_request, RateLimited)
    assert bad_request.status == 400 and "bad field" in str(bad_request)
    assert isinstance(malformed, MalformedResponse)
    assert isinstance(limited, RateLimited)
    assert limited.status == 429 and "slow down" in limited.body


class Payload(Behaviour):
    """Answers 200 with exactly this body."""

    def __init__(self, body: object) -> None:
        self.body = body

    def respond(self, request: RecordedRequest) -> Reply:
        if isinstance(self.body, bytes):
            return Reply(200, None, raw=self.body)
        return Reply(200, self.body)  # type: ignore[arg-type]


def _choice(**message: object) -> dict:
    return {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}


ODD_BODIES = {
    "content null, no usage": {"choices": [_choice(content=None)], "model": "m"},
    "unknown fields everywhere": {
        "choices": [{**_choice(content="hi", refusal=None, audio=None), "extra": 1}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "prompt_tokens_details": {}},
        "system_fingerprint": "fp",
        "service_tier": "default",
    },
    "cut at the length limit": {
        "choices": [{**_choice(content="1. yes\n2."), "finish_reason": "length"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 64},
    },
    "logprobs without alternatives": {
        "choices": [
            {
                **_choice(content="yes"),
                "logprobs": {"content": [{"token": "yes", "logprob": -0.1, "bytes": None}]},
            }
        ]
    },
}


@pytest.mark.parametrize("name", list(ODD_BODIES))
def test_odd_but_valid_answers_are_read_as_the_sdk_reads_them(server, name):
    server.default = Payload(ODD_BODIES[name])
    request = REQUESTS["plain"]
    provider = OpenAICompatible("test-model", base_url=server.url, api_key="sk-test")

    ours = asyncio.run(provider.complete(request))
    theirs = provider._read_response(_sent_by_create(provider, request), request)

    assert ours == theirs


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"\xff\xfe not utf-8", "could not be read"),
        (b"<html>502 Bad Gateway</html>", "could not be read"),
        (b"[1, 2]", "not an object"),
        ({"choices": []}, "no choices"),
        ({"choices": [{"index": 0, "finish_reason": "stop"}]}, "shape of a completion"),
    ],
)
def test_unreadable_answers_are_malformed_responses(server, body, says):
    from assay.errors import MalformedResponse

    server.default = Payload(body)
    provider = OpenAICompatible("test-model", base_url=server.url, api_key="sk-test")

    with pytest.raises(MalformedResponse, match=says):
        asyncio.run(provider.complete(REQUESTS["plain"]))
