"""The AG-UI stream state machine behind `assay.integrations.ag_ui` (see its docstring for what
each event becomes): messages and tool calls are built per id as their events arrive, so
interleaved calls and chunked messages need no ordering of their own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.integrations._messages import (
    AgentRunFailed,
    ConvertedMessage,
    bad_input,
    checked,
    enum_value,
    field_of,
    metadata_of,
    parse_arguments,
    required_str,
    text_of,
)
from assay.schema.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

# Events that carry no conversation turn (the deprecated THINKING_* ones for older servers).
_PASSIVE_EVENTS = frozenset(
    {
        "STATE_SNAPSHOT", "STATE_DELTA", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA", "RAW", "CUSTOM",
        "STEP_STARTED", "STEP_FINISHED", "REASONING_START", "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END", "REASONING_MESSAGE_CHUNK",
        "REASONING_END", "REASONING_ENCRYPTED_VALUE", "SUBAGENT_STARTED", "SUBAGENT_FINISHED",
        "SUBAGENT_ERROR", "THINKING_START", "THINKING_END", "THINKING_TEXT_MESSAGE_START",
        "THINKING_TEXT_MESSAGE_CONTENT", "THINKING_TEXT_MESSAGE_END",
    }
)  # fmt: skip
_SKIPPED_ROLES = frozenset({"system", "developer", "reasoning", "activity"})
_CHUNKS = ("TEXT_MESSAGE_CHUNK", "TOOL_CALL_CHUNK")


class AGUIEventCollector:
    """Builds messages from AG-UI events fed one at a time (`process_event`), as they stream."""

    def __init__(self, metadata: bool = False) -> None:
        self.metadata = metadata
        self.run_id: str | None = None
        self.thread_id: str | None = None
        self.finished = False
        self._index = -1
        self._entries: list[dict[str, Any]] = []
        self._texts: dict[str, dict[str, Any]] = {}  # message id -> its entry (None: skipped)
        self._open_texts: set[str] = set()
        self._calls: dict[str, dict[str, Any]] = {}  # tool call id -> name, arguments, state
        self._chunking: tuple[str, str] | None = None  # the chunk-built message or call still open

    # -- feeding --------------------------------------------------------------------------------
    def process_event(self, event: Any) -> None:
        self._index += 1
        index = self._index
        kind = enum_value(field_of(event, "type"))
        if not isinstance(kind, str):
            raise bad_input(index, "AG-UI event", "type", "is missing")
        what = f"{kind} event"
        if self._chunking and not (kind in _CHUNKS and self._continues_chunk(event, kind)):
            self._close_chunk()
        if kind == "RUN_STARTED":
            self.thread_id = field_of(event, "thread_id") or self.thread_id
            self.run_id = field_of(event, "run_id") or self.run_id
        elif kind == "RUN_FINISHED":
            self.finished = True
        elif kind == "RUN_ERROR":
            run = field_of(event, "run_id") or self.run_id
            message = field_of(event, "message") or "RUN_ERROR without a message"
            raise AgentRunFailed(
                "AG-UI agent", str(message), run=run, code=field_of(event, "code"), index=index
            )
        elif kind == "TEXT_MESSAGE_START":
            self._start_text(
                index,
                what,
                required_str(event, "message_id", index=index, what=what, wire_name=True),
                field_of(event, "role"),
            )
        elif kind == "TEXT_MESSAGE_CONTENT":
            self._text_delta(index, what, event)
        elif kind == "TEXT_MESSAGE_END":
            message_id = self._known_text(index, what, event)
            self._open_texts.discard(message_id)
        elif kind == "TEXT_MESSAGE_CHUNK":
            self._text_chunk(index, what, event)
        elif kind == "TOOL_CALL_START":
            call_id = required_str(event, "tool_call_id", index=index, what=what, wire_name=True)
            name = required_str(event, "tool_call_name", index=index, what=what, wire_name=True)
            self._start_call(index, what, call_id, name, field_of(event, "parent_message_id"))
        elif kind == "TOOL_CALL_ARGS":
            call = self._open_call(index, what, event)
            call["args"].append(
                required_str(
                    event, "delta", index=index, what=what, allow_empty=True, wire_name=True
                )
            )
        elif kind == "TOOL_CALL_END":
            self._open_call(index, what, event)["ended"] = True
        elif kind == "TOOL_CALL_CHUNK":
            self._call_chunk(index, what, event)
        elif kind == "TOOL_CALL_RESULT":
            call_id = required_str(event, "tool_call_id", index=index, what=what, wire_name=True)
            if call_id not in self._calls:
                raise bad_input(
                    index, what, "toolCallId", f"is {call_id!r}, which answers no tool call"
                )
            content = text_of(field_of(event, "content"), index=index, what=what)
            self._add_result(call_id, content, field_of(event, "message_id"))
        elif kind == "MESSAGES_SNAPSHOT":
            self._snapshot(index, what, field_of(event, "messages"))
        elif kind not in _PASSIVE_EVENTS:
            raise bad_input(index, what, "type", f"is {kind!r}, not an AG-UI event type")

    def get_messages(self) -> list[ConvertedMessage]:
        """The conversation so far. A tool call still streaming its arguments is an error (one
        built from chunks counts as complete: chunks have no end event)."""
        built: list[ConvertedMessage] = []
        run = {"run_id": self.run_id, "thread_id": self.thread_id}
        for entry in self._entries:
            meta = metadata_of(self.metadata, message_id=entry.get("id"), **run, **entry["meta"])
            content = "".join(entry["text"])
            if entry["kind"] == "human":
                built.append(HumanMessage(content=content, metadata=meta))
            elif entry["kind"] == "tool":
                built.append(ToolMessage(content=content, metadata=meta))
            else:
                calls = [self._finished_call(call_id) for call_id in entry["calls"]]
                if self.metadata and entry["calls"]:
                    meta = {**(meta or {}), "tool_call_ids": list(entry["calls"])}
                built.append(AIMessage(content=content, tool_calls=calls or None, metadata=meta))
        return checked(built)

    # -- text messages --------------------------------------------------------------------------
    def _start_text(self, index: int, what: str, message_id: str, role: Any) -> None:
        if message_id in self._texts:
            raise bad_input(
                index, what, "messageId", f"is {message_id!r}, which was already started"
            )
        role = role or "assistant"
        if role in _SKIPPED_ROLES:
            self._texts[message_id] = {"skipped": True, "text": []}
        elif role in ("assistant", "user"):
            entry = self._new_entry("ai" if role == "assistant" else "human", message_id)
            self._texts[message_id] = entry
        else:
            raise bad_input(index, what, "role", f"is {role!r}, not assistant, user or system")
        self._open_texts.add(message_id)

    def _known_text(self, index: int, what: str, event: Any) -> str:
        message_id = required_str(event, "message_id", index=index, what=what, wire_name=True)
        if message_id not in self._open_texts:
            state = "has ended" if message_id in self._texts else "was never started"
            raise bad_input(index, what, "messageId", f"is {message_id!r}, which {state}")
        return message_id

    def _text_delta(self, index: int, what: str, event: Any) -> None:
        message_id = self._known_text(index, what, event)
        delta = required_str(
            event, "delta", index=index, what=what, allow_empty=True, wire_name=True
        )
        self._texts[message_id]["text"].append(delta)

    def _text_chunk(self, index: int, what: str, event: Any) -> None:
        message_id = field_of(event, "message_id")
        if self._chunking is None:
            if not isinstance(message_id, str) or not message_id:
                raise bad_input(index, what, "messageId", "is required on the first chunk")
            self._start_text(index, what, message_id, field_of(event, "role"))
            self._chunking = ("text", message_id)
        delta = field_of(event, "delta") or ""
        self._texts[self._chunking[1]]["text"].append(delta)

    # -- tool calls -----------------------------------------------------------------------------
    def _start_call(self, index: int, what: str, call_id: str, name: str, parent: Any) -> None:
        if call_id in self._calls:
            raise bad_input(index, what, "toolCallId", f"is {call_id!r}, which was already started")
        owner = self._texts.get(parent) if isinstance(parent, str) else None
        if owner is None or owner.get("skipped") or owner["kind"] != "ai":
            last = self._entries[-1] if self._entries else None
            owner = (
                last if last is not None and last["kind"] == "ai" else self._new_entry("ai", None)
            )
        owner["calls"].append(call_id)
        self._calls[call_id] = {
            "name": name,
            "args": [],
            "ended": False,
            "start": index,
            "owner": owner,
        }

    def _open_call(self, index: int, what: str, event: Any) -> dict[str, Any]:
        call_id = required_str(event, "tool_call_id", index=index, what=what, wire_name=True)
        call = self._calls.get(call_id)
        if call is None or call["ended"]:
            state = "was never started" if call is None else "has ended"
            raise bad_input(index, what, "toolCallId", f"is {call_id!r}, which {state}")
        return call

    def _call_chunk(self, index: int, what: str, event: Any) -> None:
        if self._chunking is None:
            call_id = required_str(event, "tool_call_id", index=index, what=what, wire_name=True)
            name = required_str(event, "tool_call_name", index=index, what=what, wire_name=True)
            self._start_call(index, what, call_id, name, field_of(event, "parent_message_id"))
            self._chunking = ("call", call_id)
        self._calls[self._chunking[1]]["args"].append(field_of(event, "delta") or "")

    def _continues_chunk(self, event: Any, kind: str) -> bool:
        assert self._chunking is not None
        wanted = "text" if kind == "TEXT_MESSAGE_CHUNK" else "call"
        key = "message_id" if wanted == "text" else "tool_call_id"
        given = field_of(event, key)
        return self._chunking[0] == wanted and given in (None, self._chunking[1])

    def _close_chunk(self) -> None:
        assert self._chunking is not None
        kind, key = self._chunking
        if kind == "text":
            self._open_texts.discard(key)
        else:
            self._calls[key]["ended"] = True
        self._chunking = None

    def _finished_call(self, call_id: str) -> ToolCall:
        call = self._calls[call_id]
        what = "TOOL_CALL_START event"
        if not call["ended"] and self._chunking != ("call", call_id):
            raise bad_input(call["start"], what, "toolCallId", f"is {call_id!r}, which never ended")
        field = f"arguments of {call_id!r}"
        args = parse_arguments("".join(call["args"]), index=call["start"], what=what, field=field)
        return ToolCall(name=call["name"], args=args)

    def _add_result(self, call_id: str, content: str, message_id: Any) -> None:
        owner = self._calls[call_id]["owner"]
        position = next(i for i, entry in enumerate(self._entries) if entry is owner) + 1
        while position < len(self._entries) and self._entries[position]["kind"] == "tool":
            position += 1
        entry = {"kind": "tool", "id": message_id, "text": [content], "calls": []}
        entry["meta"] = {"tool_call_id": call_id}
        self._entries.insert(position, entry)

    def _new_entry(self, kind: str, message_id: str | None) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "kind": kind,
            "id": message_id,
            "text": [],
            "calls": [],
            "meta": {},
        }
        self._entries.append(entry)
        return entry

    # -- snapshots ------------------------------------------------------------------------------
    def _snapshot(self, index: int, what: str, messages: Any) -> None:
        if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
            raise bad_input(index, what, "messages", "must be a list of messages")
        self._entries, self._texts, self._open_texts, self._calls = [], {}, set(), {}
        for position, message in enumerate(messages):
            field = f"messages[{position}]"
            role = field_of(message, "role")
            message_id = field_of(message, "id")
            if role in _SKIPPED_ROLES:
                continue
            content = text_of(
                field_of(message, "content"), index=index, what=what, field=f"{field}.content"
            )
            if role == "user":
                self._new_entry("human", message_id)["text"].append(content)
            elif role == "assistant":
                entry = self._new_entry("ai", message_id)
                entry["text"].append(content)
                for number, call in enumerate(field_of(message, "tool_calls") or []):
                    call_field = f"{field}.toolCalls[{number}]"
                    function = field_of(call, "function") or {}
                    call_id = field_of(call, "id") or f"{message_id}-{number}"
                    name = field_of(function, "name")
                    if not isinstance(name, str) or not name:
                        raise bad_input(index, what, f"{call_field}.function.name", "is missing")
                    # checked now: the snapshot's index is where a bad argument string is
                    parse_arguments(
                        field_of(function, "arguments"),
                        index=index,
                        what=what,
                        field=f"{call_field}.function.arguments",
                    )
                    entry["calls"].append(call_id)
                    args = [field_of(function, "arguments") or ""]
                    self._calls[call_id] = {
                        "name": name,
                        "args": args,
                        "ended": True,
                        "start": index,
                        "owner": entry,
                    }
            elif role == "tool":
                call_id = field_of(message, "tool_call_id")
                if call_id not in self._calls:
                    raise bad_input(
                        index,
                        what,
                        f"{field}.toolCallId",
                        f"is {call_id!r}, which answers no tool call",
                    )
                error = field_of(message, "error")
                self._add_result(
                    call_id, content or (f"Error: {error}" if error else ""), message_id
                )
            else:
                raise bad_input(index, what, f"{field}.role", f"is {role!r}, not a supported role")


__all__ = ["AGUIEventCollector"]
