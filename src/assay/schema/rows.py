"""Turn raw rows (dicts from lists, JSONL, CSV, pandas, HF datasets) into validated samples.

Everything that can go wrong with a row is reported as a `DataError` naming the file, the
row and the field, in words a user can act on ("row 17: retrieved_contexts must be a list of
strings, got int"), rather than as a pydantic traceback.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from assay.errors import DataError, UsageError
from assay.schema.samples import (
    MULTI_TURN_FIELDS,
    SINGLE_TURN_FIELDS,
    MultiTurnSample,
    SingleTurnSample,
)

# Column names of Ragas' first dataset format, still common in the wild.
LEGACY_COLUMNS: dict[str, str] = {
    "question": "user_input",
    "answer": "response",
    "contexts": "retrieved_contexts",
    "ground_truth": "reference",
    "rubric": "rubrics",
}

KNOWN_FIELDS = frozenset(SINGLE_TURN_FIELDS) | frozenset(MULTI_TURN_FIELDS) | {"metadata"}

# How deep lists and objects may nest in a row (the row itself is level 1). Real rows nest a few
# levels; far deeper input would exhaust the JSON reader's or the serialiser's recursion limits.
MAX_NESTING = 100

_EXPECTED: dict[str, str] = {
    "user_input": "a string (or, for a conversation, a list of messages)",
    "retrieved_contexts": "a list of strings",
    "reference_contexts": "a list of strings",
    "retrieved_context_ids": "a list of strings or integers",
    "reference_context_ids": "a list of strings or integers",
    "response": "a string",
    "multi_responses": "a list of strings",
    "reference": "a string",
    "rubrics": "an object mapping rubric names to descriptions",
    "persona_name": "a string",
    "query_style": "a string",
    "query_length": "a string",
    "reference_tool_calls": "a list of tool calls ({name, args})",
    "reference_topics": "a list of strings",
    "metadata": "an object",
}

# Fields whose values are lists or objects: in CSV files they arrive as text to decode.
_STRUCTURED_FIELDS = frozenset(
    {
        "retrieved_contexts",
        "reference_contexts",
        "retrieved_context_ids",
        "reference_context_ids",
        "multi_responses",
        "rubrics",
        "reference_tool_calls",
        "reference_topics",
        "metadata",
    }
)


@dataclass(frozen=True)
class RowLocation:
    """Where a row came from, for error messages."""

    file: str | None
    row: int
    is_index: bool = False

    def error(self, message: str, field: str | None = None) -> DataError:
        return DataError(
            message, file=self.file, row=self.row, field=field, row_is_index=self.is_index
        )


def normalise_column_map(column_map: Mapping[str, str] | None) -> dict[str, str]:
    """Return {source column -> assay field}.

    Ragas' direction: `{"user_input": "query"}` reads the column `query` as `user_input`; the key
    may also be one of Ragas' first column names (`{"contexts": "contexts_v1"}` reads `contexts_v1`
    as the contexts). When the key names no field, the rename-style `{"query": "user_input"}`
    (column -> field) is understood too.
    """
    if column_map is not None and not isinstance(column_map, Mapping):
        raise UsageError(
            "column_map must be a mapping of sample field to column name, e.g. "
            f'{{"user_input": "question"}}, got a {_type_name(column_map)}'
        )
    if not column_map:
        return {}
    renames: dict[str, str] = {}
    for key, value in column_map.items():
        target = key if key in KNOWN_FIELDS else LEGACY_COLUMNS.get(key)
        if target is not None:
            renames[value] = target
        elif value in KNOWN_FIELDS:
            renames[key] = value
        else:
            raise DataError(
                f"column_map entry {key!r}: {value!r} names no sample field; one side must be one of "
                f"{', '.join(sorted(KNOWN_FIELDS))}",
                field="column_map",
            )
    return renames


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "str"
    return type(value).__name__


# Fields whose list items (or object values) must be strings.
_STRING_ITEMS = frozenset(
    {"retrieved_contexts", "reference_contexts", "multi_responses", "reference_topics", "rubrics"}
)


def _describe(field: str, value: Any) -> str:
    """How a wrong value looks, e.g. 'int' or 'a list containing int (item 2)'."""
    if isinstance(value, list):
        for position, item in enumerate(value):
            wrong = (
                not isinstance(item, str)
                if field in _STRING_ITEMS
                else not isinstance(item, (str, int, dict))
            )
            if wrong:
                return f"a list containing {_type_name(item)} (item {position})"
        return "a list"
    if isinstance(value, dict) and field in _STRING_ITEMS:
        for key, item in value.items():
            if not isinstance(item, str):
                return f"an object whose value for {key!r} is {_type_name(item)}"
    return _type_name(value)


def _looks_like_messages(text: str) -> bool:
    """A CSV user_input cell holds a conversation only if it decodes to a list of objects."""
    if not text.lstrip().startswith("["):
        return False
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        try:
            value = ast.literal_eval(text)
        except Exception:
            return False
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value)


def too_deep() -> str:
    return f"nested more than {MAX_NESTING} levels deep (the limit for a row)"


def nesting_depth(value: Any, limit: int = MAX_NESTING) -> int:
    """How many levels of lists/objects `value` has (a scalar 0, `[]` 1), counted without recursion
    and only up to `limit + 1`: anything deeper is reported as `limit + 1`."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        depth += 1
        if depth > limit:
            return limit + 1
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in children)
    return deepest


