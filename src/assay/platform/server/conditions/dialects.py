"""The SQL constructs whose spelling differs between SQLite and PostgreSQL, one meaning each
(the meaning is the oracle's, `oracle.py`; why each spelling is what it is: `sql.py`'s docstring).

Each construct is a FunctionElement over clause arguments only (the column or subquery, bound
parameters), so SQLAlchemy's statement cache keys on its structure and rebinds the values; the
values whose form depends on the dialect (a JSON path, a LIKE pattern) are written by the bind
types below when the statement runs.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import String, Text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.exc import CompileError
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.types import Boolean, Float, TypeDecorator

from assay.platform.server.conditions import patterns


# -- bound values whose spelling depends on the dialect -----------------------------------------
class JsonPath(TypeDecorator):
    """A tuple of object keys: `$."a"."b"` for SQLite, a text[] for PostgreSQL.

    SQLite before 3.45 compares a path's key with the key as spelled in the stored JSON text, and
    Python's json (SQLAlchemy's serializer) spells non-ASCII keys as `\\u00e9`; `escaped` writes
    the key that way. For a key with non-ASCII characters the compiler tries both spellings."""

    impl = String
    cache_ok = True

    def __init__(self, escaped: bool = False) -> None:
        super().__init__()
        self.escaped = escaped

    def load_dialect_impl(self, dialect: Any) -> Any:
        return dialect.type_descriptor(ARRAY(Text) if dialect.name == "postgresql" else String())

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        if dialect.name == "postgresql":
            return list(value)
        # keys never hold '"', '\\' or control characters (the grammar refuses them)
        keys = (json.dumps(key)[1:-1] if self.escaped else key for key in value)
        return "$" + "".join(f'."{key}"' for key in keys)


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
    """(the SQLite json_type of the value at the path, its json_extract)."""
    doc, *paths = _args(element, compiler, **kw)
    if not paths:
        return f"json_type({doc})", f"json_extract({doc}, '$')"
    if len(paths) == 1:
        return f"json_type({doc}, {paths[0]})", f"json_extract({doc}, {paths[0]})"
    escaped, plain = paths
    return (
        f"coalesce(json_type({doc}, {escaped}), json_type({doc}, {plain}))",
        f"(CASE WHEN json_type({doc}, {escaped}) IS NOT NULL THEN json_extract({doc}, {escaped})"
        f" ELSE json_extract({doc}, {plain}) END)",
    )


@compiles(JsonNumber, "sqlite")
def _sqlite_number(element: Any, compiler: Any, **kw: Any) -> str:
    kind, value = _sqlite_json(element, compiler, **kw)
    return f"(CASE WHEN {kind} IN ('integer', 'real') THEN {value} END)"


@compiles(JsonString, "sqlite")
def _sqlite_string(element: Any, compiler: Any, **kw: Any) -> str:
    kind, value = _sqlite_json(element, compiler, **kw)
    return f"(CASE WHEN {kind} = 'text' THEN {value} END)"


@compiles(JsonBool, "sqlite")
def _sqlite_bool(element: Any, compiler: Any, **kw: Any) -> str:
    kind, _value = _sqlite_json(element, compiler, **kw)
    return f"(CASE {kind} WHEN 'true' THEN 1 WHEN 'false' THEN 0 END)"


@compiles(JsonIsNull, "sqlite")
def _sqlite_is_null(element: Any, compiler: Any, **kw: Any) -> str:
    kind, _value = _sqlite_json(element, compiler, **kw)
    return f"(coalesce({kind}, 'null') = 'null')"


@compiles(HasString, "sqlite")
def _sqlite_has(element: Any, compiler: Any, **kw: Any) -> str:
    doc, tag = _args(element, compiler, **kw)
    return (
        f"(json_type({doc}) = 'array' AND EXISTS (SELECT 1 FROM json_each({doc}) AS assay_tag"
        f" WHERE assay_tag.type = 'text' AND assay_tag.value = {tag}))"
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
    clauses = list(element.clauses)
    del clauses[1:-1]  # the SQLite-only escaped spelling of a path, when present
    args = [compiler.process(clause, **kw) for clause in clauses]
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
    value = f"CAST({doc} AS JSONB)"
    return (
        f"(jsonb_typeof({value}) = 'array' AND {value} @> jsonb_build_array(CAST({tag} AS TEXT)))"
    )


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


__all__ = [
    "AsciiCaseLike",
    "CaseSensitiveLike",
    "CodePointOrder",
    "HasString",
    "JsonBool",
    "JsonIsNull",
    "JsonNumber",
    "JsonPath",
    "JsonString",
    "LikePattern",
]
