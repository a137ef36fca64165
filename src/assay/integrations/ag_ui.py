"""AG-UI event streams to assay messages, and running AG-UI agents over HTTP (Ragas'
`ragas.integrations.ag_ui`; `pip install 'assay[ag-ui]'` for the endpoint calls).

    events = await call_ag_ui_endpoint(endpoint_url="http://127.0.0.1:8000/agent", user_input="Hi")
    messages = convert_to_ragas_messages(events)
    extract_response(messages), extract_tool_calls(messages), extract_contexts(messages)

Events are `ag_ui.core` objects or their JSON as dicts (camelCase as on the wire, or snake_case);
converting them does not need the package. How the stream becomes messages:

- TEXT_MESSAGE_START/CONTENT/END (and TEXT_MESSAGE_CHUNK) build one message per `messageId`:
  assistant -> `AIMessage`, user -> `HumanMessage`; system and developer text is left out.
- TOOL_CALL_START/ARGS/END (and TOOL_CALL_CHUNK) build one `ToolCall` per `toolCallId`; calls may
  interleave. A call joins the assistant message named by its `parentMessageId`, else the
  assistant message just before it, else a new `AIMessage(content="")`. Its arguments are parsed
  at the end: text that is not a JSON object is a `DataError` naming the call's START event.
- TOOL_CALL_RESULT -> a `ToolMessage`, placed after the assistant turn that made the call.
- MESSAGES_SNAPSHOT replaces what was built so far with the snapshot (the protocol's meaning).
- RUN_ERROR raises `AgentRunFailed` naming the run and its code: a failed run has no answer.
- State, step, activity, reasoning, custom and raw events carry no conversation and are skipped;
  an event type the protocol does not define is a `DataError`.

With `metadata=True` messages keep their message id and the run and thread ids, AI messages the
ids of their tool calls, tool messages the `toolCallId` they answer.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from assay._util.deps import require
from assay.errors import DataError
from assay.integrations._ag_ui_events import AGUIEventCollector
from assay.integrations._messages import (
    AgentRunFailed,
    ConvertedMessage,
    bad_input,
    enum_value,
    field_of,
)
from assay.schema.messages import AIMessage, HumanMessage, Message, ToolCall, ToolMessage


def convert_to_ragas_messages(
    events: Iterable[Any], metadata: bool = False
) -> list[ConvertedMessage]:
    """Convert a whole AG-UI event stream (see the module docstring)."""
    collector = AGUIEventCollector(metadata=metadata)
    for event in events:
        collector.process_event(event)
    return collector.get_messages()


def convert_messages_snapshot(snapshot: Any, metadata: bool = False) -> list[ConvertedMessage]:
    """Convert a MESSAGES_SNAPSHOT event (or its list of messages)."""
    if isinstance(snapshot, Sequence) and not isinstance(snapshot, (str, bytes)):
        snapshot = {"type": "MESSAGES_SNAPSHOT", "messages": snapshot}
    if enum_value(field_of(snapshot, "type")) != "MESSAGES_SNAPSHOT":
        raise bad_input(0, "snapshot", "type", "must be MESSAGES_SNAPSHOT")
    return convert_to_ragas_messages([snapshot], metadata=metadata)


def convert_messages_to_ag_ui(messages: Iterable[ConvertedMessage]) -> list[Any]:
    """assay messages as `ag_ui.core` messages (ids from metadata when present, else made up),
    e.g. to send a multi-turn `user_input` to an agent."""
    core = require("ag_ui.core", extra="ag-ui", package="ag-ui-protocol", feature="AG-UI messages")
    converted: list[Any] = []
    pending: list[str] = []  # ids of calls not yet answered, in order
    for index, message in enumerate(messages):
        meta = message.metadata or {}
        message_id = str(meta.get("message_id") or f"msg-{index}")
        if isinstance(message, HumanMessage):
            converted.append(core.UserMessage(id=message_id, content=message.content))
        elif isinstance(message, AIMessage):
            known_ids = meta.get("tool_call_ids") or []
            calls = []
            for number, call in enumerate(message.tool_calls or []):
                call_id = known_ids[number] if number < len(known_ids) else f"call-{index}-{number}"
                function = core.FunctionCall(name=call.name, arguments=json.dumps(call.args))
                calls.append(core.ToolCall(id=call_id, function=function))
            pending = [call.id for call in calls]
            converted.append(
                core.AssistantMessage(
                    id=message_id, content=message.content, tool_calls=calls or None
                )
            )
        elif isinstance(message, ToolMessage):
            call_id = meta.get("tool_call_id") or (pending[0] if pending else None)
            if call_id is None:
                raise DataError("a ToolMessage answers no tool call", row=index, row_is_index=True)
            if call_id in pending:
                pending.remove(call_id)
            converted.append(
                core.ToolMessage(id=message_id, content=message.content, tool_call_id=call_id)
            )
        else:
            raise DataError(
                f"expected an assay message, got {type(message).__name__}",
                row=index,
                row_is_index=True,
            )
    return converted


def extract_response(messages: Iterable[ConvertedMessage]) -> str | None:
    """Everything the assistant said, its non-empty texts joined by spaces; None if nothing."""
    texts = [m.content for m in messages if isinstance(m, AIMessage) and m.content.strip()]
    return " ".join(texts) if texts else None


def extract_tool_calls(messages: Iterable[ConvertedMessage]) -> list[ToolCall]:
    """Every tool call the assistant made, in order."""
    return [call for m in messages if isinstance(m, AIMessage) for call in m.tool_calls or []]


def extract_contexts(messages: Iterable[ConvertedMessage]) -> list[str]:
    """The non-empty tool outputs, in order: what the agent retrieved or was told."""
    return [m.content for m in messages if isinstance(m, ToolMessage) and m.content.strip()]


async def call_ag_ui_endpoint(
    endpoint_url: str,
    user_input: str | Sequence[ConvertedMessage],
    thread_id: str | None = None,
    agent_config: Mapping[str, Any] | None = None,
    timeout: float = 60.0,
    extra_headers: Mapping[str, str] | None = None,
) -> list[Any]:
    """POST a run to an AG-UI endpoint and read its server-sent events until the run ends.

    `user_input` is the user's text, or a conversation of assay messages (multi-turn rows);
    `agent_config` goes out as `forwardedProps`. Returns `ag_ui.core` events. `timeout` bounds
    the whole run. An endpoint that cannot be reached, answers an HTTP error, is not an event
    stream or runs out of time raises `AgentRunFailed` naming the endpoint; an event that is not
    valid AG-UI raises a `DataError` naming its index."""
    core = require("ag_ui.core", extra="ag-ui", package="ag-ui-protocol", feature="AG-UI endpoints")
    httpx = require("httpx", extra="ag-ui", feature="AG-UI endpoints")
    httpx_sse = require("httpx_sse", extra="ag-ui", package="httpx-sse", feature="AG-UI endpoints")
    import anyio
    from pydantic import TypeAdapter, ValidationError

    if isinstance(user_input, str):
        messages = [core.UserMessage(id=f"user-{uuid.uuid4().hex}", content=user_input)]
    else:
        messages = convert_messages_to_ag_ui(user_input)
    run = core.RunAgentInput(
        thread_id=thread_id or f"thread-{uuid.uuid4().hex}",
        run_id=f"run-{uuid.uuid4().hex}",
        messages=messages,
        state={},
        tools=[],
        context=[],
        forwarded_props=dict(agent_config or {}),
    )
    headers = {"Accept": "text/event-stream", **dict(extra_headers or {})}
    adapter: TypeAdapter[Any] = TypeAdapter(core.Event)
    events: list[Any] = []

    def failed(message: str, code: str) -> AgentRunFailed:
        return AgentRunFailed(f"AG-UI endpoint {endpoint_url}", message, run=run.run_id, code=code)

    try:
        with anyio.fail_after(timeout):
            async with httpx.AsyncClient(timeout=httpx.Timeout(None, connect=timeout)) as client:
                body = run.model_dump(mode="json", by_alias=True)
                async with httpx_sse.aconnect_sse(
                    client, "POST", endpoint_url, json=body, headers=headers
                ) as source:
                    response = source.response
                    if response.status_code >= 400:
                        text = (await response.aread()).decode("utf-8", "replace")[:300]
                        raise failed(f"answered HTTP {response.status_code}: {text}", "http_status")
                    async for sse in source.aiter_sse():
                        if not sse.data:
                            continue
                        try:
                            event = adapter.validate_json(sse.data)
                        except ValidationError as exc:
                            first = exc.errors()[0]
                            field = ".".join(str(part) for part in first["loc"]) or "event"
                            raise bad_input(
                                len(events), "AG-UI event", field, f"is invalid: {first['msg']}"
                            ) from None
                        events.append(event)
                        if enum_value(event.type) in ("RUN_FINISHED", "RUN_ERROR"):
                            break
    except TimeoutError:
        raise failed(f"no end of run within {timeout} s", "timeout") from None
    except httpx_sse.SSEError as exc:
        raise failed(f"did not answer with an event stream: {exc}", "not_event_stream") from None
    except httpx.HTTPError as exc:
        raise failed(f"could not be read: {type(exc).__name__}: {exc}", "http_error") from None
    return events


async def run_ag_ui_row(
    row: Mapping[str, Any],
    endpoint_url: str,
    metadata: bool = False,
    extra_headers: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> dict[str, Any]:
    """Run one dataset row through an AG-UI agent: the row plus `response`, `messages` (the user's
    turn included), `tool_calls` and `contexts`.

    A failed run raises (`AgentRunFailed`, `DataError`) instead of filling in placeholders as
    Ragas does: inside an `@experiment` the runner records it as that row's error."""
    user_input = row.get("user_input")
    if not isinstance(user_input, (str, list)) or not user_input:
        raise DataError(
            "needs a non-empty user_input (text or a list of messages)", field="user_input"
        )
    if isinstance(user_input, list):  # a conversation read from a file holds dicts
        user_input = [
            Message.model_validate(m) if isinstance(m, Mapping) else m for m in user_input
        ]
    events = await call_ag_ui_endpoint(
        endpoint_url=endpoint_url,
        user_input=user_input,
        timeout=timeout,
        extra_headers=extra_headers,
    )
    messages = convert_to_ragas_messages(events, metadata=metadata)
    if not any(isinstance(m, HumanMessage) for m in messages):  # no snapshot echoed the input
        asked = (
            [HumanMessage(content=user_input)] if isinstance(user_input, str) else list(user_input)
        )
        messages = [*asked, *messages]
    return {
        **row,
        "response": extract_response(messages),
        "messages": messages,
        "tool_calls": extract_tool_calls(messages),
        "contexts": extract_contexts(messages),
    }


__all__ = [
    "AGUIEventCollector",
    "AgentRunFailed",
    "call_ag_ui_endpoint",
    "convert_messages_snapshot",
    "convert_messages_to_ag_ui",
    "convert_to_ragas_messages",
    "extract_contexts",
    "extract_response",
    "extract_tool_calls",
    "run_ag_ui_row",
]
