"""The OpenAI-compatible chat request on the wire: the body `create` would send, and the answer
read from its JSON form.

`chat.completions.create` walks every message and the whole JSON schema against the SDK's
TypedDict unions to produce the plain JSON body that the provider already builds, and on the way
back validates optional unions strictly (a verdict answer's token log-probabilities, above all).
Together that was more than half of the client's CPU per request in
`benchmarks/orchestration.py`. So the provider builds the body itself (`wire_body`), sends it
with assay's own client (`openai_http.py`) or, for a caller's client, the SDK's generic `post`
(`post_completion`: same headers, timeout and error classes), and reads the answer here, from
plain JSON: `decode_completion` parses the bytes, `read_completion` / `read_embeddings` read the
fields. An SDK response object is read through its `model_dump()` (`json_form`), so there is one
reader for every route. `tests/models/test_openai_request_body.py` pins both: the same body as
`create`, the same `ModelResponse` as reading the SDK's own parse.
"""

from __future__ import annotations

import json
from typing import Any

from assay.errors import MalformedResponse
from assay.models.types import Generation, TokenLogprob


def wire_body(arguments: dict[str, Any]) -> dict[str, Any]:
    """The JSON body `create(**arguments)` would send (`extra_body` merged in, as the SDK does)."""
    body = dict(arguments)
    extra = body.pop("extra_body", None)
    if extra:
        body.update(extra)
    return body


def post_completion(client: Any, arguments: dict[str, Any]) -> Any:
    """Send `arguments` (the keyword arguments of `create`) through an SDK client's `post`; the
    raw answer bytes (awaitable for an async client)."""
    return client.post("/chat/completions", body=wire_body(arguments), cast_to=bytes)


def decode_completion(data: bytes) -> dict[str, Any]:
    """The answer's JSON object; `MalformedResponse` for anything else."""
    try:
        payload = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MalformedResponse(
            f"the provider's answer could not be read ({type(exc).__name__}: {exc})"
        ) from exc
    if not isinstance(payload, dict):
        raise MalformedResponse(
            f"the provider's answer is JSON but not an object: {json.dumps(payload)[:300]}"
        )
    return payload


def json_form(raw: Any) -> dict[str, Any]:
    """An answer as plain JSON: as decoded, or an SDK (pydantic) response object dumped."""
    if isinstance(raw, dict):
        return raw
    dump = getattr(raw, "model_dump", None)
    if dump is None:
        raise MalformedResponse(f"the client returned a {type(raw).__name__}, not a completion")
    dumped: dict[str, Any] = dump()
    return dumped


def read_completion(
    payload: dict[str, Any], *, tool_call: bool
) -> tuple[list[Generation], int, int, str | None]:
    """Generations, input and output tokens, and the model name of a chat completion's JSON.
    With `tool_call`, a generation's text is the first tool call's arguments. A field of the
    wrong shape raises KeyError / TypeError / AttributeError, which the caller reports."""
    generations = []
    for choice in payload.get("choices") or ():
        message = choice["message"]
        text = message.get("content") or ""
        calls = message.get("tool_calls")
        if tool_call and calls:
            text = calls[0]["function"].get("arguments") or ""
        generations.append(
            Generation(
                text=text,
                finish_reason=choice.get("finish_reason"),
                logprobs=_logprobs(choice.get("logprobs")),
            )
        )
    if not generations:
        raise MalformedResponse(f"the provider returned no choices: {json.dumps(payload)[:300]}")
    usage = payload.get("usage") or {}
    return (
        generations,
        usage.get("prompt_tokens") or 0,
        usage.get("completion_tokens") or 0,
        payload.get("model"),
    )


def read_embeddings(payload: dict[str, Any]) -> tuple[list[list[float]], int]:
    """The vectors, in input order, and the prompt tokens of an embeddings answer's JSON."""
    ordered = sorted(payload.get("data") or (), key=lambda item: item["index"])
    usage = payload.get("usage") or {}
    return [list(item["embedding"]) for item in ordered], usage.get("prompt_tokens") or 0


def _logprobs(logprobs: dict[str, Any] | None) -> list[TokenLogprob] | None:
    # Plain subscripts: a verdict answer carries ten alternatives for every token, and this
    # loop was a tenth of the client's CPU when it read them by attribute.
    content = logprobs.get("content") if logprobs else None
    if not content:
        return None
    return [
        TokenLogprob(
            token=item["token"],
            logprob=item["logprob"],
            top={alt["token"]: alt["logprob"] for alt in item.get("top_logprobs") or ()},
        )
        for item in content
    ]


__all__ = [
    "decode_completion",
    "json_form",
    "post_completion",
    "read_completion",
    "read_embeddings",
    "wire_body",
]
