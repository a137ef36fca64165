"""The typing pass: a Lark parse tree -> typed nodes, with the field whitelist and the
operator/literal type rules checked where each was written (so an error points at it)."""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone
from typing import Any

from lark import Token, Transformer

from assay.platform.server.conditions import patterns
from assay.platform.server.conditions.tree import (
    PATH_FIELDS,
    PLAIN_FIELDS,
    And,
    Between,
    Compare,
    Condition,
    ConditionError,
    Field,
    FieldKind,
    HasTag,
    InList,
    IsNull,
    Like,
    Limits,
    Not,
    Now,
    Or,
    duration,
    error_at,
    format_field,
)

MAX_OFFSET = timedelta(days=36_500)


def _at(token: Token) -> int:
    """Where a token starts. Lark types `start_pos` as optional (a Token made by hand has none);
    every token the parser hands over has one."""
    return token.start_pos or 0


_INTEGER_LIKE = re.compile(r"\s*[+-]?\d+\s*\Z")


class _Ref:
    """A checked field with where it was written."""

    def __init__(self, field: Field, offset: int) -> None:
        self.field, self.offset = field, offset


class _Literal:
    """A literal before typing; `kind` is one of string, number, bool, null, now."""

    def __init__(self, kind: str, value: Any, offset: int) -> None:
        self.kind, self.value, self.offset = kind, value, offset


_ALLOWED_OPS = {
    FieldKind.TEXT: {"compare", "order", "in", "between", "like", "null"},
    FieldKind.NUMBER: {"compare", "order", "in", "between", "null"},
    FieldKind.DATETIME: {"compare", "order", "in", "between", "null"},
    FieldKind.BOOLEAN: {"compare", "in", "null"},
    FieldKind.JSON: {"compare", "order", "in", "between", "like", "null"},
    FieldKind.TAGS: {"tag"},
}
_WHAT = {
    FieldKind.TEXT: "text",
    FieldKind.NUMBER: "a number",
    FieldKind.DATETIME: "a date and time",
    FieldKind.BOOLEAN: "true or false",
    FieldKind.JSON: "a JSON value",
    FieldKind.TAGS: "a list of tags",
}
_OPERATION_WORDS = {
    "compare": "=",
    "order": "<, <=, > or >=",
    "in": "IN (...)",
    "between": "BETWEEN",
    "like": "LIKE or ILIKE",
    "null": "IS NULL",
    "tag": "'x' IN tags",
}


