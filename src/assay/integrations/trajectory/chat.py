"""Chat messages as an LLM call recorded them, in any provider's shape, as assay messages.

A trace stores what each LLM call was sent and answered in the shape of the API that was called;
this module reads them all into `HumanMessage`, `AIMessage` (with its `ToolCall`s) and
`ToolMessage`:

- OpenAI chat completions: `{"role", "content", "tool_calls": [{"function": {"name",
  "arguments"}}]}`, `role: "tool"` outputs, the legacy `function_call` / `role: "function"`;
- Anthropic messages: content blocks `text`, `tool_use` (a call) and `tool_result` (an output,
  sent inside a user message);
- the OpenTelemetry GenAI message parts: `text`, `tool_call`, `tool_call_response`;
- the OpenAI Responses API's items (`function_call`, `function_call_output`), read by
  `assay.integrations.openai_agents`.

System and developer messages are left out (they configure the application; assay's message
types have no system role). A part that is not text (an image, a file) is kept as `[image part]`
so the message still says something was there. A tool output whose call the record does not hold
(the application trimmed its history) is left out: a conversation cannot start with one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from assay.integrations._messages import ConvertedMessage, parse_arguments
from assay.schema.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})
_CALL_PARTS = frozenset({"tool_use", "tool_call", "function_call"})
_OUTPUT_PARTS = frozenset({"tool_result", "tool_call_response", "function_call_output"})
_SILENT_PARTS = frozenset({"thinking", "redacted_thinking", "reasoning"})
_ROLES = {
    "user": "human",
    "human": "human",
    "assistant": "ai",
    "ai": "ai",
    "model": "ai",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}
_RESPONSES_TYPES = frozenset({"function_call", "function_call_output", "mcp_call"})


def as_text(value: Any) -> str:
    """A value as message text: strings as they are, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def call_of(raw: Any, where: str) -> ToolCall | None:
    """One tool call in any of the shapes above (None when it names no tool)."""
    if not isinstance(raw, Mapping):
        return None
    inner = raw.get("function")
    function: Mapping[str, Any] = inner if isinstance(inner, Mapping) else raw
    name = function.get("name")
    if not isinstance(name, str) or not name:
        return None
    arguments = function.get("arguments", function.get("args", function.get("input")))
    try:
        args = parse_arguments(arguments, index=0, what=where, field=f"{name} arguments")
    except ValueError:  # arguments that are not a JSON object: kept, not guessed at
        args = {"_raw": as_text(arguments)}
    return ToolCall(name=name, args=args)


def _parts(content: Any) -> list[Any]:
    if content is None:
        return []
    if isinstance(content, (str, Mapping)):
        return [content]
    return list(content) if isinstance(content, (list, tuple)) else [as_text(content)]


def _part_text(part: Any) -> str | None:
    """The text of a content part, a placeholder for media, None for parts carried elsewhere."""
    if isinstance(part, str):
        return part
    if not isinstance(part, Mapping):
        return as_text(part)
    kind = part.get("type")
    if kind in _CALL_PARTS or kind in _OUTPUT_PARTS or kind in _SILENT_PARTS:
        return None
    if kind in _TEXT_PARTS or kind is None or kind == "refusal":
        text = part.get("text", part.get("content", part.get("refusal")))
        if isinstance(text, str):
            return text
        return as_text(text)
    return f"[{kind} part]"


def _output_content(part: Mapping[str, Any]) -> str:
    value = part.get("content", part.get("response", part.get("output", part.get("result"))))
    if isinstance(value, list):  # Anthropic: a tool result may itself be content blocks
        texts = [t for t in (_part_text(p) for p in value) if t is not None]
        return "".join(texts)
    return as_text(value)


def read_message(message: Any, where: str) -> list[ConvertedMessage]:
    """One chat message as assay messages: a user message may hold tool outputs and text, an
    assistant message its text and calls. Empty for system messages and unknown roles."""
    if isinstance(message, str):
        return [HumanMessage(content=message)]
    if not isinstance(message, Mapping):
        return []
    kind = _ROLES.get(str(message.get("role", "")).lower())
    if kind is None:
        return []
    parts = _parts(message.get("content", message.get("parts")))
    texts = [t for t in (_part_text(p) for p in parts) if t is not None]
    text = "".join(texts)
    if kind == "ai":
        calls = [call_of(c, where) for c in message.get("tool_calls") or []]
        calls += [
            call_of(p, where)
            for p in parts
            if isinstance(p, Mapping) and p.get("type") in _CALL_PARTS
        ]
        if message.get("function_call"):
            calls.append(call_of(message["function_call"], where))
        found = [c for c in calls if c is not None]
        return [AIMessage(content=text, tool_calls=found or None)]
    outputs: list[ConvertedMessage] = [
        ToolMessage(content=_output_content(p))
        for p in parts
        if isinstance(p, Mapping) and p.get("type") in _OUTPUT_PARTS
    ]
    if kind == "tool":
        return outputs or [ToolMessage(content=text)]
    human = [HumanMessage(content=text)] if text or not outputs else []
    return [*outputs, *human]


def read_messages(messages: Any, where: str) -> list[ConvertedMessage]:
    """A recorded request's messages (a list, or the Responses API's string input)."""
    if messages is None:
        return []
    if isinstance(messages, str):
        return [HumanMessage(content=messages)]
    if isinstance(messages, Mapping):
        messages = messages.get("messages", [messages])
    if not isinstance(messages, (list, tuple)):
        return []
    if any(isinstance(m, Mapping) and m.get("type") in _RESPONSES_TYPES for m in messages):
        from assay.integrations.openai_agents import convert_to_ragas_messages

        return list(convert_to_ragas_messages([m for m in messages if isinstance(m, Mapping)]))
    out: list[ConvertedMessage] = []
    for position, message in enumerate(messages):
        out.extend(read_message(message, f"{where} message {position}"))
    return out


def read_answer(output: Any, where: str) -> AIMessage | None:
    """What an LLM call answered: text, OpenAI tool calls (a list), or assistant messages."""
    if output is None:
        return None
    if isinstance(output, str):
        return AIMessage(content=output)
    if (
        isinstance(output, Mapping)
        and isinstance(output.get("choices"), list)
        and output["choices"]
    ):
        output = (
            output["choices"][0].get("message", output)
            if isinstance(output["choices"][0], Mapping)
            else output
        )
    items = output if isinstance(output, (list, tuple)) else [output]
    calls = [
        call_of(item, where) for item in items if isinstance(item, Mapping) and "role" not in item
    ]
    if items and all(c is not None for c in calls) and len(calls) == len(items):
        return AIMessage(content="", tool_calls=[c for c in calls if c is not None])
    texts: list[str] = []
    found: list[ToolCall] = []
    for message in read_messages(list(items), where):
        if isinstance(message, AIMessage):
            texts.append(message.content)
            found.extend(message.tool_calls or [])
    if not texts and not found:
        return AIMessage(content=as_text(output))
    return AIMessage(content="".join(texts), tool_calls=found or None)


def in_order(messages: list[ConvertedMessage]) -> list[ConvertedMessage]:
    """The messages without tool outputs that answer no call (history the application cut)."""
    kept: list[ConvertedMessage] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            previous = kept[-1] if kept else None
            answers_call = isinstance(previous, ToolMessage) or (
                isinstance(previous, AIMessage) and bool(previous.tool_calls)
            )
            if not answers_call:
                continue
        kept.append(message)
    return kept


__all__ = ["as_text", "call_of", "in_order", "read_answer", "read_message", "read_messages"]
