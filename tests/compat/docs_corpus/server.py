"""A generic OpenAI-compatible server on 127.0.0.1 that answers any request plausibly, unscripted.

Built on the loopback server of the model tests (`tests/models/fake_openai.py`: a real HTTP server,
with logprobs when asked and forced tool calls), with two default behaviours:

- chat completions: when the request carries a JSON schema (`response_format` of type
  `json_schema`, a forced tool call's `parameters`, or a schema stated in the prompt after
  "JSON schema:"), the answer is a JSON instance that validates against it (short strings, numbers
  within their bounds, the first enum value, arrays of one or two items, every required field);
  a lone list-of-strings field echoes a JSON list of strings given in the prompt (what a
  translation into the same language would return). Without a schema the answer imitates the
  request's few-shot examples as a model would: numbered verdict lines ("1. yes", one per numbered
  item of the last message) when the examples answer that way, else the first example answer;
  without examples, a numbered-lines format or a list of allowed answers stated in the prompt is
  followed (first option), and otherwise the text is "yes". A prompt that declares its output
  fields ("Your output fields are: 1. `answer` ...", as DSPy's adapters do) gets each field. JSON mode without a schema gets the
  first example answer if it is JSON, else `{"answer": "yes"}`.
- embeddings: deterministic 8-float vectors derived from a hash of each input text.

Every request is recorded (`server.requests`, `server.count`, `server.chat_requests`,
`server.embedding_requests`), so a test can assert that an example really called the model.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from typing import Any

from tests.models.fake_openai import (
    Behaviour,
    FakeOpenAI,
    Ok,
    RecordedRequest,
    Reply,
)

SHORT_TEXT = "yes"
_MAX_DEPTH = 12


# -- a JSON instance for a JSON schema ----------------------------------------------------------
def instance_for(schema: Any, root: dict[str, Any] | None = None, depth: int = 0) -> Any:
    """A small JSON value that validates against `schema` (draft 2020-12 / OpenAPI subset)."""
    root = root if root is not None else (schema if isinstance(schema, dict) else {})
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return SHORT_TEXT if not isinstance(schema, dict) else None
    if "$ref" in schema:
        return instance_for(_resolve(schema["$ref"], root), root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            options = [
                o for o in schema[key] if not (isinstance(o, dict) and o.get("type") == "null")
            ]
            return instance_for((options or schema[key])[0], root, depth + 1)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            part = (
                _resolve(part["$ref"], root) if isinstance(part, dict) and "$ref" in part else part
            )
            if isinstance(part, dict):
                merged = _merge(merged, part)
        rest = {k: v for k, v in schema.items() if k != "allOf"}
        return instance_for(_merge(merged, rest), root, depth + 1)
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if kinds else "null"
    if kind is None:
        if "properties" in schema:
            kind = "object"
        elif "items" in schema or "prefixItems" in schema:
            kind = "array"
        else:
            kind = "string"
    if kind == "object":
        return _object(schema, root, depth)
    if kind == "array":
        return _array(schema, root, depth)
    if kind == "integer":
        return int(_number(schema, integer=True))
    if kind == "number":
        return _number(schema, integer=False)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string(schema)


def _resolve(ref: str, root: dict[str, Any]) -> Any:
    node: Any = root
    for part in ref.lstrip("#/").split("/"):
        if not part:
            continue
        node = (
            node.get(part.replace("~1", "/").replace("~0", "~"), {})
            if isinstance(node, dict)
            else {}
        )
    return node


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for key, value in b.items():
        if key == "properties" and isinstance(value, dict):
            out["properties"] = {**out.get("properties", {}), **value}
        elif key == "required" and isinstance(value, list):
            out["required"] = sorted(set(out.get("required", [])) | set(value))
        else:
            out[key] = value
    return out


def _object(schema: dict[str, Any], root: dict[str, Any], depth: int) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    out = {name: instance_for(sub, root, depth + 1) for name, sub in properties.items()}
    extra = schema.get("additionalProperties")
    minimum = int(schema.get("minProperties") or 0)
    if not properties and isinstance(extra, dict):
        out["key"] = instance_for(extra, root, depth + 1)
    while len(out) < minimum:
        out[f"key{len(out)}"] = instance_for(
            extra if isinstance(extra, dict) else {}, root, depth + 1
        )
    return out


def _array(schema: dict[str, Any], root: dict[str, Any], depth: int) -> list[Any]:
    prefix = schema.get("prefixItems") or []
    items = schema.get("items")
    out = [instance_for(sub, root, depth + 1) for sub in prefix]
    low = int(schema.get("minItems") or 0)
    high = schema.get("maxItems")
    want = max(low, len(prefix) + (1 if isinstance(items, dict) else 0))
    if isinstance(items, dict) and depth < 4 and want < 2:
        want = 2  # one or two items: two where the schema allows it, to look like a real list
    if high is not None:
        want = min(want, int(high))
    if isinstance(items, dict):
        while len(out) < want:
            value = instance_for(items, root, depth + 1)
            if isinstance(value, str) and out:
                value = f"{value} {len(out) + 1}"
            out.append(value)
    if schema.get("uniqueItems"):
        unique: list[Any] = []
        for value in out:
            if value not in unique:
                unique.append(value)
        out = unique
    return out


def _number(schema: dict[str, Any], *, integer: bool) -> float:
    low = schema.get("minimum")
    high = schema.get("maximum")
    if schema.get("exclusiveMinimum") is not None and not isinstance(
        schema["exclusiveMinimum"], bool
    ):
        low = schema["exclusiveMinimum"] + (1 if integer else 1e-6)
    if schema.get("exclusiveMaximum") is not None and not isinstance(
        schema["exclusiveMaximum"], bool
    ):
        high = schema["exclusiveMaximum"] - (1 if integer else 1e-6)
    if low is not None and high is not None:
        value = (low + high) / 2
        if integer:
            value = int(value)
            value = min(max(value, int(low) if low == int(low) else int(low) + 1), int(high))
        return value
    if low is not None:
        return max(1, low) if integer else max(1.0, float(low))
    if high is not None:
        return min(1, high) if integer else min(1.0, float(high))
    return 1 if integer else 1.0


def _string(schema: dict[str, Any]) -> str:
    fmt = schema.get("format")
    if fmt == "date-time":
        return "2024-01-01T00:00:00Z"
    if fmt == "date":
        return "2024-01-01"
    if fmt in ("uri", "url"):
        return "https://example.com"
    if fmt == "email":
        return "user@example.com"
    text = SHORT_TEXT
    low = int(schema.get("minLength") or 0)
    while len(text) < low:
        text += " yes"
    high = schema.get("maxLength")
    if high is not None:
        text = text[: int(high)] or "y"
    return text


# -- where a request states its schema ----------------------------------------------------------
_PROMPT_SCHEMA = re.compile(r"json[ _-]?schema[^{]{0,80}", re.IGNORECASE)


def request_schema(request: RecordedRequest) -> tuple[dict[str, Any] | None, bool]:
    """(the JSON schema the answer must follow, whether the answer must be JSON at all)."""
    body = request.body
    tool = request.forced_tool
    if tool is not None:
        for entry in body.get("tools") or []:
            function = entry.get("function") or {}
            if function.get("name") == tool:
                return function.get("parameters") or {"type": "object"}, True
        return {"type": "object"}, True
    fmt = body.get("response_format")
    if isinstance(fmt, dict):
        if fmt.get("type") == "json_schema":
            spec = fmt.get("json_schema") or {}
            return spec.get("schema") or {"type": "object"}, True
        if fmt.get("type") == "json_object":
            return _schema_in_prompt(request), True
    schema = _schema_in_prompt(request)
    return schema, schema is not None


def _schema_in_prompt(request: RecordedRequest) -> dict[str, Any] | None:
    text = "\n".join(_message_text(m) for m in request.messages)
    decoder = json.JSONDecoder()
    for match in reversed(list(_PROMPT_SCHEMA.finditer(text))):
        start = match.end()
        if start < len(text) and text[start] == "{":
            try:
                value, _ = decoder.raw_decode(text, start)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    return None


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


# -- plausible answers without a schema ---------------------------------------------------------
_NUMBERED = re.compile(r"^\s*(\d+)[.)]\s+(.*\S)?\s*$")
_QUOTED_NUMBERED = re.compile(r"[\"'“]1[.)]\s*([A-Za-z]+)[\"'”]")
_ONE_OF = re.compile(
    r"(?:answer|reply|respond|return)\s+with[^:\n]{0,40}:\s*([^\n.]+?)\s*(?:\.|$)",
    re.IGNORECASE | re.MULTILINE,
)
_ONLY_QUOTED = re.compile(r"only\s+['\"]([^'\"]+)['\"]\s+or\s+['\"]", re.IGNORECASE)


def _last_user_text(request: RecordedRequest) -> str:
    for message in reversed(request.messages):
        if message.get("role") == "user":
            return _message_text(message)
    return ""


def _first_example_answer(request: RecordedRequest) -> str | None:
    """The first assistant turn before the last user message (a few-shot example answer)."""
    messages = request.messages
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    for message in messages[:last_user]:
        if message.get("role") == "assistant":
            text = _message_text(message).strip()
            if text:
                return text
    return None


def _numbered_items(text: str) -> int:
    return sum(1 for line in text.splitlines() if _NUMBERED.match(line))


def _numbered_answer(request: RecordedRequest, label: str) -> str:
    count = max(1, _numbered_items(_last_user_text(request)))
    return "\n".join(f"{k}. {label}" for k in range(1, count + 1))


_OUTPUT_FIELDS = re.compile(
    r"Your output fields are:\s*\n(.*?)(?:\n\S[^\n]*structured|\Z)", re.DOTALL
)
_FIELD = re.compile(r"^\s*\d+\.\s+`([A-Za-z_][A-Za-z0-9_]*)`", re.MULTILINE)


def stated_output_fields(request: RecordedRequest) -> list[str]:
    """Output fields a prompt declares in the "Your output fields are:" form (e.g. DSPy's)."""
    system = "\n".join(_message_text(m) for m in request.messages if m.get("role") == "system")
    match = _OUTPUT_FIELDS.search(system)
    return _FIELD.findall(match.group(1)) if match else []


def text_answer(request: RecordedRequest) -> str:
    fields = stated_output_fields(request)
    if fields:  # the prompt states its reply format: "[[ ## field ## ]]" sections
        body = "".join(f"[[ ## {name} ## ]]\n{SHORT_TEXT}\n\n" for name in fields)
        return body + "[[ ## completed ## ]]"
    example = _first_example_answer(request)
    if example is not None:
        lines = [line for line in example.splitlines() if line.strip()]
        matches = [_NUMBERED.match(line) for line in lines]
        if lines and all(matches) and all(m.group(2) for m in matches):
            return _numbered_answer(request, matches[0].group(2).split()[0])
        return example
    instructions = "\n".join(
        _message_text(m) for m in request.messages if m.get("role") == "system"
    )
    instructions = instructions or _last_user_text(request)
    numbered = _QUOTED_NUMBERED.search(instructions)
    if numbered and _numbered_items(_last_user_text(request)):
        return _numbered_answer(request, numbered.group(1))
    only = _ONLY_QUOTED.search(instructions)
    if only:
        return only.group(1)
    one_of = _ONE_OF.search(instructions)
    if one_of:
        options = [o.strip(" '\"`") for o in re.split(r"\s*(?:/|\bor\b|,)\s*", one_of.group(1))]
        options = [o for o in options if o and len(o.split()) <= 3]
        if len(options) >= 2:
            return options[0]
    return SHORT_TEXT


def _echo_string_list(schema: dict[str, Any], request: RecordedRequest) -> dict[str, Any] | None:
    """For {"field": [str, ...]} schemas: the JSON list of strings the prompt gives, echoed."""
    properties = schema.get("properties") or {}
    if len(properties) != 1:
        return None
    ((name, sub),) = properties.items()
    if not (isinstance(sub, dict) and sub.get("type") == "array"):
        return None
    items = sub.get("items") or {}
    if not (isinstance(items, dict) and items.get("type") == "string"):
        return None
    text = _last_user_text(request)
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\[", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return {name: value}
    return None


class SchemaAnswer(Behaviour):
    """The default chat behaviour: a schema-valid JSON instance, or a plausible short text."""

    def respond(self, request: RecordedRequest) -> Reply:
        schema, wants_json = request_schema(request)
        if schema is not None:
            resolved = schema
            echoed = _echo_string_list(resolved, request) if isinstance(resolved, dict) else None
            text = json.dumps(echoed if echoed is not None else instance_for(schema))
        elif wants_json and stated_output_fields(request):
            text = json.dumps({name: SHORT_TEXT for name in stated_output_fields(request)})
        elif wants_json:
            example = _first_example_answer(request)
            try:
                text = json.dumps(json.loads(example)) if example else ""
            except json.JSONDecodeError:
                text = ""
            text = text or json.dumps({"answer": SHORT_TEXT})
        else:
            text = text_answer(request)
        return Ok(text, usage=(12, 4)).respond(request)


# -- embeddings ---------------------------------------------------------------------------------
EMBEDDING_SIZE = 8


def hash_vector(text: str) -> list[float]:
    """The deterministic vector answered for `text`: 8 floats in [-1, 1] from its SHA-256."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [round(digest[i] / 127.5 - 1.0, 6) for i in range(EMBEDDING_SIZE)]


class HashEmbeddings(Behaviour):
    def respond(self, request: RecordedRequest) -> Reply:
        inputs = request.body.get("input")
        texts = [inputs] if isinstance(inputs, (str, int)) else list(inputs or [])
        data = [
            {"object": "embedding", "index": i, "embedding": hash_vector(str(t))}
            for i, t in enumerate(texts)
        ]
        tokens = 3 * len(texts)
        return Reply(
            200,
            {
                "object": "list",
                "data": data,
                "model": request.body.get("model", "text-embedding-3-small"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )


def generic_server() -> FakeOpenAI:
    server = FakeOpenAI()
    server.default = SchemaAnswer()
    server.embedding_default = HashEmbeddings()
    return server


def serve() -> Iterator[FakeOpenAI]:
    """Generator body of a pytest fixture: start the generic server, yield it, stop it."""
    server = generic_server().start()
    try:
        yield server
    finally:
        server.stop()


__all__ = ["generic_server", "hash_vector", "instance_for", "request_schema", "serve"]
