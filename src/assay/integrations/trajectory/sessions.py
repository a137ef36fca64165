"""Sessions (the traces of one conversation, joined) and exports (trace files) as datasets.

A trace belongs to a session when its metadata says so (`session_id`, `session.id`,
`conversation_id`, `thread_id`) or one of its spans carries OpenInference's `session.id` or the
GenAI `gen_ai.conversation.id`. `to_conversation` orders a session's traces by their start and
joins their conversations: a trace that re-sends the turns before it adds only its new messages
(`merge.extend`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from assay.errors import DataError, UsageError
from assay.integrations._messages import ConvertedMessage
from assay.integrations.trajectory.convert import as_trace, trace_messages, trace_metadata
from assay.integrations.trajectory.merge import extend
from assay.integrations.trajectory.spans import moment
from assay.schema.dataset import EvaluationDataset
from assay.schema.samples import MultiTurnSample

SESSION_KEYS = ("session_id", "session.id", "conversation_id", "thread_id")
SESSION_ATTRIBUTES = ("session.id", "gen_ai.conversation.id")


def session_id_of(trace: Any) -> str | None:
    """The session a trace belongs to, or None."""
    data = as_trace(trace)
    metadata = data.get("metadata")
    if isinstance(metadata, Mapping):
        for key in SESSION_KEYS:
            if metadata.get(key) not in (None, ""):
                return str(metadata[key])
    for span in data.get("spans") or []:
        attributes = span.get("attributes") if isinstance(span, Mapping) else None
        if isinstance(attributes, Mapping):
            for key in SESSION_ATTRIBUTES:
                if attributes.get(key) not in (None, ""):
                    return str(attributes[key])
    return None


def _ordered(traces: Iterable[Any]) -> list[dict[str, Any]]:
    found = [as_trace(t, f"traces[{i}]") for i, t in enumerate(traces)]
    keyed = sorted(enumerate(found), key=lambda p: (moment(p[1].get("created_at")), p[0]))
    return [trace for _, trace in keyed]


def to_conversation(traces: Iterable[Any], *, reference: str | None = None) -> MultiTurnSample:
    """The traces of one session as one `MultiTurnSample`, ordered by start; metadata names the
    session and its traces' ids in order."""
    ordered = _ordered(traces)
    if not ordered:
        raise UsageError("to_conversation: no traces given; pass the traces of one session")
    sessions = {s for s in (session_id_of(t) for t in ordered) if s is not None}
    if len(sessions) > 1:
        raise DataError(
            f"to_conversation: the traces belong to {len(sessions)} sessions "
            f"({', '.join(sorted(sessions)[:5])}); group them with group_sessions first",
            field="session_id",
        )
    conversation: list[ConvertedMessage] = []
    for trace in ordered:
        extend(conversation, trace_messages(trace, f"trace {trace.get('id')!r}"))
    metadata = trace_metadata(ordered[-1], next(iter(sessions), None))
    metadata.pop("trace_id", None)
    metadata["trace_ids"] = [t.get("id") for t in ordered]
    metadata["created_at"] = ordered[0].get("created_at")
    return MultiTurnSample(user_input=list(conversation), reference=reference, metadata=metadata)


def group_sessions(traces: Iterable[Any]) -> dict[str, list[dict[str, Any]]]:
    """Traces by session id, each session's in order of start; a trace without a session is a
    session of its own, under its trace id."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for trace in _ordered(traces):
        key = session_id_of(trace) or f"trace:{trace.get('id')}"
        groups.setdefault(key, []).append(trace)
    return groups


def traces_to_dataset(
    traces: Iterable[Any], *, by: Literal["trace", "session"] = "trace"
) -> EvaluationDataset:
    """Traces as an `EvaluationDataset` of `MultiTurnSample`s, one per trace or per session,
    ready for `evaluate` with the multi-turn metrics."""
    if by not in ("trace", "session"):
        raise UsageError(f"traces_to_dataset: by must be 'trace' or 'session', got {by!r}")
    from assay.integrations.trajectory.convert import trace_to_sample

    if by == "trace":
        samples = [trace_to_sample(t) for t in _ordered(traces)]
    else:
        samples = [to_conversation(group) for group in group_sessions(traces).values()]
    return EvaluationDataset(samples, name="traces")


def load_traces(path: str | Path) -> list[dict[str, Any]]:
    """The traces of an export file: JSON Lines (one trace per line), or JSON (a list of traces,
    or the API's page `{"items": [...]}`)."""
    file = Path(path)
    if not file.exists():
        raise UsageError(f"load_traces: {file} does not exist")
    text = file.read_text(encoding="utf-8")
    traces: Any
    if file.suffix == ".jsonl":
        traces = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                traces.append(json.loads(line))
            except ValueError as exc:
                raise DataError(f"not JSON: {exc}", file=str(file), row=number) from None
    else:
        try:
            loaded = json.loads(text)
        except ValueError as exc:
            raise DataError(f"not JSON: {exc}", file=str(file)) from None
        traces = loaded.get("items") if isinstance(loaded, Mapping) else loaded
    if not isinstance(traces, list):
        raise DataError("holds no list of traces", file=str(file))
    for number, trace in enumerate(traces, start=1):
        if not isinstance(trace, Mapping):
            raise DataError(
                f"a trace must be a JSON object, got {type(trace).__name__}",
                file=str(file),
                row=number,
            )
    return traces


def convert_export(
    export: str | Path, output: str | Path, *, by: Literal["trace", "session"] = "trace"
) -> EvaluationDataset:
    """What `assay trajectories` does: an export file's traces as evaluation rows (JSON Lines of
    `MultiTurnSample`s) in `output`, which `assay evaluate` and `EvaluationDataset.load` read."""
    if Path(output).resolve() == Path(export).resolve():
        raise UsageError(f"--output {output} is the export itself; write the rows elsewhere")
    dataset = traces_to_dataset(load_traces(export), by=by)
    dataset.to_jsonl(output)
    return dataset


__all__ = [
    "convert_export",
    "group_sessions",
    "load_traces",
    "session_id_of",
    "to_conversation",
    "traces_to_dataset",
]
