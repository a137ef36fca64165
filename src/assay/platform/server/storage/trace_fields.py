"""The condition fields of a logged trace, resolved onto the `logged_traces` columns for the
condition compiler (`conditions/`): `input`/`output` are the flattened texts, `metadata.<path>`
the JSON below that key path, `score.<criterion>` and `label.<criterion>` the value of the latest
row of that criterion (`score_label.<criterion>` that score row's label) (max created_at, then max id) as subqueries correlated to the trace, `tags`
the JSON list; the rest are their own columns. The project scope is the caller's (every query that
uses the expression is already filtered by project; the subqueries are too)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from assay.platform.server.conditions import (
    ConditionError,
    Field,
    ResolvedField,
    parse_condition,
)
from assay.platform.server.conditions import (
    compile_condition as compile_tree,
)
from assay.platform.server.errors import ApiError
from assay.platform.server.storage import models

T = models.LoggedTrace
COLUMNS = {"input": T.input_text, "output": T.output_text}


def _latest(model: Any, criterion: str, column: str = "value") -> Any:
    return (
        select(getattr(model, column))
        .where(
            model.project_id == T.project_id,
            model.trace_id == T.id,
            model.criterion == criterion,
        )
        .order_by(model.created_at.desc(), model.id.desc())
        .limit(1)
        .scalar_subquery()
    )


def latest_score(criterion: str) -> Any:
    """The value of the trace's latest score of `criterion`, as a correlated subquery."""
    return _latest(models.TraceScore, criterion)


def resolve(field: Field) -> ResolvedField:
    if field.name == "metadata":
        return ResolvedField(T.meta, json_path=field.path)
    if field.name == "score":
        return ResolvedField(_latest(models.TraceScore, field.path[0]))
    if field.name == "score_label":  # the latest score's label; NULL when that one is a number
        return ResolvedField(_latest(models.TraceScore, field.path[0], "label"))
    if field.name == "label":
        return ResolvedField(_latest(models.TraceLabel, field.path[0]))
    return ResolvedField(COLUMNS.get(field.name, getattr(T, field.name)))


def compile_condition(text: str | None) -> Any:
    """The WHERE expression of condition `text` over `logged_traces` (None: every trace); a
    condition the language refuses is a 422 on `condition` naming line, column and what was
    expected."""
    if text is None or not text.strip():
        return None
    try:
        tree = parse_condition(text)
    except ConditionError as exc:
        raise ApiError(422, "validation_error", str(exc), field="condition") from None
    return compile_tree(tree, resolve)


__all__ = ["compile_condition", "latest_score", "resolve"]
