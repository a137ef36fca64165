"""Typed tree -> an SQLAlchemy Core boolean expression for SQLite and PostgreSQL.

Nothing from the condition text reaches the SQL string: field names pick a column through the
caller's resolver, every literal, JSON key and LIKE pattern is a bound parameter, and the SQL
words come from this package. Where the two databases differ, a construct in `dialects.py` renders
each dialect's spelling of the same meaning (the oracle in `oracle.py` is that meaning):

- a JSON value is compared only with a literal of its own JSON type (`JsonNumber`, `JsonString`,
  `JsonBool` yield NULL for any other type, so the comparison is false, never an error or a
  cross-type cast); SQLite reads it with `json_type`/`json_extract`, PostgreSQL with `#>`,
  `#>>` and `jsonb_typeof`, the cast inside a CASE so it only sees numbers;
- text order is code-point order: SQLite's BINARY collation, `COLLATE "C"` on PostgreSQL;
- LIKE is case-sensitive: GLOB on SQLite (whose LIKE ignores ASCII case), LIKE on PostgreSQL;
  ILIKE folds A-Z only: SQLite's LIKE, and LIKE over `translate(...)` on PostgreSQL (whose ILIKE
  would follow the database locale);
- two-valued logic: NULL (missing) makes a comparison false, and NOT negates that false
  (`NOT coalesce(x, false)`), exactly as the oracle does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    Text,
    and_,
    bindparam,
    false,
    func,
    not_,
    or_,
    true,
)
from sqlalchemy.orm import QueryableAttribute
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.types import TypeEngine

from assay.platform.server.conditions.dialects import (
    AsciiCaseLike,
    CaseSensitiveLike,
    CodePointOrder,
    HasString,
    JsonBool,
    JsonIsNull,
    JsonNumber,
    JsonPath,
    JsonString,
    LikePattern,
)
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


@dataclass(frozen=True)
class ResolvedField:
    """What a resolver answers for a field: the SQL expression holding its value and, for a JSON
    expression (metadata), the keys below it (`metadata.user.tier` -> (meta column, ("user",
    "tier"))). `score.<c>` resolves to a numeric scalar subquery, `label.<c>` to a JSON one (empty
    path), `tags` to the JSON list column, the others to their plain columns."""

    expr: ColumnElement[Any] | QueryableAttribute[Any]  # a subquery, or a mapped column
    json_path: tuple[str, ...] = ()


FieldResolver = Callable[[Field], ResolvedField]


# -- the compiler ----------------------------------------------------------------------------------
def compile_condition(
    tree: Condition, resolve: FieldResolver, *, now: datetime | None = None
) -> ColumnElement[bool]:
    """The WHERE expression of `tree`. `resolve` maps each field to its SQL expression; `now`
    (default: the current UTC time) anchors `now() - 7d`. Use it in WHERE: where the oracle
    says False the expression is false or NULL, both of which WHERE drops."""
    moment = datetime.now(timezone.utc) if now is None else _utc(now)
    return _Compiler(resolve, moment).node(tree)


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


_TYPES: dict[type, TypeEngine[Any]] = {
    str: Text(),
    float: Float(),
    bool: Boolean(),
    datetime: DateTime(timezone=True),
}


def _bind(value: Any) -> Any:
    return bindparam(None, value, type_=_TYPES[type(value)])


def _compare(expr: Any, op: str, value: Any) -> Any:
    return {
        "=": expr.__eq__,
        "!=": expr.__ne__,
        "<": expr.__lt__,
        "<=": expr.__le__,
        ">": expr.__gt__,
        ">=": expr.__ge__,
    }[op](value)


class _Compiler:
    def __init__(self, resolve: FieldResolver, now: datetime) -> None:
        self.resolve, self.now = resolve, now

    def node(self, tree: Condition) -> Any:
        if isinstance(tree, And):
            return and_(*map(self.node, tree.items)) if tree.items else true()
        if isinstance(tree, Or):
            return or_(*map(self.node, tree.items))
        if isinstance(tree, Not):
            return not_(func.coalesce(self.node(tree.item), false(), type_=Boolean))
        resolved = self.resolve(tree.field)
        kind = tree.field.kind
        if kind is FieldKind.JSON:
            return self.json(tree, resolved)
        expr = resolved.expr
        if isinstance(tree, IsNull):
            return expr.is_(None)
        if isinstance(tree, HasTag):
            return HasString(expr, _bind(tree.tag))
        if isinstance(tree, Like):
            return self.like(expr, tree)
        if isinstance(tree, InList):
            return expr.in_([_bind(resolve_value(v, self.now)) for v in tree.values])
        ordered = CodePointOrder(expr) if kind is FieldKind.TEXT else expr
        if isinstance(tree, Compare):
            target = ordered if tree.op not in ("=", "!=") else expr
            return _compare(target, tree.op, _bind(resolve_value(tree.value, self.now)))
        if isinstance(tree, Between):
            low, high = (_bind(resolve_value(v, self.now)) for v in (tree.low, tree.high))
            return and_(ordered >= low, ordered <= high)
        raise TypeError(f"not a condition node: {tree!r}")

    def like(self, expr: Any, tree: Like) -> Any:
        pattern = bindparam(None, tree.pattern, type_=LikePattern(tree.case_insensitive))
        return (AsciiCaseLike if tree.case_insensitive else CaseSensitiveLike)(expr, pattern)

    def json(self, tree: Condition, resolved: ResolvedField) -> Any:
        args = [resolved.expr]
        path = tuple(resolved.json_path)
        if path and not all(key.isascii() for key in path):
            args.append(bindparam(None, path, type_=JsonPath(escaped=True)))
        if path:
            args.append(bindparam(None, path, type_=JsonPath()))

        def typed(value: Any) -> Any:
            if isinstance(value, bool):
                return JsonBool(*args)
            return JsonNumber(*args) if isinstance(value, float) else JsonString(*args)

        if isinstance(tree, IsNull):
            return JsonIsNull(*args)
        if isinstance(tree, Like):
            return self.like(JsonString(*args), tree)
        if isinstance(tree, InList):
            return or_(*(typed(v) == _bind(v) for v in tree.values))
        if isinstance(tree, Compare):
            target = typed(tree.value)
            if isinstance(tree.value, str) and tree.op not in ("=", "!="):
                target = CodePointOrder(target)
            return _compare(target, tree.op, _bind(tree.value))
        if isinstance(tree, Between):
            target = typed(tree.low)
            if isinstance(tree.low, str):
                target = CodePointOrder(target)
            return and_(target >= _bind(tree.low), target <= _bind(tree.high))
        raise TypeError(f"{type(tree).__name__} does not apply to a JSON field")


__all__ = ["FieldResolver", "ResolvedField", "compile_condition"]
