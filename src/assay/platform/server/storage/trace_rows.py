"""A logged trace as a row and as JSON: the row values of an ingested trace (`trace_values`, with
the flattened text conditions search), the JSON of a trace (whole, or the summary a list shows),
a score and a label as the API and UI answer them, a stored outcome as readers see it, and the dialect's INSERT that skips
conflicts (`insert_for`). No queries: `traces.TraceRepo` reads and writes."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from assay.platform.server.schemas.traces import TraceIn, utc
from assay.platform.server.storage import models
from assay.platform.server.storage.repos import iso


def readable_outcome(stored: dict[str, Any] | None) -> dict[str, Any]:
    """A stored `trace_scores.outcome` as readers see it. Review-queue judgements stored before
    the shapes were one named an error's text `message`; it is read as `error_message`."""
    outcome = dict(stored or {})
    if "message" in outcome and "error_message" not in outcome:
        outcome["error_message"] = outcome.pop("message")
    return outcome


def insert_for(session: Session, table: Any) -> Any:
    """The dialect's INSERT, which knows ON CONFLICT DO NOTHING."""
    dialect = session.get_bind().dialect.name
    return (pg_insert if dialect == "postgresql" else sqlite_insert)(table)


def flatten_text(value: Any) -> str:
    """The text a condition's `input`/`output` matches: a string as it is; chat messages (a list,
    or an object with `messages`) as their contents one per line; any other JSON as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    messages = value.get("messages") if isinstance(value, dict) else value
    if isinstance(messages, list) and messages and all(isinstance(m, dict) for m in messages):
        lines = [_content_text(m.get("content")) for m in messages if "content" in m]
        if lines:
            return "\n".join(line for line in lines if line)
    if isinstance(value, dict) and isinstance(value.get("content"), (str, list)):
        return _content_text(value["content"])
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        return "\n".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in content
        )
    return "" if content is None else json.dumps(content, ensure_ascii=False)


SESSION_MAX = 200  # characters of `logged_traces.session_id`


def session_of(metadata: Any) -> str | None:
    """The session a trace's metadata names: `session_id` (the SDK's, OTLP's and OpenInference's
    `session.id`), else `conversation_id` (GenAI's `gen_ai.conversation.id`); a number is kept as
    its text. None when neither is given (or is empty)."""
    if not isinstance(metadata, dict):
        return None
    for key in ("session_id", "conversation_id"):
        value = metadata.get(key)
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, (int, float)):
            value = str(value)
        if isinstance(value, str) and value.strip():
            return value.strip()[:SESSION_MAX]
    return None


def trace_values(trace: TraceIn, project_id: int, now: datetime) -> dict[str, Any]:
    usage = trace.usage
    input_tokens = usage.input_tokens if usage else None
    output_tokens = usage.output_tokens if usage else None
    tokens = (
        None
        if input_tokens is None and output_tokens is None
        else (input_tokens or 0) + (output_tokens or 0)
    )
    return {
        "project_id": project_id,
        "id": trace.id,
        "created_at": utc(trace.created_at) or now,
        "version": 1,
        "input": trace.input,
        "output": trace.output,
        "raw_input": trace.raw_input,
        "raw_output": trace.raw_output,
        "input_text": flatten_text(trace.input),
        "output_text": flatten_text(trace.output),
        "contexts": list(trace.contexts),
        "meta": dict(trace.metadata),
        "session_id": session_of(trace.metadata),
        "model": trace.model,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "tokens": tokens,
        "latency_ms": trace.latency_ms,
        "error": trace.error,
        "tags": list(trace.tags),
        "spans": [span.model_dump(mode="json") for span in trace.spans],
        "edited": False,
    }


def outcome_json(row: models.TraceScore) -> dict[str, Any]:
    return {
        "value": row.value,
        "label": row.label,
        "outcome": readable_outcome(row.outcome),
        "source": row.source,
        "queue_id": row.queue_id,
        "created_at": iso(row.created_at),
    }


def label_json(row: models.TraceLabel) -> dict[str, Any]:
    return {
        "id": row.id,
        "trace_id": row.trace_id,
        "criterion": row.criterion,
        "value": row.value,
        "author": row.author,
        "queue_id": row.queue_id,
        "comment": row.comment,
        "created_at": iso(row.created_at),
    }


def trace_json(
    row: models.LoggedTrace,
    scores: dict[str, Any] | None = None,
    labels: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "object_type": "trace",
        "id": row.id,
        "created_at": iso(row.created_at),
        "version": row.version,
        "edited": row.edited,
        "input": row.input,
        "output": row.output,
        "raw_input": row.raw_input,
        "raw_output": row.raw_output,
        "contexts": row.contexts,
        "metadata": row.meta,
        "session_id": row.session_id,
        "model": row.model,
        "usage": {"input_tokens": row.input_tokens, "output_tokens": row.output_tokens},
        "tokens": row.tokens,
        "latency_ms": row.latency_ms,
        "error": row.error,
        "tags": row.tags,
        "spans": row.spans,
        "scores": scores or {},
        "labels": labels or {},
    }


SUMMARY_CHARS = 300  # of input, output and error in a trace list


def _cut(text: str | None) -> tuple[str | None, bool]:
    if text is None or len(text) <= SUMMARY_CHARS:
        return text, False
    return text[:SUMMARY_CHARS] + "…", True


def summary_json(
    row: Any, scores: dict[str, models.TraceScore], labels: dict[str, models.TraceLabel]
) -> dict[str, Any]:
    """A trace as a list shows it: ids, times, model, latency, tokens, cost, status, input and
    output as text cut to `SUMMARY_CHARS` (`truncated` says whether either was cut), and the
    latest score and label of each criterion. The whole trace is `GET /traces/{id}` (or the list
    with `full=true`). `cost` is the trace's `metadata.cost` when it is a number: assay prices
    nothing itself."""
    input_text, input_cut = _cut(row.input_text)
    output_text, output_cut = _cut(row.output_text)
    error, _ = _cut(row.error)
    cost = (row.meta or {}).get("cost")
    return {
        "object_type": "trace_summary",
        "id": row.id,
        "created_at": iso(row.created_at),
        "version": row.version,
        "edited": row.edited,
        "model": row.model,
        "session_id": row.session_id,
        "latency_ms": row.latency_ms,
        "usage": {"input_tokens": row.input_tokens, "output_tokens": row.output_tokens},
        "tokens": row.tokens,
        "cost": cost if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
        "status": "error" if row.error else "ok",
        "error": error,
        "input": input_text or "",
        "output": output_text or "",
        "truncated": input_cut or output_cut,
        "tags": row.tags or [],
        "scores": {
            c: {"value": s.value, "label": s.label, "status": (s.outcome or {}).get("status")}
            for c, s in scores.items()
        },
        "labels": {c: lb.value for c, lb in labels.items()},
    }


def snapshot(row: models.LoggedTrace) -> dict[str, Any]:
    return {
        "version": row.version,
        "edited": row.edited,
        "input": row.input,
        "output": row.output,
        "contexts": row.contexts,
        "metadata": row.meta,
        "tags": row.tags,
    }


__all__ = [
    "SESSION_MAX",
    "flatten_text",
    "insert_for",
    "label_json",
    "outcome_json",
    "readable_outcome",
    "session_of",
    "snapshot",
    "summary_json",
    "trace_json",
    "trace_values",
]
