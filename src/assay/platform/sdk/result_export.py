"""Upload an `EvaluationResult` to the assay platform: each row as a logged trace, each cell as a
score on it, so the web UI, review-queue conditions (`score.faithfulness < 0.5`) and dataset export
see results computed elsewhere.

Through the trace routes (`POST /api/v1/traces`, and the batch score route
`POST /api/v1/traces/scores`, which `add_scores` calls):

- A row whose metadata names a platform trace (`trace_id`: the trace's UUID, or the 32 hex digits
  of the OpenTelemetry trace id it was ingested under) gets its scores on that trace. Every such
  trace is looked up first, so an unknown id uploads nothing.
- Every other row becomes a new trace: input = `user_input`, output = `response`, contexts =
  `retrieved_contexts`, metadata `assay` = the run id, experiment, row index and id, reference and
  the row's cells as `EvaluationResult.row_records` has them; tags `assay` and `assay-run:<id>`.
  Its id is derived from the run id and the row index, so uploading the same result again stores
  no second copy (the server ignores an id it has).
- Each cell is one score, its source `assay:<run id>` followed by the judge that scored the metric
  (the identity the library's judge cards are keyed by) and a digest of the metric's configuration
  (`assay.platform.judge_source`), so the platform's trust panel shows that judge's card: an ok number, boolean or categorical label
  with its reason (pass/fail-like labels as 1/0, as the library's aggregates read them; other
  labels as labels, which conditions read as `score_label.<metric>`); a failed cell with status
  `error` and `<ExceptionType>: <message>` as reason, never a value; a skipped cell with status
  `skipped` and its reason. A ranking (a list), or a label over the server's 200 characters, has
  no place in a score: it is kept in the new trace's metadata and listed in
  `UploadedResult.not_scored`.
- Scores already stored for this run (the latest score of the criterion came from this run) are
  not sent again, so an upload cut off midway is completed by calling it again.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from assay.errors import DataError, UsageError
from assay.platform.judge_source import read_upload_source, upload_source
from assay.platform.sdk.client import current
from assay.platform.sdk.errors import NotFound, ValidationFailed
from assay.platform.sdk.trace_body import CONTEXT_MAX, CONTEXTS_MAX, NAME_MAX, jsonable, text
from assay.schema.outcome import Error, Ok, Skipped
from assay.schema.result import EvaluationResult
from assay.schema.values import as_number

BATCH = 100  # traces per request (the server takes 500)
MAX_BODY = 900_000  # bytes per request: the server's body cap is 1 MB
REASON_MAX = 20_000
SCORES_MAX = 1_000  # scores in one batch request: the server's cap
LABEL_MAX = 200  # the server's cap on a label score
# Row ids name traces: the same result uploaded twice names the same traces.
_NAMESPACE = uuid.UUID("6f1c1f4e-2b7a-4c55-9a51-0d7c3c2b9e21")


@dataclass(frozen=True)
class UploadedResult:
    """What the upload did: the trace of each row, how many traces and scores were stored."""

    run_id: str
    trace_ids: list[str]
    traces_created: int
    scores_sent: int
    scores_already_there: int
    not_scored: list[tuple[int, str]] = field(default_factory=list)  # (row, metric)


def platform_trace_id(value: Any, row: int, key: str) -> str:
    """A trace id from row metadata as the platform names traces (a UUID string)."""
    try:
        return str(uuid.UUID(str(value).strip()))
    except ValueError:
        raise DataError(
            f"{key} must be a platform trace id (a UUID, or 32 hex digits), got {value!r}",
            row=row,
            field=key,
            row_is_index=True,
        ) from None


def score_body(name: str, cell: Any, source: str) -> dict[str, Any] | None:
    """One cell as the score route's body; None for a value the route cannot hold."""
    if isinstance(cell, Ok):
        value: Any = cell.value
        if isinstance(value, str):  # pass/fail-like labels as 1/0, other labels as labels
            number = as_number(value)
            value = number if number is not None else value.strip()
            if isinstance(value, str) and not 0 < len(value) <= LABEL_MAX:
                return None
        elif not isinstance(value, bool):
            value = as_number(value)  # a finite number, else (a ranking) nothing
            if value is None:
                return None
        body: dict[str, Any] = {"criterion": name, "status": "ok", "value": value}
        if cell.reason:
            body["reason"] = text(cell.reason, REASON_MAX)
    elif isinstance(cell, Skipped):
        body = {"criterion": name, "status": "skipped", "reason": text(cell.reason, REASON_MAX)}
    elif isinstance(cell, Error):
        reason = f"{cell.error_type}: {cell.message}"
        body = {"criterion": name, "status": "error", "reason": text(reason, REASON_MAX)}
    else:  # pragma: no cover - Outcome is a closed union
        raise UsageError(f"unknown outcome {cell!r}")
    body["source"] = source
    return body


def _trace_body(
    result: EvaluationResult, index: int, trace_id: str, record: dict[str, Any]
) -> dict[str, Any]:
    sample = result.dataset[index]
    fields = sample.to_dict()
    contexts = [text(str(c), CONTEXT_MAX) for c in (fields.get("retrieved_contexts") or [])]
    metadata = {k: v for k, v in (fields.get("metadata") or {}).items() if k != "assay"}
    metadata["assay"] = {
        "run_id": str(result.run_id),
        "experiment": result.experiment_name,
        "row": index,
        "row_id": metadata.get("id"),
        "reference": fields.get("reference"),
        "metrics": record["metrics"],
    }
    run_tag = f"assay-run:{result.run_id}"
    return {
        "id": trace_id,
        "input": jsonable(fields.get("user_input")),
        "output": jsonable(fields.get("response")),
        "contexts": contexts[:CONTEXTS_MAX],
        "metadata": jsonable(metadata),
        "tags": ["assay", run_tag]
        + ([f"experiment:{result.experiment_name}"[:NAME_MAX]] if result.experiment_name else []),
    }


