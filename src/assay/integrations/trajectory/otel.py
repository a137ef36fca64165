"""What an OpenTelemetry span's attributes say an LLM call was sent and answered, or a tool call
did, in the two conventions the platform ingests (the span keeps its attributes as received).

GenAI semantic conventions: `gen_ai.input.messages` / `gen_ai.output.messages` (messages with
`parts`), the older indexed `gen_ai.prompt.N.*` / `gen_ai.completion.N.*` (with
`tool_calls.M.name` / `.arguments`), the message events (`gen_ai.user.message`, ...,
`gen_ai.choice`), and tool spans (`gen_ai.operation.name = execute_tool`, `gen_ai.tool.name`,
`gen_ai.tool.call.arguments` / `result`).

OpenInference: `llm.input_messages.N.message.*` / `llm.output_messages.N.message.*` (`role`,
`content` or `contents.K.message_content.text`, `tool_calls.M.tool_call.function.name` /
`.arguments`), and tool spans (`openinference.span.kind = TOOL`, `tool.name`, `input.value` /
`output.value`).

Messages come out as plain chat dicts (`role`, `content`, `tool_calls`), read by `chat.py`.
"""

from __future__ import annotations

import json
from typing import Any

_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
    "gen_ai.choice": "assistant",
}
LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "completion"})


def decoded(value: Any) -> Any:
    """A JSON text attribute as its value (attributes hold JSON as strings)."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def nested(attributes: dict[str, Any], prefix: str) -> list[Any]:
    """`prefix.0.a.1.b = v` attributes as `[{"a": [None, {"b": v}]}]`: numbered segments become
    list positions, in order of their numbers."""
    tree: dict[str, Any] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix + "."):
            continue
        node = tree
        segments = key[len(prefix) + 1 :].split(".")
        for segment in segments[:-1]:
            node = node.setdefault(segment, {})
            if not isinstance(node, dict):
                break
        else:
            node[segments[-1]] = value
    return _as_lists(tree) if tree and all(k.isdigit() for k in tree) else []


def _as_lists(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    if node and all(key.isdigit() for key in node):
        return [_as_lists(node[key]) for key in sorted(node, key=int)]
    return {key: _as_lists(value) for key, value in node.items()}


def _openinference(messages: list[Any]) -> list[dict[str, Any]]:
    out = []
    for item in messages:
        message = item.get("message") if isinstance(item, dict) else None
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if content is None and isinstance(message.get("contents"), list):
            content = [
                {"type": "text", "text": c.get("message_content", {}).get("text", "")}
                for c in message["contents"]
                if isinstance(c, dict)
            ]
        calls = []
        for call in message.get("tool_calls") or []:
            function = (call or {}).get("tool_call", {}).get("function", {})
            calls.append({"name": function.get("name"), "arguments": function.get("arguments")})
        out.append({"role": message.get("role", "user"), "content": content, "tool_calls": calls})
    return out


def _legacy(messages: list[Any]) -> list[dict[str, Any]]:
    out = []
    for message in messages:
        if isinstance(message, dict):
            calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
            out.append({**message, "content": decoded(message.get("content")), "tool_calls": calls})
    return out


def _events(events: list[dict[str, Any]], output: bool) -> list[dict[str, Any]]:
    out = []
    for event in events:
        role = _EVENT_ROLES.get(event.get("name", ""))
        if role is None or (event["name"] == "gen_ai.choice") != output:
            continue
        attributes = event.get("attributes") or {}
        body = decoded(attributes.get("message", attributes.get("gen_ai.event.content")))
        message = dict(body) if isinstance(body, dict) else {}
        if "content" in attributes:
            message["content"] = decoded(attributes["content"])
        if "tool_calls" in attributes:
            message["tool_calls"] = decoded(attributes["tool_calls"])
        message.setdefault("role", attributes.get("role", role))
        out.append(message)
    return out


def otel_messages(attributes: dict[str, Any], output: bool) -> list[dict[str, Any]] | None:
    """The span's input (or output) messages, or None when its attributes hold none."""
    genai = decoded(attributes.get("gen_ai.output.messages" if output else "gen_ai.input.messages"))
    if isinstance(genai, list):
        return [m for m in genai if isinstance(m, dict)]
    indexed = nested(attributes, "gen_ai.completion" if output else "gen_ai.prompt")
    if indexed:
        return _legacy(indexed)
    openinference = nested(attributes, "llm.output_messages" if output else "llm.input_messages")
    if openinference:
        return _openinference(openinference)
    events = _events(attributes.get("otel.events") or [], output)
    return events or None


def is_otel_llm(attributes: dict[str, Any]) -> bool:
    return (
        str(attributes.get("openinference.span.kind", "")).upper() == "LLM"
        or attributes.get("gen_ai.operation.name") in LLM_OPERATIONS
    )


def otel_tool(attributes: dict[str, Any], span_name: str) -> dict[str, Any] | None:
    """A tool span's name, arguments and result; None for a span that is not a tool call."""
    kind = str(attributes.get("openinference.span.kind", "")).upper()
    if kind == "TOOL":
        return {
            "name": attributes.get("tool.name") or span_name,
            "args": decoded(attributes.get("input.value")),
            "result": decoded(attributes.get("output.value")),
        }
    if attributes.get("gen_ai.operation.name") == "execute_tool" or (
        "gen_ai.tool.name" in attributes and "gen_ai.tool.call.arguments" in attributes
    ):
        return {
            "name": attributes.get("gen_ai.tool.name") or span_name,
            "args": decoded(attributes.get("gen_ai.tool.call.arguments")),
            "result": decoded(attributes.get("gen_ai.tool.call.result")),
        }
    return None


def is_otel(attributes: dict[str, Any]) -> bool:
    """Whether the span came in over OTLP (the platform's own spans have no such attributes)."""
    return any(
        key.startswith(("gen_ai.", "llm.", "openinference.", "input.value", "tool."))
        for key in attributes
    )


__all__ = ["decoded", "is_otel", "is_otel_llm", "nested", "otel_messages", "otel_tool"]