def _decode_text(field: str, text: str, where: RowLocation) -> Any:
    """Decode a list/object stored as text in a CSV cell: JSON first, then a Python literal
    (the format Ragas' own CSV export writes)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    except RecursionError:
        raise where.error(f"{field} is {too_deep()}", field) from None
    try:
        return ast.literal_eval(text)
    except Exception:  # literal_eval raises ValueError, SyntaxError, TypeError, MemoryError...
        raise where.error(
            f"{field} must be {_EXPECTED.get(field, 'a list or object')}, written as JSON in this "
            f"column, but could not be decoded: {text[:80]!r}",
            field,
        ) from None


def prepare_row(
    raw: Mapping[str, Any],
    where: RowLocation,
    renames: Mapping[str, str],
    *,
    text_cells: bool = False,
) -> dict[str, Any]:
    """Rename columns, decode text cells and gather unknown columns into `metadata`."""
    if not isinstance(raw, Mapping):
        raise where.error(f"a row must be an object with named fields, got {_type_name(raw)}")
    row: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for column, value in raw.items():
        column = str(column)
        field = renames.get(column) or (
            column if column in KNOWN_FIELDS else LEGACY_COLUMNS.get(column)
        )
        if field is None:
            _check_nesting(column, value, where)
            extra[column] = value
            continue
        if field in row:
            raise where.error(
                f"columns map twice onto {field!r} (check legacy names and column_map)", field
            )
        if text_cells and isinstance(value, str):
            if value == "":
                value = None
            elif field in _STRUCTURED_FIELDS or (
                field == "user_input" and _looks_like_messages(value)
            ):
                value = _decode_text(field, value, where)
        _check_nesting(field, value, where)
        row[field] = value
    if extra:
        metadata = row.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise where.error(f"metadata must be an object, got {_type_name(metadata)}", "metadata")
        row["metadata"] = {**extra, **metadata}
    return {key: value for key, value in row.items() if value is not None}


def _check_nesting(column: str, value: Any, where: RowLocation) -> None:
    # The row is level 1, so a column's value may nest MAX_NESTING - 1 levels.
    if (
        isinstance(value, (Mapping, list, tuple))
        and nesting_depth(value, MAX_NESTING - 1) >= MAX_NESTING
    ):
        raise where.error(f"{column} is {too_deep()}", column)


def is_multi_turn_row(row: Mapping[str, Any]) -> bool:
    return isinstance(row.get("user_input"), list)


def build_sample(row: dict[str, Any], where: RowLocation) -> SingleTurnSample | MultiTurnSample:
    """Validate a prepared row; translate validation failures into one clear DataError."""
    model = MultiTurnSample if is_multi_turn_row(row) else SingleTurnSample
    try:
        return model.model_validate(row)
    except ValidationError as exc:
        raise _translate(exc, row, model, where) from None


def _translate(
    exc: ValidationError, row: dict[str, Any], model: type[BaseModel], where: RowLocation
) -> DataError:
    first = exc.errors()[0]
    loc = first.get("loc", ())
    field = str(loc[0]) if loc else None
    if len(loc) > 1 and first["type"] in ("extra_forbidden", "missing"):
        # A problem inside a nested object (a message, a tool call): name the exact spot.
        inner = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc[1:-1])
        what = "unexpected key" if first["type"] == "extra_forbidden" else "missing required key"
        return where.error(f"{field}{inner}: {what} {loc[-1]!r}", field)
    if first["type"] == "extra_forbidden" and field is not None:
        allowed = ", ".join(name for name in model.model_fields if name != "metadata")
        return where.error(f"{field} is not a field of {model.__name__} (fields: {allowed})", field)
    if first["type"] == "missing" and field is not None:
        return where.error(f"{field} is required for {model.__name__}", field)
    if field == "user_input" and model is MultiTurnSample:
        message = str(first["msg"]).removeprefix("Value error, ")
        path = ".".join(str(part) for part in loc[1:])
        return where.error(f"user_input{'[' + path + ']' if path else ''}: {message}", field)
    if field in _EXPECTED:
        return where.error(
            f"{field} must be {_EXPECTED[field]}, got {_describe(field, row.get(field))}", field
        )
    return where.error(f"{field}: {first['msg']}", field)


__all__ = [
    "LEGACY_COLUMNS",
    "MAX_NESTING",
    "RowLocation",
    "build_sample",
    "is_multi_turn_row",
    "nesting_depth",
    "normalise_column_map",
    "prepare_row",
]