def _batches(bodies: list[dict[str, Any]], most: int = BATCH) -> list[list[dict[str, Any]]]:
    """`bodies` in order, at most `most` a request and under the server's body cap."""
    batches: list[list[dict[str, Any]]] = []
    size = 0
    for body in bodies:
        weight = len(json.dumps(body, ensure_ascii=False).encode()) + 1
        if not batches or len(batches[-1]) >= most or size + weight > MAX_BODY:
            batches.append([])
            size = 0
        batches[-1].append(body)
        size += weight
    return batches


def add_scores(scores: Iterable[dict[str, Any]]) -> int:
    """Append many scores to logged traces in one request, all or nothing; returns how many were
    stored. Each score is a dict: `trace_id`, `criterion`, and `value` (a number, a boolean or a
    categorical label) for an ok score, or `status` "skipped" / "error" with a `reason` instead;
    `reason` and `source` are optional. At most `SCORES_MAX` per call. Nothing is stored when any
    score is refused: `ValidationFailed` names it (`scores[3].value: ...`)."""
    items = list(scores)
    if not items:
        raise ValidationFailed("add_scores: give at least one score", field="scores")
    if len(items) > SCORES_MAX:
        raise ValidationFailed(
            f"add_scores: {len(items)} scores is over the limit of {SCORES_MAX} per request; "
            "send them in parts",
            field="scores",
        )
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise ValidationFailed(
                f"add_scores: scores[{index}] must be a dict, got {type(item).__name__}",
                field=f"scores[{index}]",
            )
        value = item.get("value")
        if isinstance(value, float) and not math.isfinite(value):  # JSON cannot carry it
            raise ValidationFailed(
                f"add_scores: scores[{index}].value must be a finite number, got {value!r}; "
                "nothing was sent",
                field=f"scores[{index}].value",
            )
    answer = current().request("POST", "/traces/scores", json={"scores": items})
    return int(answer["stored"])


def _from_run(stored: str, run_id: str) -> bool:
    """Whether a stored score's source (`key:<id>:<as sent>`) is an upload of run `run_id`."""
    given = stored.split(":", 2)[2] if stored.startswith("key:") and stored.count(":") >= 2 else ""
    found = read_upload_source(given)
    return found is not None and found.run_id == run_id


def upload_result(result: EvaluationResult, *, trace_key: str = "trace_id") -> UploadedResult:
    """Upload `result` to the logged-in platform (`assay.platform.login`); see the module.

    Needs a key with the `write` scope (scores are written with it)."""
    if not isinstance(result, EvaluationResult):
        raise UsageError(f"upload_result needs an EvaluationResult, got {type(result).__name__}")
    for name in result.metric_names:
        if not name or len(name) > NAME_MAX:
            raise UsageError(
                f"metric name {name!r}: the platform takes criterion names of 1 to {NAME_MAX} "
                "characters"
            )
    client = current()
    run_id = str(result.run_id)
    specs = {spec.get("name"): spec for spec in result.metric_specs}
    sources = {name: upload_source(run_id, specs.get(name)) for name in result.metric_names}
    trace_ids: list[str] = []
    linked: set[int] = set()
    for index, sample in enumerate(result.dataset):
        given = (sample.metadata or {}).get(trace_key)
        if given not in (None, ""):
            trace_ids.append(platform_trace_id(given, index, trace_key))
            linked.add(index)
        else:
            trace_ids.append(str(uuid.uuid5(_NAMESPACE, f"{run_id}/{index}")))

    stored: dict[str, dict[str, Any]] = {}  # trace id -> latest score per criterion
    for index in sorted(linked):
        try:
            found = client.request("GET", f"/traces/{trace_ids[index]}")
        except NotFound:
            raise DataError(
                f"{trace_key} {trace_ids[index]}: no such trace in this project",
                row=index,
                field=trace_key,
                row_is_index=True,
            ) from None
        stored[trace_ids[index]] = found.get("scores") or {}

    records = result.row_records()
    fresh = [
        _trace_body(result, index, trace_ids[index], records[index])
        for index in range(len(trace_ids))
        if index not in linked
    ]
    created = 0
    for batch in _batches(fresh):
        answer = client.request("POST", "/traces", json={"traces": batch})
        created += int(answer.get("accepted", 0))
        if answer.get("duplicates"):  # uploaded before: read what it already holds
            for trace in batch:
                got = client.request("GET", f"/traces/{trace['id']}")
                stored[trace["id"]] = got.get("scores") or {}

    already = 0
    pending: list[dict[str, Any]] = []
    not_scored: list[tuple[int, str]] = []
    for index, cells in enumerate(result.outcomes):
        trace_id = trace_ids[index]
        latest = stored.get(trace_id, {})
        for name, cell in cells.items():
            body = score_body(name, cell, sources.get(name) or upload_source(run_id, None))
            if body is None:
                not_scored.append((index, name))
                continue
            previous = latest.get(name)
            if isinstance(previous, dict) and _from_run(str(previous.get("source", "")), run_id):
                already += 1
                continue
            pending.append({"trace_id": trace_id, **body})
    sent = sum(add_scores(batch) for batch in _batches(pending, SCORES_MAX))
    return UploadedResult(run_id, trace_ids, created, sent, already, not_scored)


__all__ = [
    "SCORES_MAX",
    "UploadedResult",
    "add_scores",
    "platform_trace_id",
    "score_body",
    "upload_result",
]
