"""A recorded trace as the server's `TraceIn` JSON; all of it runs in the export thread.

Values are bounded as the server bounds them (`assay.platform.server.schemas.traces`), so that no
trace is refused for its size or its characters: strings cut at `MAX_TEXT` characters, lists and
dicts at `MAX_ITEMS` items, nesting at `MAX_DEPTH`, no NUL characters or lone surrogates.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.platform.sdk.tracing import TraceBuilder

MAX_TEXT = 65_536  # characters kept of one string value
MAX_ITEMS = 1_000  # items kept of one list or dict
MAX_DEPTH = 12
# the server's limits (`assay.platform.server.schemas.traces`), so that no trace is refused for them
NAME_MAX, SHORT_MAX, ERROR_MAX = 200, 1_000, 20_000
CONTEXT_MAX, CONTEXTS_MAX, SPANS_MAX = 100_000, 100, 500


_SCALARS = frozenset({bool, int})


def jsonable(value: Any, depth: int = 0) -> Any:
    """Any value as JSON (bounded: long strings and lists are cut, marked with '…')."""
    kind = type(value)  # the exact JSON types first: most of a trace, on the export's hot path
    if kind is str:
        return value if _plain(value, MAX_TEXT) else text(value)
    if kind in _SCALARS or value is None:
        return value
    if kind is dict and depth < MAX_DEPTH:
        out = {}
        for key, item in itertools.islice(value.items(), MAX_ITEMS):
            key = key if type(key) is str and _plain(key, NAME_MAX) else text(str(key), NAME_MAX)
            kind = type(item)
            if (kind is str and _plain(item, MAX_TEXT)) or kind in _SCALARS or item is None:
                out[key] = item
            else:
                out[key] = jsonable(item, depth + 1)
        return out
    if kind is list and depth < MAX_DEPTH:
        return [jsonable(v, depth + 1) for v in itertools.islice(value, MAX_ITEMS)]
    return _other(value, depth)


def _other(value: Any, depth: int) -> Any:
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)  # JSON has no NaN or infinity
    if isinstance(value, str):
        return text(value)
    if depth >= MAX_DEPTH:
        return text(repr(value), 200)
    if isinstance(value, dict):
        items = list(value.items())[:MAX_ITEMS]
        return {text(str(k), NAME_MAX): jsonable(v, depth + 1) for k, v in items}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v, depth + 1) for v in list(value)[:MAX_ITEMS]]
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    if isinstance(value, BaseException):
        return text(f"{type(value).__name__}: {value}")
    dump = getattr(value, "model_dump", None)  # pydantic (the OpenAI and Anthropic types)
    if callable(dump):
        try:
            return jsonable(dump(mode="json"), depth + 1)
        except Exception:
            pass
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value), depth + 1)
    if isinstance(value, datetime):
        return value.isoformat()
    return text(repr(value))


def _plain(value: str, limit: int) -> bool:
    """A string `text` would keep as it is (ASCII, so no lone surrogate; no NUL; short enough)."""
    return len(value) <= limit and value.isascii() and "\x00" not in value


def text(value: str, limit: int = MAX_TEXT) -> str:
    """A string the server stores as it is: at most `limit` characters, no NUL, valid UTF-8."""
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    if "\x00" in value:
        value = value.replace("\x00", "\ufffd")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        value = value.encode("utf-8", "replace").decode("utf-8")
    return value


def _iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return datetime.fromtimestamp(timestamp, timezone.utc).isoformat()


def _error_text(error: Any) -> str | None:
    if error is None or isinstance(error, str):
        return error if error is None else text(error, ERROR_MAX)
    return text(f"{type(error).__name__}: {error}", ERROR_MAX)


def _main_argument(arguments: Any) -> Any:
    """A function's one argument as the trace's input (`answer(question)` → the question)."""
    if isinstance(arguments, dict):
        values = [v for k, v in arguments.items() if k not in ("self", "cls")]
        if len(values) == 1:
            return values[0]
    return arguments


def build_trace(trace: TraceBuilder) -> dict[str, Any]:
    """The TraceIn body of the server's contract."""
    spans, llm_calls = [], []
    for span in trace.spans[-SPANS_MAX:]:
        attributes = dict(span.attributes)
        if span.llm is not None:
            call = span.llm
            call.process()
            llm_calls.append(call)
            attributes.update({"model": call.model, "usage": call.usage, "contexts": call.contexts})
            if call.tool_calls:  # the steps of an agent (assay.integrations.trajectory)
                attributes["tool_calls"] = call.tool_calls
            span_input, span_output = call.input, call.output
        else:
            span_input, span_output = jsonable(span.input), jsonable(span.output)
        spans.append(
            {
                "id": span.id,
                "parent_id": span.parent_id,
                "name": text(span.name, SHORT_MAX),
                "kind": span.kind,
                "started_at": _iso(span.started),
                "ended_at": _iso(span.ended),
                "input": span_input,
                "output": span_output,
                "error": _error_text(span.error if span.llm is None else span.llm.error),
                "attributes": jsonable(attributes),
            }
        )
    root = trace.root or trace.spans[-1]
    last = llm_calls[-1] if llm_calls else None
    metadata: dict[str, Any] = {}
    for call in llm_calls:
        metadata.update(call.metadata or {})
    if trace.session_id is not None and "session_id" not in metadata:  # trace_session(...)
        metadata["session_id"] = trace.session_id
    usage = {"input_tokens": None, "output_tokens": None}
    for call in llm_calls:
        for key in usage:
            if call.usage.get(key) is not None:
                usage[key] = (usage[key] or 0) + call.usage[key]
    if root.llm is not None:
        trace_input, trace_output = root.llm.input, root.llm.output
        error = _error_text(root.llm.error)
    else:
        trace_input, trace_output = jsonable(_main_argument(root.input)), jsonable(root.output)
        error = _error_text(root.error)
    contexts = last.contexts if last else list(trace.fresh_contexts)
    ended = max((s.ended or s.started) for s in trace.spans)
    started = min(s.started for s in trace.spans)
    return {
        "id": trace.id,
        "created_at": _iso(started),
        "input": trace_input,
        "output": trace_output,
        "raw_input": last.raw_input if last else None,
        "raw_output": last.raw_output if last else None,
        "contexts": [text(c, CONTEXT_MAX) for c in contexts[:CONTEXTS_MAX]],
        "metadata": jsonable(metadata),
        "model": text(str(last.model), NAME_MAX) if last and last.model else None,
        "usage": usage,
        "latency_ms": round((ended - root.started) * 1000, 3),
        "error": error,
        "tags": [],
        "spans": spans,
    }


__all__ = ["build_trace", "jsonable", "text"]
