"""Condition text -> typed tree: limits, the Lark parse, then field and type checks.

The order is what keeps hostile input cheap: the length is checked first; the lexer (iterative)
then counts parenthesis depth and terms and stops at the first limit passed, so 10,000 nested
parentheses are refused after reading about `max_depth` of them; the LALR parser builds its tree
without recursion; the tree's nesting is measured with an explicit stack; only then does the
(recursive) typing pass run, on a tree known to be shallow.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer, Tree, UnexpectedCharacters, UnexpectedInput
from lark.exceptions import UnexpectedToken, VisitError

from assay.platform.server.conditions import patterns
from assay.platform.server.conditions.tree import (
    DEFAULT_LIMITS,
    MATCH_ALL,
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
    format_field,
)

GRAMMAR = Path(__file__).with_name("grammar.lark")
TERM_TOKENS = {"COMP_OP", "IN", "LIKE", "ILIKE", "BETWEEN", "IS", "CONTAINS"}
MAX_OFFSET = timedelta(days=36_500)
_INTEGER_LIKE = re.compile(r"\s*[+-]?\d+\s*\Z")

_WORDS = {
    "NAME": "a field name",
    "STRING": "a 'quoted string'",
    "NUMBER": "a number",
    "QUOTED_KEY": 'a "quoted key"',
    "DURATION": "a duration such as 7d",
    "COMP_OP": "a comparison (=, !=, <, <=, >, >=)",
    "LPAR": "'('",
    "RPAR": "')'",
    "COMMA": "','",
    "DOT": "'.'",
    "MINUS": "'-'",
    "PLUS": "'+'",
    "$END": "the end of the condition",
}
_VALUE_TOKENS = {"STRING", "NUMBER", "MINUS", "TRUE", "FALSE", "NULL", "NOW"}
_VALUE_WORDS = "a value ('text', a number, true, false, null or now())"


@lru_cache(maxsize=1)
def _lark() -> Lark:
    return Lark(
        GRAMMAR.read_text(encoding="utf-8"),
        parser="lalr",
        lexer="basic",
        propagate_positions=True,
        maybe_placeholders=False,
    )


def _locate(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _error(text: str, offset: int, message: str, expected: tuple[str, ...] = ()) -> ConditionError:
    line, column = _locate(text, offset)
    return ConditionError(message, offset=offset, line=line, column=column, expected=expected)


def _expected_words(names: set[str]) -> tuple[str, ...]:
    words: list[str] = []
    if {"STRING", "NUMBER", "TRUE"} <= names:
        words.append(_VALUE_WORDS)
        names = names - _VALUE_TOKENS
    order = list(_WORDS)
    words += [
        _WORDS.get(name, name.upper())
        for name in sorted(names, key=lambda n: (order.index(n) if n in order else len(order), n))
    ]
    return tuple(words)


def _in_words(words: tuple[str, ...]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _found(token: Token) -> str:
    if token.type == "$END":
        return "the end of the condition"
    if token.type == "STRING":
        return f"the text {token}"
    if token.type == "QUOTED_KEY":
        return f"{token} (text values take single quotes; double quotes are for metadata keys)"
    return f"'{token}'"


def parse_condition(text: str, *, limits: Limits = DEFAULT_LIMITS) -> Condition:
    """Parse and check `text`; an empty or blank text matches every trace (`And(())`).

    Raises ConditionError (a UsageError, hence a ValueError) for anything else it refuses."""
    if not isinstance(text, str):
        raise ConditionError(f"a condition is text, not {type(text).__name__}")
    if len(text) > limits.max_length:
        raise _error(
            text,
            limits.max_length,
            f"the condition is {len(text)} characters long; the limit is {limits.max_length}",
        )
    for offset, char in enumerate(text):
        if char == "\x00" or "\ud800" <= char <= "\udfff":
            raise _error(text, offset, f"the character {char!r} is not allowed in a condition")
    if not text.strip():
        return MATCH_ALL
    _check_tokens(text, limits)
    try:
        tree = _lark().parse(text)
    except UnexpectedToken as exc:
        offset = len(text) if exc.token.type == "$END" else exc.token.start_pos
        expected = _expected_words(set(exc.expected))
        raise _error(
            text,
            offset,
            f"expected {_in_words(expected)}, found {_found(exc.token)}",
            expected,
        ) from None
    except UnexpectedInput as exc:  # pragma: no cover - the lexer pass catches these first
        raise _error(text, getattr(exc, "pos_in_stream", 0) or 0, str(exc)) from None
    _check_depth(text, tree, limits)
    try:
        return _Typer(text, limits).transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, ConditionError):
            raise exc.orig_exc from None
        raise


def _check_tokens(text: str, limits: Limits) -> None:
    depth = terms = 0
    try:
        for token in _lark().lex(text):
            if token.type == "LPAR":
                depth += 1
                if depth > limits.max_depth:
                    raise _error(
                        text,
                        token.start_pos,
                        f"parentheses nest deeper than the limit of {limits.max_depth}",
                    )
            elif token.type == "RPAR":
                depth -= 1
            elif token.type in TERM_TOKENS:
                terms += 1
                if terms > limits.max_terms:
                    raise _error(
                        text,
                        token.start_pos,
                        f"more than {limits.max_terms} comparisons; that is the limit",
                    )
    except UnexpectedCharacters as exc:
        start = exc.pos_in_stream
        hint = ""
        if text.startswith(("--", "/*"), start) or text[start] == ";":
            hint = " (comments and statement separators are not part of the language)"
        elif text[start] == '"':
            hint = " (text values take single quotes; double quotes are for metadata keys)"
        raise _error(
            text,
            start,
            f"unexpected character {text[start]!r}{hint}",
            ("a field name", _VALUE_WORDS, "an operator", "'(' or ')'"),
        ) from None


def _check_depth(text: str, tree: Tree, limits: Limits) -> None:
    stack: list[tuple[Any, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, Tree):
            continue
        if node.data in ("or_expr", "and_expr", "negation"):
            if depth > limits.max_depth:
                raise _error(
                    text,
                    node.meta.start_pos,
                    f"the condition nests deeper than the limit of {limits.max_depth}"
                    " (parentheses and NOT count)",
                )
            stack.extend((child, depth + 1) for child in node.children)


class _Ref:
    """A checked field with where it was written."""

    def __init__(self, field: Field, offset: int) -> None:
        self.field, self.offset = field, offset


class _Literal:
    def __init__(self, kind: str, value: Any, offset: int) -> None:
        self.kind, self.value, self.offset = (
            kind,
            value,
            offset,
        )  # kind: string number bool null now


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


class _Typer(Transformer):
    """Lark tree -> typed nodes, checking each field and literal where it was written."""

    def __init__(self, text: str, limits: Limits) -> None:
        super().__init__()
        self.text, self.limits = text, limits

    def _fail(self, offset: int, message: str) -> ConditionError:
        return _error(self.text, offset, message)

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
                raise self._fail(head.start_pos, f"{name} needs a key: {name}.<name>")
            if name in ("score", "label") and len(path) != 1:
                raise self._fail(
                    head.start_pos,
                    f"{name}.<criterion> takes exactly one criterion name"
                    f' (quote it if it has dots: {name}."a.b")',
                )
            for key, token in zip(path, keys, strict=True):
                if len(key) > 200:
                    raise self._fail(token.start_pos, "a key is longer than 200 characters")
                if name == "metadata" and _INTEGER_LIKE.match(key):
                    raise self._fail(
                        token.start_pos,
                        f"metadata key {key!r} looks like a list position; list positions are not"
                        " supported (PostgreSQL would read it as one)",
                    )
        elif name in PLAIN_FIELDS:
            if path:
                raise self._fail(keys[0].start_pos, f"{name} has no keys below it")
        else:
            known = ", ".join(
                [*PLAIN_FIELDS, "metadata.<key>", "score.<criterion>", "label.<criterion>"]
            )
            raise self._fail(head.start_pos, f"unknown field {name!r}; the fields are: {known}")
        return _Ref(Field(name, path), head.start_pos)

    def string(self, children: list[Token]) -> _Literal:
        return _Literal("string", _unquote(children[0]), children[0].start_pos)

    def number(self, children: list[Token]) -> _Literal:
        sign = -1.0 if children[0].type == "MINUS" else 1.0
        value = sign * float(children[-1])
        if not math.isfinite(value):
            raise self._fail(children[-1].start_pos, f"the number {children[-1]} is too large")
        return _Literal("number", value, children[0].start_pos)

    def true(self, children: list[Token]) -> _Literal:
        return _Literal("bool", True, children[0].start_pos)

    def false(self, children: list[Token]) -> _Literal:
        return _Literal("bool", False, children[0].start_pos)

    def null(self, children: list[Token]) -> _Literal:
        return _Literal("null", None, children[0].start_pos)

    def now(self, children: list[Token]) -> _Literal:
        offset = timedelta(0)
        if len(children) == 3:
            offset = duration(children[2])
            if offset > MAX_OFFSET:
                raise self._fail(children[2].start_pos, "a duration may be at most 36500d")
            if children[1].type == "MINUS":
                offset = -offset
        return _Literal("now", Now(offset), children[0].start_pos)

    # -- predicates
    def compare(self, children: list) -> Condition:
        ref, op, literal = children
        operator = "!=" if str(op) == "<>" else str(op)
        self._allow(ref, "compare" if operator in ("=", "!=") else "order", op.start_pos)
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
            raise self._fail(literal.start_pos, str(exc)) from None
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


__all__ = ["parse_condition"]
