"""Scores of logged traces computed outside the server (write scope): one at a time,
`POST /api/v1/traces/{trace_id}/scores`, or many in one request, `POST /api/v1/traces/scores`.

A score is typed like the library's outcomes (`assay.schema.outcome`): `ok` with a value that is a
finite number, a boolean or a categorical label (a non-empty string of at most `LABEL_MAX`
characters), `skipped` with its reason, or `error` with its cause as the reason; a skipped or
failed score has no value. Stored in `trace_scores` so each kind reads as itself:

- a number in `value` (between -1e15 and 1e15);
- a boolean as 1.0 / 0.0 in `value`, so `score.<criterion>` conditions and means read it, and as
  `true` / `false` in `outcome.value`;
- a label in `label`, with `value` NULL: conditions read it as `score_label.<criterion>`, and it
  is never mistaken for a number.

A batch (at most `SCORES_MAX` scores) is all or nothing: every score is checked, and every trace
looked up, before anything is written, and the first problem is a 422 naming its index and field
(`scores[3].value`); the rows are then written in one transaction.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request
from pydantic import Field, ValidationInfo, field_validator

from assay.platform.server.api.deps import Writer, state_of
from assay.platform.server.api.traces import RawTraceId, author_of, trace_id_of
from assay.platform.server.auth.keys import Principal
from assay.platform.server.errors import invalid
from assay.platform.server.schemas.bodies import Body, LongText, Name, _storable
from assay.platform.server.schemas.scores import LABEL_MAX, typed_value
from assay.platform.server.schemas.traces import TraceId
from assay.platform.server.storage.traces import TraceRepo

router = APIRouter(prefix="/api/v1")

SCORES_MAX = 1_000  # scores in one batch request
SOURCE_MAX = 900  # with the `key:<id>:` prefix it stays inside the 1,000 of trace_scores.source


class ScoreIn(Body):
    criterion: Name
    status: Literal["ok", "skipped", "error"] = "ok"
    value: Any = Field(default=None, validate_default=True)
    reason: LongText | None = None
    source: Annotated[str, Field(max_length=SOURCE_MAX)] = ""

    @field_validator("source")
    @classmethod
    def _source(cls, value: str) -> str:
        return _storable(value)

    @field_validator("value")
    @classmethod
    def _value(cls, value: Any, info: ValidationInfo) -> Any:
        status = info.data.get("status", "ok")
        if status == "ok":
            if value is None:
                raise ValueError("an ok score needs a value (a number, a boolean or a label)")
            return typed_value(value)
        if value is not None:
            raise ValueError(f"a {status} score has no value (give its cause as the reason)")
        return None


class TraceScoreIn(ScoreIn):
    trace_id: TraceId


class ScoreBatch(Body):
    scores: list[TraceScoreIn] = Field(min_length=1, max_length=SCORES_MAX)


def score_row(trace_id: str, score: ScoreIn, source: str) -> dict[str, Any]:
    """The `trace_scores` row of one checked score (see the module for how each kind is kept)."""
    value = score.value
    return {
        "trace_id": trace_id,
        "criterion": score.criterion,
        "value": float(value) if isinstance(value, (bool, float)) else None,
        "label": value if isinstance(value, str) else None,
        "outcome": {"status": score.status, "value": value, "reason": score.reason},
        "source": source,
        "queue_id": None,
    }


def source_of(principal: Principal, score: ScoreIn) -> str:
    return author_of(principal) + (f":{score.source}" if score.source else "")


def score_answer(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in ("trace_id", "criterion", "value", "label", "outcome", "source")}


@router.post("/traces/scores", status_code=201)
def add_scores(body: ScoreBatch, request: Request, principal: Writer) -> dict[str, Any]:
    """Append many scores, to one trace or to many, all or nothing."""
    rows = [score_row(s.trace_id, s, source_of(principal, s)) for s in body.scores]
    with state_of(request).transaction() as session:
        repo = TraceRepo(session, principal.project_id)
        found = repo.existing_ids({row["trace_id"] for row in rows})
        for index, row in enumerate(rows):
            if row["trace_id"] not in found:
                raise invalid(
                    f"scores[{index}].trace_id",
                    f"no trace with id {row['trace_id']} in this project; nothing was stored",
                )
        for start in range(0, len(rows), 200):  # under SQLite's bound-parameter cap
            repo.add_scores(rows[start : start + 200])
    return {"stored": len(rows)}


@router.post("/traces/{trace_id}/scores", status_code=201)
def add_score(
    trace_id: RawTraceId, body: ScoreIn, request: Request, principal: Writer
) -> dict[str, Any]:
    """Append one score (source `key:<key id>` plus the given source)."""
    row = score_row(trace_id_of(trace_id), body, source_of(principal, body))
    with state_of(request).transaction() as session:
        repo = TraceRepo(session, principal.project_id)
        repo.get(row["trace_id"])
        repo.add_scores([row])
    return score_answer(row)


__all__ = [
    "LABEL_MAX",
    "SCORES_MAX",
    "ScoreBatch",
    "ScoreIn",
    "TraceScoreIn",
    "router",
    "score_row",
    "typed_value",
]