class Typer(Transformer):
    """Lark tree -> typed nodes, checking each field and literal where it was written."""

    def __init__(self, text: str, limits: Limits) -> None:
        super().__init__()
        self.text, self.limits = text, limits

    def _fail(self, offset: int, message: str) -> ConditionError:
        return error_at(self.text, offset, message)

    # -- structure
    def or_expr(self, children: list) -> Or:
        return Or(tuple(c for c in children if not isinstance(c, Token)))

    def and_expr(self, children: list) -> And:
        return And(tuple(c for c in children if not isinstance(c, Token)))

    def negation(self, children: list) -> Not:
        return Not(children[-1])

    # -- fields and values
    def field(self, children: list[Token]) -> _Ref:
        head, keys = children[0], children[1:]
        name = str(head)
        path = tuple(str(k)[1:-1] if k.type == "QUOTED_KEY" else str(k) for k in keys)
        if name in PATH_FIELDS:
            if not path:
                raise self._fail(_at(head), f"{name} needs a key: {name}.<name>")
            if name in ("score", "score_label", "label") and len(path) != 1:
                raise self._fail(
                    _at(head),
                    f"{name}.<criterion> takes exactly one criterion name"
                    f' (quote it if it has dots: {name}."a.b")',
                )
            for key, token in zip(path, keys, strict=True):
                if len(key) > 200:
                    raise self._fail(_at(token), "a key is longer than 200 characters")
                if name == "metadata" and _INTEGER_LIKE.match(key):
                    raise self._fail(
                        _at(token),
                        f"metadata key {key!r} looks like a list position; list positions are not"
                        " supported (PostgreSQL would read it as one)",
                    )
        elif name in PLAIN_FIELDS:
            if path:
                raise self._fail(_at(keys[0]), f"{name} has no keys below it")
        else:
            known = ", ".join(
                [
                    *PLAIN_FIELDS,
                    "metadata.<key>",
                    "score.<criterion>",
                    "score_label.<criterion>",
                    "label.<criterion>",
                ]
            )
            raise self._fail(_at(head), f"unknown field {name!r}; the fields are: {known}")
        return _Ref(Field(name, path), _at(head))

    def string(self, children: list[Token]) -> _Literal:
        return _Literal("string", _unquote(children[0]), _at(children[0]))

    def number(self, children: list[Token]) -> _Literal:
        sign = -1.0 if children[0].type == "MINUS" else 1.0
        value = sign * float(children[-1])
        if not math.isfinite(value):
            raise self._fail(_at(children[-1]), f"the number {children[-1]} is too large")
        return _Literal("number", value, _at(children[0]))

    def true(self, children: list[Token]) -> _Literal:
        return _Literal("bool", True, _at(children[0]))

    def false(self, children: list[Token]) -> _Literal:
        return _Literal("bool", False, _at(children[0]))

    def null(self, children: list[Token]) -> _Literal:
        return _Literal("null", None, _at(children[0]))

    def now(self, children: list[Token]) -> _Literal:
        offset = timedelta(0)
        if len(children) == 3:
            offset = duration(children[2])
            if offset > MAX_OFFSET:
                raise self._fail(_at(children[2]), "a duration may be at most 36500d")
            if children[1].type == "MINUS":
                offset = -offset
        return _Literal("now", Now(offset), _at(children[0]))

    # -- predicates
    def compare(self, children: list) -> Condition:
        ref, op, literal = children
        operator = "!=" if str(op) == "<>" else str(op)
        self._allow(ref, "compare" if operator in ("=", "!=") else "order", _at(op))
        value = self._value(ref, literal, ordered=operator not in ("=", "!="))
        return Compare(ref.field, operator, value)

    def in_list(self, children: list) -> Condition:
        ref, negated, rest = children[0], _has_not(children), children[1:]
        values = [c for c in rest if isinstance(c, _Literal)]
        self._allow(ref, "in", ref.offset)
        if len(values) > self.limits.max_list_items:
            raise self._fail(
                values[self.limits.max_list_items].offset,
                f"an IN list may hold at most {self.limits.max_list_items} values",
            )
        node = InList(ref.field, tuple(self._value(ref, v, ordered=False) for v in values))
        return Not(node) if negated else node

    def tag_in(self, children: list) -> Condition:
        literal, ref = children[0], children[-1]
        self._allow(ref, "tag", ref.offset)
        node = HasTag(ref.field, _unquote(literal))
        return Not(node) if _has_not(children) else node

    def contains(self, children: list) -> Condition:
        ref, literal = children[0], children[-1]
        self._allow(ref, "tag", ref.offset)
        node = HasTag(ref.field, _unquote(literal))
        return Not(node) if _has_not(children) else node

    def like(self, children: list, case_insensitive: bool = False) -> Condition:
        ref, literal = children[0], children[-1]
        self._allow(ref, "like", ref.offset)
        pattern = _unquote(literal)
        try:
            patterns.pieces(pattern)
        except ValueError as exc:
            raise self._fail(_at(literal), str(exc)) from None
        node = Like(ref.field, pattern, case_insensitive)
        return Not(node) if _has_not(children) else node

    def ilike(self, children: list) -> Condition:
        return self.like(children, case_insensitive=True)

    def between(self, children: list) -> Condition:
        ref = children[0]
        low, high = [c for c in children if isinstance(c, _Literal)]
        self._allow(ref, "between", ref.offset)
        if ref.field.kind is FieldKind.JSON and low.kind != high.kind:
            raise self._fail(high.offset, "both ends of BETWEEN must be numbers or both text")
        node = Between(
            ref.field,
            self._value(ref, low, ordered=True),
            self._value(ref, high, ordered=True),
        )
        return Not(node) if _has_not(children) else node

    def is_null(self, children: list) -> Condition:
        ref = children[0]
        self._allow(ref, "null", ref.offset)
        node = IsNull(ref.field)
        return Not(node) if _has_not(children) else node

    # -- checks
    def _allow(self, ref: _Ref, operation: str, offset: int) -> None:
        kind = ref.field.kind
        if operation not in _ALLOWED_OPS[kind]:
            shown = _format_ref(ref.field)
            if kind is FieldKind.TAGS:
                raise self._fail(offset, f"tags can only be tested with 'x' IN {shown}")
            if operation == "tag":
                raise self._fail(
                    offset, f"{shown} holds {_WHAT[kind]}; only tags take 'x' IN ... / CONTAINS"
                )
            raise self._fail(
                offset, f"{shown} holds {_WHAT[kind]}; {_OPERATION_WORDS[operation]} does not apply"
            )

    def _value(self, ref: _Ref, literal: _Literal, *, ordered: bool) -> Any:
        kind, shown = ref.field.kind, _format_ref(ref.field)
        if literal.kind == "null":
            raise self._fail(literal.offset, f"compare with null as {shown} IS NULL")
        if kind is FieldKind.TEXT and literal.kind == "string":
            return literal.value
        if kind is FieldKind.NUMBER and literal.kind == "number":
            return literal.value
        if kind is FieldKind.BOOLEAN and literal.kind == "bool":
            return literal.value
        if kind is FieldKind.DATETIME:
            if literal.kind == "now":
                return literal.value
            if literal.kind == "string":
                return self._datetime(literal)
        if kind is FieldKind.JSON and literal.kind in ("string", "number", "bool"):
            if ordered and literal.kind == "bool":
                raise self._fail(literal.offset, "true and false have no order")
            return literal.value
        wanted = {
            FieldKind.TEXT: "a 'quoted string'",
            FieldKind.NUMBER: "a number",
            FieldKind.BOOLEAN: "true or false",
            FieldKind.DATETIME: "a date such as '2026-01-31' or now() - 7d",
            FieldKind.JSON: "a 'quoted string', a number, true or false",
        }[kind]
        raise self._fail(literal.offset, f"{shown} holds {_WHAT[kind]}: compare it with {wanted}")

    def _datetime(self, literal: _Literal) -> datetime:
        try:
            moment = datetime.fromisoformat(literal.value)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=timezone.utc)
            return moment.astimezone(timezone.utc)
        except (ValueError, OverflowError):
            raise self._fail(
                literal.offset,
                f"{literal.value!r} is not an ISO date; write '2026-01-31' or"
                " '2026-01-31T12:00:00Z' (no zone means UTC)",
            ) from None


def _has_not(children: list) -> bool:
    return any(isinstance(c, Token) and c.type == "NOT" for c in children)


def _unquote(token: Token) -> str:
    return str(token)[1:-1].replace("''", "'")


def _format_ref(ref: Field) -> str:
    return format_field(ref)


__all__ = ["Typer"]
