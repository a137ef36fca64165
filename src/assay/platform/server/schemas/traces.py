"""Request bodies of the trace and review-queue routes, each string and list capped. JSON values
(input, output, raw request and response, metadata, span attributes) may be any JSON, but no deeper
than `JSON_DEPTH`, with finite numbers and strings PostgreSQL can store; a problem is a 422 naming
the field, e.g. `traces[3].metadata.user`."""

from __future__ import annotations

import math
import uuid
from datetime import datetime, timezone
from typing import Annotated, Any, Literal, overload

from pydantic import AfterValidator, Field, StrictBool, StrictFloat, StrictInt, field_validator

from assay.platform.server.conditions import DEFAULT_LIMITS
from assay.platform.server.schemas.bodies import (
    CONTEXT_MAX,
    CONTEXTS_MAX,
    INT_MAX,
    NAME_MAX,
    SHORT_MAX,
    TEXT_MAX,
    Body,
    LongText,
    Name,
    Short,
    _storable,
)

BATCH_MAX = 500
SPANS_MAX = 500
TAGS_MAX = 50
IDS_MAX = 500
JSON_DEPTH = 32
CONDITION_MAX = DEFAULT_LIMITS.max_length
CRITERIA_MAX = 20


def _fine(value: Any, depth: int) -> bool:
    """True when `value` passes every check of `_json_value`, found without building the field
    names (an ingest checks every value of every trace); False sends it to `_json_value`'s walk,
    which names the problem (or, for a type seen only here, accepts it)."""
    if depth > JSON_DEPTH:
        return False
    kind = type(value)
    if kind is str:
        return "\x00" not in value and (value.isascii() or _utf8(value))
    # loops rather than all(...): no generator per container on this hot path
    if kind is dict:
        for key, item in value.items():  # noqa: SIM110
            if not (_fine(key, depth + 1) and _fine(item, depth + 1)):
                return False
        return True
    if kind is list:
        for item in value:  # noqa: SIM110
            if not _fine(item, depth + 1):
                return False
        return True
    if kind is float:
        return math.isfinite(value)
    return kind is int or kind is bool or value is None


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_value(value: Any, where: str = "", depth: int = 0) -> Any:
    if depth == 0 and _fine(value, 0):
        return value
    if depth > JSON_DEPTH:
        raise ValueError(f"{where or 'value'} is nested deeper than {JSON_DEPTH} levels")
    if isinstance(value, str):
        try:
            _storable(value)
        except ValueError as exc:
            raise ValueError(f"{where or 'value'} {exc}") from None
    elif isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where or 'value'} must be a finite number")
    elif isinstance(value, dict):
        for key, item in value.items():
            _json_value(key, f"{where}.{key}" if where else "key", depth + 1)
            _json_value(item, f"{where}.{key}" if where else str(key), depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _json_value(item, f"{where}[{index}]", depth + 1)
    return value


JsonValue = Annotated[Any, AfterValidator(_json_value)]
JsonObject = Annotated[dict[str, Any], AfterValidator(_json_value)]
Passage = Annotated[str, Field(max_length=CONTEXT_MAX), AfterValidator(_storable)]
Tag = Annotated[str, Field(min_length=1, max_length=NAME_MAX), AfterValidator(_storable)]
Count = Annotated[StrictInt, Field(ge=0, le=INT_MAX)]
Milliseconds = Annotated[float, Field(ge=0, le=1e12, allow_inf_nan=False)]


def _trace_id(value: str) -> str:
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise ValueError("must be a UUID string") from None


TraceId = Annotated[str, Field(max_length=36), AfterValidator(_trace_id)]


@overload
def utc(moment: datetime) -> datetime: ...
@overload
def utc(moment: None) -> None: ...
def utc(moment: datetime | None) -> datetime | None:
    """The moment in UTC (a naive one is taken as UTC). Converted, not only labelled: SQLite
    keeps a timestamp's wall-clock fields without its offset, so 10:00+02:00 must be stored as
    08:00 for the time ranges of conditions, backfills and the dashboard to hold."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


class Usage(Body):
    input_tokens: Count | None = None
    output_tokens: Count | None = None


class SpanIn(Body):
    id: Annotated[str, Field(min_length=1, max_length=64), AfterValidator(_storable)]
    parent_id: Annotated[str, Field(max_length=64), AfterValidator(_storable)] | None = None
    name: Short = ""
    kind: Literal["llm", "function", "retrieval", "other"] = "other"
    started_at: datetime | None = None
    ended_at: datetime | None = None
    input: JsonValue = None
    output: JsonValue = None
    error: LongText | None = None
    attributes: JsonObject = Field(default_factory=dict)


class TraceIn(Body):
    id: TraceId
    created_at: datetime | None = None
    input: JsonValue = None
    output: JsonValue = None
    raw_input: JsonValue = None
    raw_output: JsonValue = None
    contexts: list[Passage] = Field(default_factory=list, max_length=CONTEXTS_MAX)
    metadata: JsonObject = Field(default_factory=dict)
    model: Annotated[str, Field(max_length=NAME_MAX), AfterValidator(_storable)] | None = None
    usage: Usage | None = None
    latency_ms: Milliseconds | None = None
    error: LongText | None = None
    tags: list[Tag] = Field(default_factory=list, max_length=TAGS_MAX)
    spans: list[SpanIn] = Field(default_factory=list, max_length=SPANS_MAX)


class TraceBatch(Body):
    traces: list[TraceIn] = Field(min_length=1, max_length=BATCH_MAX)


EDITABLE = ("input", "output", "contexts", "metadata", "tags")


class TraceChanges(Body):
    input: JsonValue = None
    output: JsonValue = None
    contexts: list[Passage] | None = Field(default=None, max_length=CONTEXTS_MAX)
    metadata: JsonObject | None = None
    tags: list[Tag] | None = Field(default=None, max_length=TAGS_MAX)


class TracePatch(Body):
    version: Annotated[StrictInt, Field(ge=1, le=INT_MAX)]
    changes: TraceChanges

    @field_validator("changes")
    @classmethod
    def _something(cls, changes: TraceChanges) -> TraceChanges:
        if not changes.model_fields_set:
            raise ValueError(f"name at least one field to change ({', '.join(EDITABLE)})")
        return changes


class ToDataset(Body):
    trace_ids: list[TraceId] = Field(min_length=1, max_length=IDS_MAX)
    dataset: Name


LabelValue = StrictBool | StrictInt | StrictFloat | Annotated[str, Field(max_length=SHORT_MAX)]


class LabelIn(Body):
    criterion: Name
    value: LabelValue
    queue: Name | None = None
    comment: LongText = ""

    @field_validator("value")
    @classmethod
    def _finite(cls, value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("must be a finite number")
        if isinstance(value, str):
            _storable(value)
        return value


Condition = Annotated[str, Field(max_length=CONDITION_MAX), AfterValidator(_storable)]
CriterionNames = Annotated[list[Name], Field(max_length=CRITERIA_MAX)]


# A queue's share of traces kept for review (storage/review_sampling.py)
SampleRate = Annotated[float, Field(gt=0.0, le=1.0, allow_inf_nan=False)]
QueueOrder = Literal["arrival", "uncertainty"]
# "trace": the matching traces are the items; "session": their sessions, one item each
QueueScope = Literal["trace", "session"]


class QueueIn(Body):
    name: Name
    condition: Condition = ""
    criteria: CriterionNames = Field(default_factory=list)
    judge_model: Short | None = None
    dataset: Name | None = None
    order: QueueOrder = "arrival"
    sample_rate: SampleRate | None = None
    scope: QueueScope = "trace"  # fixed once made (a change of it is an unknown field)


class QueueChanges(Body):
    name: Name | None = None
    condition: Condition | None = None
    criteria: CriterionNames | None = None
    judge_model: Short | None = None
    dataset: Name | None = None
    order: QueueOrder | None = None
    sample_rate: SampleRate | None = None


class QueuePatch(Body):
    version: Annotated[StrictInt, Field(ge=1, le=INT_MAX)]
    changes: QueueChanges


__all__ = [
    "BATCH_MAX",
    "CONDITION_MAX",
    "EDITABLE",
    "TEXT_MAX",
    "LabelIn",
    "QueueIn",
    "QueuePatch",
    "SpanIn",
    "ToDataset",
    "TraceBatch",
    "TraceIn",
    "TracePatch",
    "utc",
]
