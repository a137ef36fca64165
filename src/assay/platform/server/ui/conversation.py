"""A session's traces as a conversation: per trace one turn holding what the user said (the
last user message of the trace's input, else its input text), the tool calls made on the way
(traced functions and retrievals, and tool calls an LLM asked for), and the assistant's answer,
or the error that took its place. No queries: `sessions.py` reads the traces."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

TEXT_MAX = 4000  # characters of a message shown in the conversation (the trace page has all)
TOOL_KINDS = ("function", "tool", "retrieval")


@dataclass
class ToolCall:
    name: str
    arguments: str = ""
    result: str = ""
    error: str | None = None


@dataclass
class Turn:
    trace: Any  # the LoggedTrace
    user: str
    assistant: str
    error: str | None
    tools: list[ToolCall] = field(default_factory=list)


def _short(value: Any, limit: int = TEXT_MAX) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return "" if content is None else str(content)


def user_text(trace: Any) -> str:
    """What the user said in this turn: the last user message of a chat input, else its text."""
    value = trace.input
    messages = value.get("messages") if isinstance(value, dict) else value
    if isinstance(messages, list):
        said = [_content(m) for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        if said:
            return _short(said[-1])
    return _short(trace.input_text or value)


def tool_calls(spans: Any) -> list[ToolCall]:
    """The tool calls of a trace in the order made: spans of a tool kind below the root (the
    root is the turn itself), and the calls an LLM span asked for that no span records."""
    spans = sorted(
        (s for s in spans or [] if isinstance(s, dict)),
        key=lambda s: str(s.get("started_at") or ""),
    )
    calls: list[ToolCall] = []
    named = set()
    for span in spans:
        if span.get("kind") in TOOL_KINDS and span.get("parent_id"):
            name = str(span.get("name") or "")
            named.add(name)
            calls.append(
                ToolCall(
                    name,
                    _short(span.get("input"), 300),
                    _short(span.get("output"), 600),
                    str(span["error"]) if span.get("error") else None,
                )
            )
    for span in spans:
        asked = (span.get("attributes") or {}).get("tool_calls")
        for call in asked if isinstance(asked, list) else []:
            if not isinstance(call, dict):
                continue
            inner = call.get("function")
            function: dict[str, Any] = inner if isinstance(inner, dict) else call
            name = str(function.get("name") or "")
            if name and name not in named:
                calls.append(ToolCall(name, _short(function.get("arguments"), 300)))
    return calls


def conversation(traces: list[Any]) -> list[Turn]:
    return [
        Turn(
            trace=trace,
            user=user_text(trace),
            assistant=_short(trace.output_text or trace.output),
            error=trace.error,
            tools=tool_calls(trace.spans),
        )
        for trace in traces
    ]


__all__ = ["ToolCall", "Turn", "conversation", "tool_calls", "user_text"]
