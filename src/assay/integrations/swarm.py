"""OpenAI Swarm conversations to assay messages (Ragas' `ragas.integrations.swarm`).

    from assay.integrations.swarm import convert_to_ragas_messages
    response = client.run(agent=triage_agent, messages=[{"role": "user", "content": "..."}])
    messages = convert_to_ragas_messages(messages=[first_user_message, *response.messages])

Swarm keeps its history as OpenAI Chat Completions dicts, which is all this reads (Swarm itself
is not needed): `role`, `content`, `tool_calls` (`function.name`, `function.arguments` as a JSON
string) and, for tool results, `tool_call_id`. Any list of Chat Completions messages works.

- user -> `HumanMessage`; assistant -> `AIMessage` (content `""` when the assistant only called
  tools; `tool_calls=[]` when it called none, as in Ragas); tool -> `ToolMessage`.
- system and developer messages are left out (the agents' instructions, not turns).
- Arguments that are not a JSON object, a tool result whose `tool_call_id` answers no earlier
  call, and unknown roles raise a `DataError` naming the message's index and field.

With `metadata=True` a message keeps Swarm's `sender` (the agent that wrote it), tool call ids,
and a tool result its `tool_call_id` and `tool_name`.
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
from assay.schema.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

_SKIPPED_ROLES = frozenset({"system", "developer"})


def convert_to_ragas_messages(messages: Any, metadata: bool = False) -> list[ConvertedMessage]:
    """Convert Swarm's (Chat Completions) message dicts, or a Swarm `Response`."""
    if not isinstance(messages, (list, tuple)) and hasattr(messages, "messages"):
        messages = messages.messages
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise bad_input(0, "input", "messages", "must be a list of message dicts")
    converted: list[ConvertedMessage] = []
    open_call_ids: set[str] = set()
    for index, message in enumerate(messages):
        role = field_of(message, "role")
        what = f"{role} message" if isinstance(role, str) else "message"
        if role in _SKIPPED_ROLES:
            continue
        if role == "user":
            content = text_of(field_of(message, "content"), index=index, what=what)
            converted.append(
                HumanMessage(
                    content=content, metadata=metadata_of(metadata, name=field_of(message, "name"))
                )
            )
        elif role == "assistant":
            calls, ids = _tool_calls(field_of(message, "tool_calls") or [], index, what)
            open_call_ids.update(i for i in ids if i)
            content = text_of(field_of(message, "content"), index=index, what=what)
            meta = metadata_of(
                metadata, sender=field_of(message, "sender"), tool_call_ids=ids or None
            )
            converted.append(AIMessage(content=content, tool_calls=calls, metadata=meta))
        elif role == "tool":
            call_id = field_of(message, "tool_call_id")
            if call_id is not None and call_id not in open_call_ids:
                raise bad_input(
                    index,
                    what,
                    "tool_call_id",
                    f"is {call_id!r}, which answers no earlier tool call",
                )
            content = text_of(field_of(message, "content"), index=index, what=what)
            meta = metadata_of(
                metadata, tool_call_id=call_id, tool_name=field_of(message, "tool_name")
            )
            converted.append(ToolMessage(content=content, metadata=meta))
        elif role is None:
            raise bad_input(index, what, "role", "is missing")
        else:
            raise bad_input(index, what, "role", f"is {role!r}, not user, assistant or tool")
    return checked(converted)


def _tool_calls(raw_calls: Any, index: int, what: str) -> tuple[list[ToolCall], list[str]]:
    if not isinstance(raw_calls, (list, tuple)):
        raise bad_input(index, what, "tool_calls", "must be a list")
    calls: list[ToolCall] = []
    ids: list[str] = []
    for position, raw in enumerate(raw_calls):
        field = f"tool_calls[{position}]"
        function = field_of(raw, "function")
        if function is None:
            raise bad_input(index, what, f"{field}.function", "is missing")
        args = parse_arguments(
            field_of(function, "arguments"),
            index=index,
            what=what,
            field=f"{field}.function.arguments",
        )
        calls.append(
            tool_call(
                field_of(function, "name"),
                args,
                index=index,
                what=what,
                field=f"{field}.function.name",
            )
        )
        ids.append(field_of(raw, "id"))
    return calls, ids


__all__ = ["convert_to_ragas_messages"]
