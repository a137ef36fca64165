"""From OpenTelemetry spans to assay traces: the spans of one OTel trace id form one assay trace.

Two vocabularies are read. The OpenTelemetry GenAI semantic conventions: `gen_ai.operation.name`,
`gen_ai.request.model` / `gen_ai.response.model`, `gen_ai.usage.input_tokens` / `output_tokens`
(and the older `prompt_tokens` / `completion_tokens`), `gen_ai.input.messages` /
`gen_ai.output.messages` / `gen_ai.system_instructions`, the legacy indexed
`gen_ai.prompt.N.*` / `gen_ai.completion.N.*`, the message events (`gen_ai.system.message`,
`gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.tool.message`, `gen_ai.choice`, and the
older `gen_ai.content.prompt` / `gen_ai.content.completion`), `gen_ai.retrieval.documents`,
`gen_ai.tool.call.arguments` / `result`, `gen_ai.conversation.id`, and the `gen_ai.evaluation.result`
event (kept as a typed score: a number, a label, or an error; see `evaluation_scores`). OpenInference:
`openinference.span.kind`, `input.value` / `output.value` (with their mime types), `llm.model_name`,
`llm.token_count.*`, `llm.input_messages.N.message.*` / `llm.output_messages.N.message.*`,
`retrieval.documents.N.document.content`, `metadata`, `tag.tags`, `session.id`, `user.id`.

The trace's input and output are the root span's `input.value`/`output.value` when it has them,
else the first LLM span's messages and the last LLM span's answer; model and raw request are the
first LLM span's; tokens are summed over LLM spans; contexts are every retrieved document's
content in span order; latency is from the first start to the last end.
"""

from __future__ import annotations

import math
import uuid
from datetime import datetime, timezone
from typing import Any

from assay.platform.server.otlp.content import (
    maybe_json,
    span_documents,
    span_input,
    span_output,
)
from assay.platform.server.schemas.scores import typed_value

MAX_VALUE_DEPTH = 8
LLM_OPERATIONS = {"chat", "text_completion", "generate_content", "completion"}
FUNCTION_OPERATIONS = {"execute_tool", "invoke_agent", "create_agent"}


# -- protobuf values ---------------------------------------------------------------------------------
def any_value(value: Any, depth: int = 0) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if depth >= MAX_VALUE_DEPTH and kind in ("array_value", "kvlist_value"):
        return str(value)
    if kind == "array_value":
        return [any_value(v, depth + 1) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value, depth + 1) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value.hex()
    if kind == "double_value" and not math.isfinite(value.double_value):
        return str(value.double_value)
    return getattr(value, kind)


