"""Condition text -> typed tree: limits, the Lark parse, then field and type checks.

The order is what keeps hostile input cheap: the length is checked first; the lexer (iterative)
then counts parenthesis depth and terms and stops at the first limit passed, so 10,000 nested
parentheses are refused after reading about `max_depth` of them; the LALR parser builds its tree
without recursion; the tree's nesting is measured with an explicit stack; only then does the
(recursive) typing pass run, on a tree known to be shallow.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from lark import Lark, Token, Tree, UnexpectedCharacters, UnexpectedInput
from lark.exceptions import UnexpectedToken, VisitError

from assay.platform.server.conditions.checks import Typer
from assay.platform.server.conditions.tree import (
    DEFAULT_LIMITS,
    MATCH_ALL,
    Condition,
    ConditionError,
    Limits,
    error_at,
)

GRAMMAR = Path(__file__).with_name("grammar.lark")
TERM_TOKENS = {"COMP_OP", "IN", "LIKE", "ILIKE", "BETWEEN", "IS", "CONTAINS"}

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
        raise error_at(
            text,
            limits.max_length,
            f"the condition is {len(text)} characters long; the limit is {limits.max_length}",
        )
    for offset, char in enumerate(text):
        if char == "\x00" or "\ud800" <= char <= "\udfff":
            raise error_at(text, offset, f"the character {char!r} is not allowed in a condition")
    if not text.strip():
        return MATCH_ALL
    _check_tokens(text, limits)
    try:
        tree = _lark().parse(text)
    except UnexpectedToken as exc:
        offset = len(text) if exc.token.type == "$END" else exc.token.start_pos
        expected = _expected_words(set(exc.expected))
        raise error_at(
            text,
            offset,
            f"expected {_in_words(expected)}, found {_found(exc.token)}",
            expected,
        ) from None
    except UnexpectedInput as exc:  # pragma: no cover - the lexer pass catches these first
        raise error_at(text, getattr(exc, "pos_in_stream", 0) or 0, str(exc)) from None
    _check_depth(text, tree, limits)
    try:
        return Typer(text, limits).transform(tree)
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
                    raise error_at(
                        text,
                        token.start_pos or 0,  # every lexed token has its position
                        f"parentheses nest deeper than the limit of {limits.max_depth}",
                    )
            elif token.type == "RPAR":
                depth -= 1
            elif token.type in TERM_TOKENS:
                terms += 1
                if terms > limits.max_terms:
                    raise error_at(
                        text,
                        token.start_pos or 0,
                        f"more than {limits.max_terms} comparisons; that is the limit",
                    )
    except UnexpectedCharacters as exc:
        start = exc.pos_in_stream or 0  # always set by the lexer that raises it
        hint = ""
        if text.startswith(("--", "/*"), start) or text[start] == ";":
            hint = " (comments and statement separators are not part of the language)"
        elif text[start] == '"':
            hint = " (text values take single quotes; double quotes are for metadata keys)"
        raise error_at(
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
                raise error_at(
                    text,
                    node.meta.start_pos,
                    f"the condition nests deeper than the limit of {limits.max_depth}"
                    " (parentheses and NOT count)",
                )
            stack.extend((child, depth + 1) for child in node.children)


__all__ = ["parse_condition"]
