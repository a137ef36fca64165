"""The typed tree of a condition, the field whitelist, the limits and the error.

Every node is a frozen dataclass, so two parses of the same text compare equal and a tree can be
used as a dictionary key. A tree is only ever built by the parser after the field and type checks,
or by hand in tests; `format_condition` writes it back as condition text.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from assay.errors import UsageError


class ConditionError(UsageError):
    """A condition the language refuses: a syntax error, an unknown field, a value of the wrong
    type or a limit passed. `offset` (0-based), `line` and `column` (1-based) locate it; `expected`
    says in words what would have been accepted there (empty when nothing positional applies)."""

    def __init__(
        self,
        message: str,
        *,
        offset: int = 0,
        line: int = 1,
        column: int = 1,
        expected: tuple[str, ...] = (),
    ) -> None:
        self.detail, self.offset, self.line, self.column = message, offset, line, column
        self.expected = expected
        super().__init__(f"condition, line {line}, column {column}: {message}")


def locate(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def error_at(
    text: str, offset: int, message: str, expected: tuple[str, ...] = ()
) -> ConditionError:
    """A ConditionError at `offset` of `text`, with its line and column."""
    line, column = locate(text, offset)
    return ConditionError(message, offset=offset, line=line, column=column, expected=expected)


@dataclass(frozen=True)
class Limits:
    """How big a condition may be. The length is checked before anything else, the parenthesis
    depth and the number of terms while the text is lexed (before any tree is built), the nesting
    of the finished tree (NOT chains included) before it is typed."""

    max_length: int = 4000
    max_depth: int = 24
    max_terms: int = 64
    max_list_items: int = 100


DEFAULT_LIMITS = Limits()


class FieldKind(enum.Enum):
    """What a field holds, which decides the operators and literals it accepts."""

    TEXT = "text"
    NUMBER = "number"
    DATETIME = "datetime"
    BOOLEAN = "boolean"
    JSON = "json"  # any JSON value: compared only with a literal of its own JSON type
    TAGS = "tags"  # a JSON list of strings: only `'x' IN tags` / `tags CONTAINS 'x'`


# The whitelist. `metadata`, `score` and `label` take a dotted path; the rest take none.
PLAIN_FIELDS: dict[str, FieldKind] = {
    "id": FieldKind.TEXT,
    "input": FieldKind.TEXT,
    "output": FieldKind.TEXT,
    "model": FieldKind.TEXT,
    "error": FieldKind.TEXT,
    "session_id": FieldKind.TEXT,  # the trace's session (its own indexed column)
    "created_at": FieldKind.DATETIME,
    "latency_ms": FieldKind.NUMBER,
    "tokens": FieldKind.NUMBER,
    "input_tokens": FieldKind.NUMBER,
    "output_tokens": FieldKind.NUMBER,
    "edited": FieldKind.BOOLEAN,
    "tags": FieldKind.TAGS,
}
PATH_FIELDS: dict[str, FieldKind] = {
    "metadata": FieldKind.JSON,  # metadata.<key>[.<key>...]
    "score": FieldKind.NUMBER,  # score.<criterion>: the latest score's value
    "score_label": FieldKind.TEXT,  # score_label.<criterion>: the latest score's label
    "label": FieldKind.JSON,  # label.<criterion>: the latest label's value
}


@dataclass(frozen=True)
class Field:
    """A field reference: `name` from the whitelist and, for metadata/score/label, the `path`
    below it (`metadata.user.tier` is Field("metadata", ("user", "tier")); a score or label path
    is exactly one criterion name)."""

    name: str
    path: tuple[str, ...] = ()

    @property
    def kind(self) -> FieldKind:
        return PATH_FIELDS[self.name] if self.path else PLAIN_FIELDS[self.name]


@dataclass(frozen=True)
class Now:
    """`now()` plus `offset` (negative for `now() - 7d`), resolved when compiled or matched."""

    offset: timedelta = timedelta(0)


# A literal after type checking: str, float, bool, an aware UTC datetime, or Now.
Value = str | float | bool | datetime | Now


@dataclass(frozen=True)
class Compare:
    field: Field
    op: str  # one of = != < <= > >=  (`<>` is read as `!=`)
    value: Value


@dataclass(frozen=True)
class InList:
    field: Field
    values: tuple[Value, ...]


@dataclass(frozen=True)
class Between:
    """`low <= field <= high`, both ends included."""

    field: Field
    low: Value
    high: Value


@dataclass(frozen=True)
class Like:
    """LIKE (case-sensitive) or ILIKE (`case_insensitive`: ASCII letters fold, nothing else).
    In `pattern`, `%` is any run of characters, `_` exactly one, and a backslash makes the
    next character literal."""

    field: Field
    pattern: str
    case_insensitive: bool = False


@dataclass(frozen=True)
class IsNull:
    """True when the value is missing, SQL NULL or JSON null."""

    field: Field


@dataclass(frozen=True)
class HasTag:
    """`'x' IN tags` or `tags CONTAINS 'x'`."""

    field: Field
    tag: str


@dataclass(frozen=True)
class Not:
    item: Condition


@dataclass(frozen=True)
class And:
    """All of `items`; with no items (the empty condition) it matches every trace."""

    items: tuple[Condition, ...] = field(default=())


@dataclass(frozen=True)
class Or:
    items: tuple[Condition, ...]


Condition = Compare | InList | Between | Like | IsNull | HasTag | Not | And | Or
MATCH_ALL = And(())

_UNITS = {
    "s": timedelta(seconds=1),
    "m": timedelta(minutes=1),
    "h": timedelta(hours=1),
    "d": timedelta(days=1),
    "w": timedelta(weeks=1),
}
_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_KEYWORDS = {
    "and",
    "or",
    "not",
    "in",
    "is",
    "null",
    "like",
    "ilike",
    "between",
    "contains",
    "true",
    "false",
    "now",
}


def resolve_value(value: Value, now: datetime) -> str | float | bool | datetime:
    return now + value.offset if isinstance(value, Now) else value


def format_condition(tree: Condition) -> str:
    """The condition text of `tree`; parsing it gives back an equal tree."""
    if isinstance(tree, And):
        if not tree.items:
            return ""
        return " AND ".join(_grouped(item) for item in tree.items)
    if isinstance(tree, Or):
        return " OR ".join(_grouped(item) for item in tree.items)
    if isinstance(tree, Not):
        return "NOT " + _grouped(tree.item)
    name = format_field(tree.field)
    if isinstance(tree, Compare):
        return f"{name} {tree.op} {format_value(tree.value)}"
    if isinstance(tree, InList):
        return f"{name} IN ({', '.join(format_value(v) for v in tree.values)})"
    if isinstance(tree, Between):
        return f"{name} BETWEEN {format_value(tree.low)} AND {format_value(tree.high)}"
    if isinstance(tree, Like):
        return f"{name} {'ILIKE' if tree.case_insensitive else 'LIKE'} {format_value(tree.pattern)}"
    if isinstance(tree, IsNull):
        return f"{name} IS NULL"
    if isinstance(tree, HasTag):
        return f"{format_value(tree.tag)} IN {name}"
    raise TypeError(f"not a condition node: {tree!r}")


def _grouped(item: Condition) -> str:
    text = format_condition(item)
    return f"({text})" if isinstance(item, (And, Or)) else text


def format_field(ref: Field) -> str:
    keys = [k if _BARE_KEY.match(k) and k.lower() not in _KEYWORDS else f'"{k}"' for k in ref.path]
    return ".".join([ref.name, *keys])


def format_value(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a finite number: {value}")
        text = (
            str(int(abs(value))) if value.is_integer() and abs(value) < 1e15 else repr(abs(value))
        )
        return ("-" if math.copysign(1.0, value) < 0 and value != 0 else "") + text
    if isinstance(value, datetime):
        return "'" + value.astimezone(timezone.utc).isoformat() + "'"
    if isinstance(value, Now):
        seconds = int(value.offset.total_seconds())
        if seconds == 0:
            return "now()"
        sign, seconds = ("-" if seconds < 0 else "+"), abs(seconds)
        unit = next(u for u in "wdhms" if seconds % _UNITS[u].total_seconds() == 0)
        return f"now() {sign} {seconds // int(_UNITS[unit].total_seconds())}{unit}"
    raise TypeError(f"not a condition value: {value!r}")


def duration(text: str) -> timedelta:
    """`7d` -> 7 days (units s, m, h, d, w)."""
    return int(text[:-1]) * _UNITS[text[-1]]


__all__ = [
    "DEFAULT_LIMITS",
    "MATCH_ALL",
    "PATH_FIELDS",
    "PLAIN_FIELDS",
    "And",
    "Between",
    "Compare",
    "Condition",
    "ConditionError",
    "Field",
    "FieldKind",
    "HasTag",
    "InList",
    "IsNull",
    "Like",
    "Limits",
    "Not",
    "Now",
    "Or",
    "Value",
    "duration",
    "error_at",
    "format_condition",
    "format_field",
    "format_value",
    "locate",
    "resolve_value",
]
