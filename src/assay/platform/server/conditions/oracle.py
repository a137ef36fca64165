"""The meaning of a condition in plain Python: `matches(tree, record)`.

This is the reference the SQL compiler is tested against (same ids on SQLite, PostgreSQL and here)
and what a caller can use for a single trace in memory. The logic is two-valued: a comparison
whose value is missing, NULL, JSON null or of another type than its literal is false, and NOT of a
false comparison is true (`NOT metadata.tier = 'gold'` matches traces without a tier).

A record is a dict with the condition's plain field names as keys (`id`, `input`, `output` as
text, `model`, `created_at` as a datetime, numbers, `error`, `edited`, `tags` as a list of strings),
`metadata` (a dict), and `scores` / `score_labels` / `labels`: {criterion: the latest value} (a
score's label is in `score_labels` when the latest score of its criterion is one). A missing key
is NULL.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from assay.platform.server.conditions import patterns
from assay.platform.server.conditions.tree import (
    And,
    Between,
    Compare,
    Condition,
    Field,
    FieldKind,
    HasTag,
    InList,
    IsNull,
    Like,
    Not,
    Or,
    resolve_value,
)

_MISSING = object()


def matches(tree: Condition, record: dict[str, Any], *, now: datetime | None = None) -> bool:
    """Whether `record` satisfies `tree` (`now` anchors `now() - 7d`; default: the current time)."""
    moment = datetime.now(timezone.utc) if now is None else now
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return _eval(tree, record, moment)


def _eval(tree: Condition, record: dict[str, Any], now: datetime) -> bool:
    if isinstance(tree, And):
        return all(_eval(item, record, now) for item in tree.items)
    if isinstance(tree, Or):
        return any(_eval(item, record, now) for item in tree.items)
    if isinstance(tree, Not):
        return not _eval(tree.item, record, now)
    value = _lookup(record, tree.field)
    if isinstance(tree, IsNull):
        return value is None or value is _MISSING
    if isinstance(tree, HasTag):
        return isinstance(value, list) and any(isinstance(t, str) and t == tree.tag for t in value)
    if isinstance(tree, Like):
        if not isinstance(value, str):
            return False
        regex = patterns.to_regex(tree.pattern, case_insensitive=tree.case_insensitive)
        subject = patterns.fold_ascii(value) if tree.case_insensitive else value
        return regex.fullmatch(subject) is not None
    if isinstance(tree, Compare):
        return _compare(value, tree.op, resolve_value(tree.value, now))
    if isinstance(tree, InList):
        return any(_compare(value, "=", resolve_value(v, now)) for v in tree.values)
    if isinstance(tree, Between):
        low, high = resolve_value(tree.low, now), resolve_value(tree.high, now)
        return _compare(value, ">=", low) and _compare(value, "<=", high)
    raise TypeError(f"not a condition node: {tree!r}")


def _lookup(record: dict[str, Any], ref: Field) -> Any:
    if ref.name == "score":
        value = (record.get("scores") or {}).get(ref.path[0], _MISSING)
    elif ref.name == "score_label":
        value = (record.get("score_labels") or {}).get(ref.path[0], _MISSING)
    elif ref.name == "label":
        value = (record.get("labels") or {}).get(ref.path[0], _MISSING)
    else:
        value = record.get(ref.name, _MISSING)
        if ref.name == "metadata":
            for key in ref.path:
                if not isinstance(value, dict):
                    return _MISSING
                value = value.get(key, _MISSING)
    if value is None or value is _MISSING:
        return _MISSING
    return _normalise(value, ref.kind)


def _normalise(value: Any, kind: FieldKind) -> Any:
    """The value as the language sees it: numbers as floats, dates in UTC; a JSON value keeps its
    type (a bool stays a bool, never the number 1)."""
    if kind is FieldKind.NUMBER:
        return (
            float(value)
            if isinstance(value, (int, float)) and not isinstance(value, bool)
            else _MISSING
        )
    if kind is FieldKind.DATETIME:
        if not isinstance(value, datetime):
            return _MISSING
        return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value
    if kind is FieldKind.JSON and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _same_type(value: Any, literal: Any) -> bool:
    if isinstance(literal, bool) or isinstance(value, bool):
        return isinstance(literal, bool) and isinstance(value, bool)
    if isinstance(literal, float):
        return isinstance(value, float)
    if isinstance(literal, str):
        return isinstance(value, str)
    return isinstance(literal, datetime) and isinstance(value, datetime)


def _compare(value: Any, op: str, literal: Any) -> bool:
    if value is _MISSING or not _same_type(value, literal):
        return False
    if op == "=":
        return value == literal
    if op == "!=":
        return value != literal
    if op == "<":
        return value < literal
    if op == "<=":
        return value <= literal
    if op == ">":
        return value > literal
    return value >= literal


__all__ = ["matches"]
