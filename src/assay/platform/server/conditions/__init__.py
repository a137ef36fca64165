"""The review-queue condition language: a SQL-like filter over traces (docs/review-conditions.md).

Text is parsed with a Lark grammar (`grammar.lark`) into a typed tree of frozen dataclasses
(`tree.py`), checked against the field whitelist and the operator/literal types, and refused
with a `ConditionError` (a `UsageError`, so a `ValueError`) naming the line, column and what was
expected. A tree compiles to an SQLAlchemy Core boolean expression with bound parameters only,
for SQLite and PostgreSQL, through a field resolver the caller writes for its tables (`sql.py`);
`matches` is the same meaning in plain Python (`oracle.py`).

    from sqlalchemy import select
    from assay.platform.server.conditions import (
        ConditionError, Field, ResolvedField, compile_condition, matches, parse_condition,
    )

    def resolve(field: Field) -> ResolvedField:
        if field.name == "metadata":
            return ResolvedField(traces.c.meta, json_path=field.path)
        if field.name == "score":  # the latest score of that criterion, correlated to the trace
            latest = (
                select(scores.c.value)
                .where(scores.c.trace_id == traces.c.id, scores.c.criterion == field.path[0])
                .order_by(scores.c.created_at.desc(), scores.c.id.desc())
                .limit(1)
                .scalar_subquery()
                .correlate(traces)  # one value per trace of the outer query
            )
            return ResolvedField(latest)
        ...  # label.<c> likewise (a JSON subquery); input -> traces.c.input_text; ...
        return ResolvedField(traces.c[field.name])

    try:
        tree = parse_condition("score.faithfulness < 0.5 AND created_at > now() - 7d")
    except ConditionError as exc:  # -> 422, with exc.line / exc.column / exc.expected
        ...
    rows = session.execute(select(traces.c.id).where(compile_condition(tree, resolve)))
    matches(tree, {"scores": {"faithfulness": 0.2}, "created_at": some_utc_datetime})  # -> bool
"""

from __future__ import annotations

from assay.platform.server.conditions.oracle import matches
from assay.platform.server.conditions.parser import parse_condition
from assay.platform.server.conditions.sql import FieldResolver, ResolvedField, compile_condition
from assay.platform.server.conditions.tree import (
    DEFAULT_LIMITS,
    Condition,
    ConditionError,
    Field,
    FieldKind,
    Limits,
    format_condition,
)

__all__ = [
    "DEFAULT_LIMITS",
    "Condition",
    "ConditionError",
    "Field",
    "FieldKind",
    "FieldResolver",
    "Limits",
    "ResolvedField",
    "compile_condition",
    "format_condition",
    "matches",
    "parse_condition",
]
