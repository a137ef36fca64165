"""OpenAI Agents SDK runs to assay messages.

    from agents import Runner
    from assay.integrations.openai_agents import convert_to_ragas_messages
    result = await Runner.run(agent, "What's the weather in Paris?")
    messages = convert_to_ragas_messages(result)   # or result.new_items, or result.to_input_list()

Reads a `RunResult` (through `to_input_list()`, so the user's input is included), a list of run
items (`MessageOutputItem`, `ToolCallItem`, `ToolCallOutputItem`, handoff items, ...), or
Responses-API input items as plain dicts; the SDK is not imported (`pip install
'assay[openai-agents]'` installs it for running agents).

- user messages -> `HumanMessage`; assistant messages -> `AIMessage` (output text and refusal
  parts joined); `function_call` -> a `ToolCall` on the assistant message just before it, or on
  a new `AIMessage(content="")`, so parallel calls share one message; `function_call_output` ->
  `ToolMessage`. Handoffs are function calls (`transfer_to_<agent>`) and stay tool calls.
  `mcp_call` gives both the call and, when present, its output.
- system and developer messages and reasoning items are left out.
- Hosted tools without a function form (web search, file search, computer use, ...) are refused
  by name rather than dropped, as are arguments that are not a JSON object and outputs whose
  `call_id` answers no call: a `DataError` names the item's index and field.

With `metadata=True` messages keep item ids, call ids and, for run items, the agent's name.
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
_SKIPPED_TYPES = frozenset({"reasoning", "mcp_list_tools"})
_SUPPORTED = "message, function_call, function_call_output, mcp_call, reasoning"


def convert_to_ragas_messages(items: Any, metadata: bool = False) -> list[ConvertedMessage]:
    """Convert a run result, its run items, or its input-list items."""
    if callable(getattr(items, "to_input_list", None)):
        items = items.to_input_list()
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise bad_input(0, "input", "items", "must be a RunResult or a list of run/input items")
    builder = _Conversation(metadata)
    for index, item in enumerate(items):
        builder.add(index, item)
    return checked(builder.messages())


class _Conversation:
    """Messages in the making: an assistant message stays open for the tool calls that follow."""

    def __init__(self, metadata: bool) -> None:
        self.metadata = metadata
        self.entries: list[dict[str, Any]] = []
        self.call_ids: set[str] = set()

    def add(self, index: int, item: Any) -> None:
        agent = (
            getattr(field_of(item, "agent"), "name", None) if hasattr(item, "raw_item") else None
        )
        raw = item.raw_item if hasattr(item, "raw_item") else item
        kind = field_of(raw, "type")
        role = field_of(raw, "role")
        what = f"{kind or role or type(raw).__name__} item"
        if kind in _SKIPPED_TYPES or (kind in (None, "message") and role in _SKIPPED_ROLES):
            return
        if kind in (None, "message"):
            self._message(index, raw, role, what, agent)
        elif kind in ("function_call", "mcp_call"):
            self._call(index, raw, what, agent)
        elif kind == "function_call_output":
            self._output(index, raw, field_of(raw, "call_id"), "output", what, agent)
        else:
            raise bad_input(
                index,
                what,
                "type",
                f"is {kind!r}, which is not supported (supported: {_SUPPORTED})",
            )

    def _message(self, index: int, raw: Any, role: Any, what: str, agent: str | None) -> None:
        content = text_of(field_of(raw, "content"), index=index, what=what)
        meta = metadata_of(self.metadata, id=field_of(raw, "id"), agent=agent)
        if role == "user":
            self.entries.append({"kind": "human", "content": content, "metadata": meta})
        elif role == "assistant":
            self.entries.append({"kind": "ai", "content": content, "calls": [], "metadata": meta})
        else:
            raise bad_input(index, what, "role", f"is {role!r}, not user or assistant")

    def _call(self, index: int, raw: Any, what: str, agent: str | None) -> None:
        args = parse_arguments(
            field_of(raw, "arguments"), index=index, what=what, field="arguments"
        )
        call = tool_call(field_of(raw, "name"), args, index=index, what=what, field="name")
        call_id = field_of(raw, "call_id") or field_of(raw, "id")
        if call_id:
            self.call_ids.add(call_id)
        last = self.entries[-1] if self.entries else None
        if last is None or last["kind"] != "ai":
            meta = metadata_of(self.metadata, agent=agent)
            last = {"kind": "ai", "content": "", "calls": [], "metadata": meta}
            self.entries.append(last)
        last["calls"].append(call)
        if self.metadata:
            last["metadata"] = {**(last["metadata"] or {})}
            last["metadata"].setdefault("call_ids", []).append(call_id)
        if field_of(raw, "type") == "mcp_call" and field_of(raw, "output") is not None:
            self._output(index, raw, call_id, "output", what, agent)

    def _output(
        self, index: int, raw: Any, call_id: Any, field: str, what: str, agent: str | None
    ) -> None:
        if call_id is not None and call_id not in self.call_ids:
            raise bad_input(
                index, what, "call_id", f"is {call_id!r}, which answers no earlier tool call"
            )
        content = text_of(field_of(raw, field), index=index, what=what, field=field)
        meta = metadata_of(self.metadata, call_id=call_id, agent=agent)
        self.entries.append({"kind": "tool", "content": content, "metadata": meta})

    def messages(self) -> list[ConvertedMessage]:
        built: list[ConvertedMessage] = []
        for entry in self.entries:
            if entry["kind"] == "human":
                built.append(HumanMessage(content=entry["content"], metadata=entry["metadata"]))
            elif entry["kind"] == "tool":
                built.append(ToolMessage(content=entry["content"], metadata=entry["metadata"]))
            else:
                calls: list[ToolCall] = entry["calls"]
                built.append(
                    AIMessage(
                        content=entry["content"],
                        tool_calls=calls or None,
                        metadata=entry["metadata"],
                    )
                )
        return built


__all__ = ["convert_to_ragas_messages"]
