"""LangChain / LangGraph messages to assay messages (Ragas' `ragas.integrations.langgraph`).

    from assay.integrations.langgraph import convert_to_ragas_messages
    messages = convert_to_ragas_messages(graph.invoke({"messages": [...]})["messages"])

The messages are read by their LangChain `type` ("human", "ai", "tool", "system", "chat"), so
real `langchain_core.messages` objects, their chunks, and the dicts LangGraph's server returns
all work, and nothing from LangChain is imported here.

What each message becomes:
- `HumanMessage` -> `HumanMessage`; `AIMessage` / `AIMessageChunk` -> `AIMessage` whose
  `tool_calls` come from LangChain's parsed `tool_calls` (`None` when there are none);
  `ToolMessage` -> `ToolMessage`.
- `SystemMessage` is left out, as in Ragas: it is the application's configuration, not a turn
  of the conversation, and assay's message types have no system role.
- `ChatMessage` follows its role (user, assistant, tool; system is left out).
- A tool call LangChain could not parse (`invalid_tool_calls`, e.g. arguments that are not
  JSON) and content parts that are not text raise a `DataError` naming the message's index and
  field; Ragas raised `TypeError` for any non-string content.

With `metadata=True` each message keeps its LangChain id and name, a tool message its
`tool_call_id`, an AI message its tool call ids and `usage_metadata` (Ragas accepted the flag
but always dropped the metadata).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from assay.integrations._messages import (
    ConvertedMessage,
    bad_input,
    checked,
    field_of,
    metadata_of,
    parse_arguments,
    text_of,
    tool_call,
)
from assay.schema.messages import AIMessage, HumanMessage, ToolMessage

# Parts of an AI message's content that are carried elsewhere: Anthropic repeats each tool call
# as a `tool_use` part (LangChain parses it into `tool_calls`); reasoning is not the answer.
_AI_SKIPPED_PARTS = frozenset(
    {"tool_use", "tool_call", "thinking", "redacted_thinking", "reasoning", "non_standard"}
)
# LangChain's streamed chunks name their type after their class.
_CHUNK_TYPES = {
    "AIMessageChunk": "ai",
    "HumanMessageChunk": "human",
    "ToolMessageChunk": "tool",
    "SystemMessageChunk": "system",
    "ChatMessageChunk": "chat",
}
_CHAT_ROLES = {"user": "human", "human": "human", "assistant": "ai", "ai": "ai", "tool": "tool"}


def convert_to_ragas_messages(messages: Any, metadata: bool = False) -> list[ConvertedMessage]:
    """Convert LangChain/LangGraph messages (a list, or a graph state with "messages")."""
    if isinstance(messages, Mapping) and "messages" in messages:
        messages = messages["messages"]
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Iterable):
        raise bad_input(0, "input", "messages", "must be a list of LangChain messages")
    converted: list[ConvertedMessage] = []
    for index, message in enumerate(messages):
        one = _convert_one(message, index, metadata)
        if one is not None:
            converted.append(one)
    return checked(converted)


def _convert_one(message: Any, index: int, metadata: bool) -> ConvertedMessage | None:
    kind = field_of(message, "type")
    kind = _CHUNK_TYPES.get(kind, kind)
    if kind == "chat":
        role = field_of(message, "role")
        if role == "system":
            return None
        if role not in _CHAT_ROLES:
            raise bad_input(
                index, "ChatMessage", "role", f"is {role!r}, not user, assistant or tool"
            )
        kind = _CHAT_ROLES[role]
    what = f"{type(message).__name__} message" if not isinstance(message, Mapping) else "message"
    if kind == "system":
        return None
    if kind not in ("human", "ai", "tool"):
        raise bad_input(
            index,
            what,
            "type",
            f"is {kind!r}, not a supported message type (human, ai, tool or system)",
        )
    common = {"id": field_of(message, "id"), "name": field_of(message, "name")}
    if kind == "human":
        content = text_of(field_of(message, "content"), index=index, what=what)
        return HumanMessage(content=content, metadata=metadata_of(metadata, **common))
    if kind == "tool":
        content = text_of(field_of(message, "content"), index=index, what=what)
        meta = metadata_of(metadata, **common, tool_call_id=field_of(message, "tool_call_id"))
        return ToolMessage(content=content, metadata=meta)
    content = text_of(
        field_of(message, "content"), index=index, what=what, skip_types=_AI_SKIPPED_PARTS
    )
    invalid = field_of(message, "invalid_tool_calls") or []
    if invalid:
        bad = invalid[0]
        raise bad_input(
            index,
            what,
            "invalid_tool_calls[0]",
            f"holds a call to {field_of(bad, 'name')!r} LangChain could not parse: "
            f"arguments {field_of(bad, 'args')!r} ({field_of(bad, 'error') or 'not a JSON object'})",
        )
    calls = []
    for position, call in enumerate(field_of(message, "tool_calls") or []):
        field = f"tool_calls[{position}]"
        args = parse_arguments(
            field_of(call, "args"), index=index, what=what, field=f"{field}.args"
        )
        calls.append(
            tool_call(field_of(call, "name"), args, index=index, what=what, field=f"{field}.name")
        )
    meta = metadata_of(
        metadata,
        **common,
        tool_call_ids=[field_of(call, "id") for call in field_of(message, "tool_calls") or []]
        or None,
        usage=_plain(field_of(message, "usage_metadata")),
    )
    return AIMessage(content=content, tool_calls=calls or None, metadata=meta)


def _plain(value: Any) -> Any:
    return dict(value) if isinstance(value, Mapping) else value


__all__ = ["convert_to_ragas_messages"]