def attribute_map(pairs: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for kv in pairs:  # strings and integers (most attributes) read here, the rest by any_value
        value = kv.value
        kind = value.WhichOneof("value")
        if kind == "string_value":
            found[kv.key] = value.string_value
        elif kind == "int_value":
            found[kv.key] = value.int_value
        else:
            found[kv.key] = any_value(value)
    return found


def trace_uuid(trace_id: bytes) -> str:
    """An OTel trace id (16 bytes) as the assay trace id (the same 128 bits as a UUID string)."""
    return str(uuid.UUID(bytes=trace_id))


def _iso(nanos: int) -> str | None:
    if not nanos:
        return None
    return datetime.fromtimestamp(nanos / 1e9, tz=timezone.utc).isoformat()


def _nanos(stamp: str | None) -> int:
    if not stamp:
        return 0
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return 0
    return int(moment.timestamp() * 1e6) * 1000


def span_dict(span: Any) -> dict[str, Any]:
    """One OTel span in the trace model's span shape; the OTel attributes and events are kept."""
    attributes = attribute_map(span.attributes)
    events = [
        {"name": e.name, "time": _iso(e.time_unix_nano), "attributes": attribute_map(e.attributes)}
        for e in span.events
    ]
    error = None
    if span.status.code == 2:  # STATUS_CODE_ERROR
        error = span.status.message or _exception_message(events) or "error"
    return {
        "id": span.span_id.hex(),
        "parent_id": span.parent_span_id.hex() or None,
        "name": span.name[:1000],
        "kind": span_kind(attributes),
        "started_at": _iso(span.start_time_unix_nano),
        "ended_at": _iso(span.end_time_unix_nano),
        "input": span_input(attributes, events),
        "output": span_output(attributes, events),
        "error": error,
        "attributes": {**attributes, "otel.events": events} if events else attributes,
        "_start": span.start_time_unix_nano,
        "_end": span.end_time_unix_nano,
    }


def _exception_message(events: list[dict[str, Any]]) -> str | None:
    for event in events:
        if event["name"] == "exception":
            return str(event["attributes"].get("exception.message") or "") or None
    return None


# -- what a span is and holds ------------------------------------------------------------------------
def span_kind(attributes: dict[str, Any]) -> str:
    openinference = str(attributes.get("openinference.span.kind") or "").upper()
    if openinference == "LLM":
        return "llm"
    if openinference == "RETRIEVER":
        return "retrieval"
    if openinference in ("TOOL", "CHAIN", "AGENT"):
        return "function"
    operation = str(attributes.get("gen_ai.operation.name") or "")
    if operation in LLM_OPERATIONS:
        return "llm"
    if operation == "retrieval" or "gen_ai.retrieval.documents" in attributes:
        return "retrieval"
    if operation in FUNCTION_OPERATIONS:
        return "function"
    if "gen_ai.request.model" in attributes or "llm.model_name" in attributes:
        return "llm"
    return "other"


def _number(attributes: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            return int(value)
    return None


# -- a whole trace -------------------------------------------------------------------------------------
def build_trace(
    trace_id: str, spans: list[dict[str, Any]], resource: dict[str, Any]
) -> dict[str, Any]:
    """The TraceIn fields of the trace made of `spans` (span dicts from `span_dict`, or spans
    stored before, whose times are read back from their ISO strings)."""
    for span in spans:
        for mark, stamp in (("_start", "started_at"), ("_end", "ended_at")):
            if mark not in span:
                span[mark] = _nanos(span.get(stamp))
    spans = sorted(spans, key=lambda s: (s.get("_start") or 0, s["id"]))
    ids = {s["id"] for s in spans}
    roots = [s for s in spans if not s.get("parent_id") or s["parent_id"] not in ids]
    root = roots[0] if roots else spans[0]
    llm = [s for s in spans if s["kind"] == "llm"]
    first_llm, last_llm = (llm[0], llm[-1]) if llm else (None, None)
    attrs = first_llm["attributes"] if first_llm else root["attributes"]

    input_value = root["input"] if "input.value" in root["attributes"] else None
    output_value = root["output"] if "output.value" in root["attributes"] else None
    if input_value is None:
        input_value = first_llm["input"] if first_llm else root["input"]
    if output_value is None:
        output_value = last_llm["output"] if last_llm else root["output"]

    model = next(
        (
            str(a[k])
            for a in ([s["attributes"] for s in llm] or [attrs])
            for k in ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name")
            if a.get(k)
        ),
        None,
    )
    totals: dict[str, int | None] = {"input_tokens": None, "output_tokens": None}
    for span in llm:
        a = span["attributes"]
        counted = {
            "input_tokens": _number(
                a,
                "gen_ai.usage.input_tokens",
                "gen_ai.usage.prompt_tokens",
                "llm.token_count.prompt",
            ),
            "output_tokens": _number(
                a,
                "gen_ai.usage.output_tokens",
                "gen_ai.usage.completion_tokens",
                "llm.token_count.completion",
            ),
        }
        for name, value in counted.items():
            if value is not None:
                totals[name] = (totals[name] or 0) + value

    contexts: list[str] = []
    for span in spans:
        for document in span_documents(span["attributes"]):
            if document not in contexts:
                contexts.append(document)

    starts = [s["_start"] for s in spans if s.get("_start")]
    ends = [s["_end"] for s in spans if s.get("_end")]
    latency = (
        (max(ends) - min(starts)) / 1e6 if starts and ends and max(ends) >= min(starts) else None
    )
    error = next((s["error"] for s in spans if s["error"]), None)

    metadata: dict[str, Any] = {"source": "otlp"}
    if resource:
        metadata["resource"] = resource
    for span in spans:
        extra = maybe_json(span["attributes"].get("metadata"))
        if isinstance(extra, dict):
            metadata.update({k: v for k, v in extra.items() if k not in ("source", "resource")})
    for key, name in (
        ("session.id", "session_id"),
        ("user.id", "user_id"),
        ("gen_ai.conversation.id", "conversation_id"),
        ("gen_ai.provider.name", "provider"),
        ("gen_ai.system", "provider"),
        ("gen_ai.operation.name", "operation"),
    ):
        value = next((s["attributes"][key] for s in spans if key in s["attributes"]), None)
        if value is not None and name not in metadata:
            metadata[name] = value
    tags: list[str] = []
    for span in spans:
        for tag in span["attributes"].get("tag.tags") or []:
            if isinstance(tag, str) and tag and tag not in tags:
                tags.append(tag)

    raw_input = raw_output = None
    if first_llm is not None:
        request = {
            k.removeprefix("gen_ai.request."): v
            for k, v in first_llm["attributes"].items()
            if k.startswith("gen_ai.request.")
        }
        raw_input = {**request, "messages": first_llm["input"]}
        raw_output = {
            "model": first_llm["attributes"].get("gen_ai.response.model"),
            "id": first_llm["attributes"].get("gen_ai.response.id"),
            "finish_reasons": first_llm["attributes"].get("gen_ai.response.finish_reasons"),
            "output": first_llm["output"],
        }
    return {
        "id": trace_id,
        "created_at": _iso(min(starts)) if starts else None,
        "input": input_value,
        "output": output_value,
        "raw_input": raw_input,
        "raw_output": raw_output,
        "contexts": contexts,
        "metadata": metadata,
        "model": model[:200] if model else None,
        "usage": totals if any(v is not None for v in totals.values()) else None,
        "latency_ms": round(latency, 3) if latency is not None else None,
        "error": error,
        "tags": tags,
        "spans": [{k: v for k, v in s.items() if not k.startswith("_")} for s in spans],
    }


def evaluation_scores(trace_id: str, span: dict[str, Any]) -> list[dict[str, Any]]:
    """The span's `gen_ai.evaluation.result` events as score rows (source `otel:<span id>`).

    A finite `score.value` is a number score; a failure (`error.type`, or assay's
    `assay.outcome = error`) is an error with its cause; an event with only a
    `score.label` is a label score, stored in `trace_scores.label` as the score route stores one
    (`score_label.<criterion>` in conditions). Anything else is `skipped` with its explanation."""
    rows = []
    for event in span["attributes"].get("otel.events") or []:
        if event["name"] != "gen_ai.evaluation.result":
            continue
        a = event["attributes"]
        name = a.get("gen_ai.evaluation.name")
        if not isinstance(name, str) or not name or len(name) > 200:
            continue
        value = a.get("gen_ai.evaluation.score.value")
        number = (
            float(value)
            if isinstance(value, (int, float)) and not isinstance(value, bool)
            else None
        )
        if number is not None and not math.isfinite(number):
            number = None
        label = a.get("gen_ai.evaluation.score.label")
        explanation = a.get("gen_ai.evaluation.explanation")
        outcome: dict[str, Any] = {
            "status": "ok" if number is not None else "skipped",
            "value": number,
            "label": label,
            "reason": explanation,
        }
        stored_label = None
        # The convention's `error.type` (assay's exporter also says `assay.outcome`): an
        # evaluation that failed, kept as a failure with its cause rather than as "skipped".
        failed = a.get("error.type") or (a.get("assay.outcome") == "error" and "Error")
        if failed and number is None:
            message = a.get("assay.error.message") or explanation
            outcome.update(
                status="error",
                error_type=str(failed)[:200],
                error_message=str(message)[:2000] if message is not None else None,
            )
        elif number is None and isinstance(label, str) and a.get("assay.outcome") != "skipped":
            stored_label, why_not = _label_score(label)
            if stored_label is not None:
                outcome.update(status="ok", value=stored_label)
            else:
                outcome["reason"] = why_not + (f"; {explanation}" if explanation else "")
        rows.append(
            {
                "trace_id": trace_id,
                "criterion": name,
                "value": number,
                "label": stored_label,
                "outcome": outcome,
                "source": f"otel:{span['id']}",
                "queue_id": None,
            }
        )
    return rows


def _label_score(label: str) -> tuple[str | None, str]:
    """The label as the score route would store it, or None and why it cannot be one (an empty
    or over-long label stays a skipped score that says so)."""
    try:
        return str(typed_value(label)), ""
    except ValueError as exc:
        return None, f"gen_ai.evaluation.score.label: {exc}"


__all__ = [
    "any_value",
    "attribute_map",
    "build_trace",
    "evaluation_scores",
    "span_dict",
    "trace_uuid",
]
