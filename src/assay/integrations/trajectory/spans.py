"""The steps of a recorded trace: its LLM calls and its tool calls, in the order they ran.

A trace (the platform's JSON: `spans` of `{id, parent_id, name, kind, started_at, ended_at,
input, output, error, attributes}`) holds spans of three sorts for a trajectory:

- LLM calls: spans of kind `llm` (the SDK's `monitor`; OTLP spans the server read as LLM calls);
  what each was sent and answered, from its OTel attributes when it has them, else from its
  recorded `input` / `output` (and the SDK's `tool_calls` attribute);
- tool calls: OTLP tool spans (OpenInference `TOOL`, GenAI `execute_tool`), and functions traced
  with `trace_function_call` inside the traced entry point that made no LLM call themselves (a
  function that did is a step holding others, not a tool; a function traced inside a tool is part
  of that tool);
- everything else (the entry point, chains, agents): containers, read only for the trace's own
  input and output.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from assay.errors import DataError
from assay.integrations._messages import ConvertedMessage
from assay.integrations.trajectory.chat import call_of, read_answer, read_messages
from assay.integrations.trajectory.otel import (
    decoded,
    is_otel,
    is_otel_llm,
    otel_messages,
    otel_tool,
)
from assay.schema.messages import AIMessage, ToolCall


@dataclass
class LLMStep:
    started: float
    ended: float
    sent: list[ConvertedMessage]
    answer: AIMessage | None


@dataclass
class ToolStep:
    started: float
    ended: float
    name: str
    args: dict[str, Any]
    result: Any
    error: str | None


Step = LLMStep | ToolStep


def moment(stamp: Any) -> float:
    """An ISO timestamp as seconds (0 when missing or unreadable: such spans keep their order)."""
    if not isinstance(stamp, str) or not stamp:
        return 0.0
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _attributes(span: Mapping[str, Any]) -> dict[str, Any]:
    attributes = span.get("attributes")
    return dict(attributes) if isinstance(attributes, Mapping) else {}


def _tool_name(name: str) -> str:
    """A traced function's qualified name as a tool name (`Agent.lookup` -> `lookup`)."""
    return name.rsplit(".", 1)[-1] or name


def _arguments(value: Any) -> dict[str, Any]:
    value = decoded(value)
    if isinstance(value, Mapping):
        return {k: v for k, v in value.items() if k not in ("self", "cls")}
    if value is None:
        return {}
    return {"input": value}


def _llm_step(span: Mapping[str, Any], where: str) -> LLMStep:
    attributes = _attributes(span)
    otel = is_otel(attributes)
    sent_raw = otel_messages(attributes, output=False) if otel else None
    answer_raw = otel_messages(attributes, output=True) if otel else None
    sent = read_messages(sent_raw if sent_raw is not None else span.get("input"), where)
    answer = read_answer(answer_raw if answer_raw is not None else span.get("output"), where)
    recorded_calls = [call_of(c, where) for c in attributes.get("tool_calls") or []]
    calls = [c for c in recorded_calls if isinstance(c, ToolCall)]
    if calls and (answer is None or not answer.tool_calls):
        text = answer.content if answer is not None else ""
        answer = AIMessage(content=text, tool_calls=calls)
    return LLMStep(moment(span.get("started_at")), moment(span.get("ended_at")), sent, answer)


def steps_of(trace: Mapping[str, Any], where: str) -> list[Step]:
    """The trace's LLM and tool steps in the order they started."""
    spans = trace.get("spans") or []
    if not isinstance(spans, list) or not all(isinstance(s, Mapping) for s in spans):
        raise DataError(f"{where}: field 'spans' must be a list of span objects", field="spans")
    ids = {s.get("id") for s in spans}
    parent = {s.get("id"): s.get("parent_id") for s in spans}
    llm_ids = {s.get("id") for s in spans if s.get("kind") == "llm" or is_otel_llm(_attributes(s))}

    def ancestors(span_id: Any) -> list[Any]:
        found, seen = [], {span_id}
        current = parent.get(span_id)
        while current in ids and current not in seen:
            found.append(current)
            seen.add(current)
            current = parent.get(current)
        return found

    holds_llm = {a for span_id in llm_ids for a in ancestors(span_id)}
    tool_ids: set[Any] = set()
    tools: dict[Any, dict[str, Any]] = {}
    ordered = sorted(enumerate(spans), key=lambda p: (moment(p[1].get("started_at")), p[0]))
    for _position, span in ordered:
        span_id, attributes = span.get("id"), _attributes(span)
        if span_id in llm_ids:
            continue
        if is_otel(attributes):
            found = otel_tool(attributes, str(span.get("name") or "tool"))
        elif (
            span.get("kind") in ("function", "retrieval")
            and parent.get(span_id) in ids
            and span_id not in holds_llm
            and not any(a in tool_ids for a in ancestors(span_id))
        ):
            found = {
                "name": _tool_name(str(span.get("name") or "tool")),
                "args": span.get("input"),
                "result": span.get("output"),
            }
        else:
            found = None
        if found is not None:
            tool_ids.add(span_id)
            tools[span_id] = found
    steps: list[Step] = []
    for position, span in ordered:
        span_id = span.get("id")
        started, ended = moment(span.get("started_at")), moment(span.get("ended_at"))
        if span_id in llm_ids:
            steps.append(_llm_step(span, f"{where} span {position}"))
        elif span_id in tools:
            tool = tools[span_id]
            error = span.get("error")
            steps.append(
                ToolStep(
                    started,
                    ended or started,
                    str(tool["name"]),
                    _arguments(tool["args"]),
                    tool["result"],
                    str(error) if error else None,
                )
            )
    return steps


__all__ = ["LLMStep", "Step", "ToolStep", "moment", "steps_of"]
