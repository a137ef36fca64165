"""LIKE patterns, read once and written out for each backend and for the oracle.

The language's pattern: `%` any run of characters (none included), `_` exactly one character, a
backslash makes the next character literal (`\\%` is a percent sign). The same parsed pattern is
written as a Python regex (the oracle), an SQLite GLOB pattern (SQLite's LIKE ignores ASCII case,
GLOB does not, so case-sensitive LIKE goes through GLOB) and a LIKE pattern with `\\` as escape
(PostgreSQL LIKE, and SQLite's LIKE for ILIKE).
"""

from __future__ import annotations

import enum
import re
from typing import Final


class Wildcard(enum.Enum):
    """The two wildcards of a pattern (`%` and `_`); everything else is a literal str."""

    ANY = "any"
    ONE = "one"


ANY: Final = Wildcard.ANY
ONE: Final = Wildcard.ONE
Piece = Wildcard | str  # ANY, ONE or a literal str

_ASCII_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ASCII_LOWER = "abcdefghijklmnopqrstuvwxyz"
_FOLD = str.maketrans(_ASCII_UPPER, _ASCII_LOWER)


def pieces(pattern: str) -> list[Piece]:
    """Split a pattern; raises ValueError for a trailing lone backslash."""
    out: list[Piece] = []
    chars = iter(pattern)
    for char in chars:
        if char == "\\":
            escaped = next(chars, None)
            if escaped is None:
                raise ValueError("a LIKE pattern may not end with a lone backslash")
            out.append(escaped)
        elif char == "%":
            out.append(ANY)
        elif char == "_":
            out.append(ONE)
        else:
            out.append(char)
    return out


def fold_ascii(text: str) -> str:
    """Lower-case A-Z only: the one case rule ILIKE follows on every backend."""
    return text.translate(_FOLD)


def to_regex(pattern: str, *, case_insensitive: bool) -> re.Pattern[str]:
    body = "".join(
        ".*"
        if p is ANY
        else "."
        if p is ONE
        else re.escape(fold_ascii(p) if case_insensitive else p)
        for p in pieces(pattern)
    )
    return re.compile(body, re.DOTALL)


def to_glob(pattern: str) -> str:
    """SQLite GLOB: `*`, `?` and `[` are special and are quoted as one-character classes."""
    special = {"*": "[*]", "?": "[?]", "[": "[[]"}
    return "".join(
        "*" if p is ANY else "?" if p is ONE else special.get(p, p) for p in pieces(pattern)
    )


def to_like(pattern: str, *, case_insensitive: bool) -> str:
    """A LIKE pattern for `ESCAPE '\\'`, every literal `%`, `_` and `\\` escaped."""
    out: list[str] = []
    for p in pieces(pattern):
        if p is ANY:
            out.append("%")
        elif p is ONE:
            out.append("_")
        else:
            literal = fold_ascii(p) if case_insensitive else p
            out.append("\\" + literal if literal in "%_\\" else literal)
    return "".join(out)


__all__ = ["ANY", "ONE", "fold_ascii", "pieces", "to_glob", "to_like", "to_regex"]
