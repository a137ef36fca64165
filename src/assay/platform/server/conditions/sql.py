"""Typed tree -> an SQLAlchemy Core boolean expression for SQLite and PostgreSQL.

Nothing from the condition text reaches the SQL string: field names pick a column through the
caller's resolver, every literal, JSON key and LIKE pattern is a bound parameter, and the SQL
words come from this module. Where the two databases differ, a small construct below renders
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
    String,
    Text,
    and_,
    bindparam,
    false,
    func,
    not_,
    or_,
    true,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.exc import CompileError
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.types import TypeDecorator

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


@dataclass(frozen=True)
class ResolvedField:
    """What a resolver answers for a field: the SQL expression holding its value and, for a JSON
    expression (metadata), the keys below it (`metadata.user.tier` -> (meta column, ("user",
    "tier"))). `score.<c>` resolves to a numeric scalar subquery, `label.<c>` to a JSON one (empty
    path), `tags` to the JSON list column, the others to their plain columns."""

    expr: ColumnElement[Any]
    json_path: tuple[str, ...] = ()


FieldResolver = Callable[[Field], ResolvedField]


# -- bound values whose spelling depends on the dialect -----------------------------------------
class JsonPath(TypeDecorator):
    """A tuple of object keys: `$."a"."b"` for SQLite, a text[] for PostgreSQL."""

    impl = String
    cache_ok = True

    def load_dialect_impl(self, dialect: Any) -> Any:
        return dialect.type_descriptor(ARRAY(Text) if dialect.name == "postgresql" else String())

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        if dialect.name == "postgresql":
            return list(value)
        return "$" + "".join(f'."{key}"' for key in value)  # keys never hold '"' (the grammar)


class LikePattern(TypeDecorator):
    """A language pattern, written as GLOB (SQLite, case-sensitive) or as an escaped LIKE."""

    impl = Text
    cache_ok = True

    def __init__(self, case_insensitive: bool) -> None:
        super().__init__()
        self.case_insensitive = case_insensitive

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        if dialect.name == "sqlite" and not self.case_insensitive:
            return patterns.to_glob(value)
        return patterns.to_like(value, case_insensitive=self.case_insensitive)


# -- constructs rendered per dialect ----------------------------------------------------------------
class _Construct(FunctionElement):
    inherit_cache = True


class JsonNumber(_Construct):
    inherit_cache = True
    type = Float()
    name = "assay_json_number"


class JsonString(_Construct):
    inherit_cache = True
    type = Text()
    name = "assay_json_string"


class JsonBool(_Construct):
    inherit_cache = True
    type = Boolean()
    name = "assay_json_bool"


class JsonIsNull(_Construct):
    inherit_cache = True
    type = Boolean()
    name = "assay_json_is_null"


class HasString(_Construct):
    """(json list, text): the list holds that string."""

    inherit_cache = True
    type = Boolean()
    name = "assay_has_string"


class CodePointOrder(_Construct):
    inherit_cache = True
    type = Text()
    name = "assay_code_point_order"


class CaseSensitiveLike(_Construct):
    inherit_cache = True
    type = Boolean()
    name = "assay_like"


class AsciiCaseLike(_Construct):
    inherit_cache = True
    type = Boolean()
    name = "assay_ilike"


def _args(element: FunctionElement, compiler: Any, **kw: Any) -> list[str]:
    return [compiler.process(clause, **kw) for clause in element.clauses]


@compiles(_Construct)
def _unsupported(element: Any, compiler: Any, **kw: Any) -> str:
    raise CompileError(
        f"conditions compile for SQLite and PostgreSQL only, not {compiler.dialect.name}"
    )


def _sqlite_json(element: Any, compiler: Any, **kw: Any) -> tuple[str, str]:
    args = _args(element, compiler, **kw)
    return args[0], (args[1] if len(args) > 1 else "'$'")


@compiles(JsonNumber, "sqlite")
def _sqlite_number(element: Any, compiler: Any, **kw: Any) -> str:
    doc, path = _sqlite_json(element, compiler, **kw)
    return (
        f"(CASE WHEN json_type({doc}, {path}) IN ('integer', 'real')"
        f" THEN json_extract({doc}, {path}) END)"
    )


@compiles(JsonString, "sqlite")
def _sqlite_string(element: Any, compiler: Any, **kw: Any) -> str:
    doc, path = _sqlite_json(element, compiler, **kw)
    return f"(CASE WHEN json_type({doc}, {path}) = 'text' THEN json_extract({doc}, {path}) END)"


@compiles(JsonBool, "sqlite")
def _sqlite_bool(element: Any, compiler: Any, **kw: Any) -> str:
    doc, path = _sqlite_json(element, compiler, **kw)
    return f"(CASE json_type({doc}, {path}) WHEN 'true' THEN 1 WHEN 'false' THEN 0 END)"


@compiles(JsonIsNull, "sqlite")
def _sqlite_is_null(element: Any, compiler: Any, **kw: Any) -> str:
    doc, path = _sqlite_json(element, compiler, **kw)
    return f"(coalesce(json_type({doc}, {path}), 'null') = 'null')"


@compiles(HasString, "sqlite")
def _sqlite_has(element: Any, compiler: Any, **kw: Any) -> str:
    doc, tag = _args(element, compiler, **kw)
    return (
        f"EXISTS (SELECT 1 FROM json_each({doc}) AS assay_tag"
        f" WHERE assay_tag.type = 'text' AND assay_tag.value = {tag})"
    )


@compiles(CodePointOrder, "sqlite")
def _sqlite_order(element: Any, compiler: Any, **kw: Any) -> str:
    return _args(element, compiler, **kw)[0]  # BINARY collation: UTF-8 bytes = code points


@compiles(CaseSensitiveLike, "sqlite")
def _sqlite_like(element: Any, compiler: Any, **kw: Any) -> str:
    text, pattern = _args(element, compiler, **kw)
    return f"({text} GLOB {pattern})"


@compiles(AsciiCaseLike, "sqlite")
def _sqlite_ilike(element: Any, compiler: Any, **kw: Any) -> str:
    text, pattern = _args(element, compiler, **kw)
    return f"({text} LIKE {pattern} ESCAPE '\\')"


def _pg_json(element: Any, compiler: Any, **kw: Any) -> tuple[str, str]:
    """(the JSONB value at the path, the same as text)."""
    args = _args(element, compiler, **kw)
    doc = f"CAST({args[0]} AS JSONB)"
    if len(args) == 1:
        return doc, f"({doc} #>> '{{}}')"
    path = f"CAST({args[1]} AS TEXT[])"
    return f"({doc} #> {path})", f"({doc} #>> {path})"


@compiles(JsonNumber, "postgresql")
def _pg_number(element: Any, compiler: Any, **kw: Any) -> str:
    value, text = _pg_json(element, compiler, **kw)
    return f"(CASE WHEN jsonb_typeof({value}) = 'number' THEN CAST({text} AS DOUBLE PRECISION) END)"


@compiles(JsonString, "postgresql")
def _pg_string(element: Any, compiler: Any, **kw: Any) -> str:
    value, text = _pg_json(element, compiler, **kw)
    return f"(CASE WHEN jsonb_typeof({value}) = 'string' THEN {text} END)"


@compiles(JsonBool, "postgresql")
def _pg_bool(element: Any, compiler: Any, **kw: Any) -> str:
    value, text = _pg_json(element, compiler, **kw)
    return f"(CASE WHEN jsonb_typeof({value}) = 'boolean' THEN CAST({text} AS BOOLEAN) END)"


@compiles(JsonIsNull, "postgresql")
def _pg_is_null(element: Any, compiler: Any, **kw: Any) -> str:
    value, _text = _pg_json(element, compiler, **kw)
    return f"(coalesce(jsonb_typeof({value}), 'null') = 'null')"


@compiles(HasString, "postgresql")
def _pg_has(element: Any, compiler: Any, **kw: Any) -> str:
    doc, tag = _args(element, compiler, **kw)
    return f"(CAST({doc} AS JSONB) @> jsonb_build_array(CAST({tag} AS TEXT)))"


@compiles(CodePointOrder, "postgresql")
def _pg_order(element: Any, compiler: Any, **kw: Any) -> str:
    return f'({_args(element, compiler, **kw)[0]} COLLATE "C")'


@compiles(CaseSensitiveLike, "postgresql")
def _pg_like(element: Any, compiler: Any, **kw: Any) -> str:
    text, pattern = _args(element, compiler, **kw)
    return f"({text} LIKE {pattern} ESCAPE '\\')"


@compiles(AsciiCaseLike, "postgresql")
def _pg_ilike(element: Any, compiler: Any, **kw: Any) -> str:
    text, pattern = _args(element, compiler, **kw)
    folded = f"translate({text}, '{patterns._ASCII_UPPER}', '{patterns._ASCII_LOWER}')"
    return f"({folded} LIKE {pattern} ESCAPE '\\')"


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


_TYPES = {str: Text(), float: Float(), bool: Boolean(), datetime: DateTime(timezone=True)}


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
            return expr.in_([resolve_value(v, self.now) for v in tree.values])
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
        if resolved.json_path:
            args.append(bindparam(None, tuple(resolved.json_path), type_=JsonPath()))

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
