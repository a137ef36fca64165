"""The OpenAI-compatible chat request on the wire: the body sent through the SDK's generic `post`,
and the answer read from its JSON.

`chat.completions.create` walks every message and the whole JSON schema against the SDK's
TypedDict unions to produce the plain JSON body that the provider already builds, and on the way
back validates optional unions strictly (a verdict answer's token log-probabilities, above all).
Together that was more than half of the client's CPU per request in
`benchmarks/orchestration.py`. `post` (the SDK's documented route for requests it has no method
for) sends the same body through the same client: same headers, timeout and error classes (a
4xx/5xx still raises the SDK's `APIStatusError`). The answer comes back as bytes and is read as
JSON here, through `JsonFields`, so `OpenAICompatible._read_response` reads it exactly as it
reads the SDK's `ChatCompletion`. `tests/models/test_openai_request_body.py` pins both: the same
body as `create`, the same `ModelResponse` as the SDK's own parsing.
"""

from __future__ import annotations

import json
from typing import Any

from assay.errors import MalformedResponse


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


def decode_completion(data: bytes) -> JsonFields:
    """The answer's JSON object, readable by attribute; `MalformedResponse` for anything else."""
    try:
        # Every JSON object becomes a JsonFields as it is parsed, so reading is plain lookups.
        payload = json.loads(data, object_hook=JsonFields)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MalformedResponse(
            f"the provider's answer could not be read ({type(exc).__name__}: {exc})"
        ) from exc
    if not isinstance(payload, dict):
        raise MalformedResponse(
            f"the provider's answer is JSON but not an object: {json.dumps(payload)[:300]}"
        )
    return payload


class JsonFields(dict):
    """A JSON object whose keys read as attributes, an absent key as None (as the SDK's models
    read an optional field the server left out)."""

    # Called only for names the dict itself lacks; dict.get runs in C, which matters for the
    # thousands of token log-probabilities a verdict answer can carry.
    __getattr__ = dict.get

    def model_dump(self) -> dict[str, Any]:
        return dict(self)


__all__ = ["JsonFields", "decode_completion", "post_completion", "wire_body"]
