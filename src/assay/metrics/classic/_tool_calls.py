"""Shared helpers of the tool-call metrics: read calls out of a conversation, compare values."""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

from assay.schema.messages import AIMessage, Message, ToolCall

_MESSAGE = TypeAdapter(Message)


def made_calls(messages: list[Any]) -> list[ToolCall]:
    """Every tool call the assistant requested, in conversation order.

    Messages given as plain dicts (as when calling `metric.score(...)` with JSON data) are
    validated into message objects first.
    """
    calls: list[ToolCall] = []
    for message in messages:
        if isinstance(message, dict):
            message = _MESSAGE.validate_python(message)
        if isinstance(message, AIMessage) and message.tool_calls:
            calls.extend(message.tool_calls)
    return calls


def expected_calls(calls: list[Any]) -> list[ToolCall]:
    """Reference calls as `ToolCall` objects (dicts with name/args accepted)."""
    return [call if isinstance(call, ToolCall) else ToolCall.model_validate(call) for call in calls]


def arg_text(value: Any) -> str:
    """An argument value as text: 75 and "75" agree; containers become canonical JSON so the
    order of dict keys does not matter."""
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def call_key(call: ToolCall) -> tuple[str, str]:
    """Identity of a call for exact matching: its name and its arguments as canonical JSON."""
    return call.name, json.dumps(call.args, sort_keys=True, default=str)
