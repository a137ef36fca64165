"""Turning row values into JSON and back, the one encoding every file backend shares.

`to_jsonable` maps a value onto plain JSON types: dicts (string keys), lists, strings, numbers,
booleans and None. Pydantic models, dataclasses, `MetricResult`s, tuples, sets, dates, paths,
enums and numpy scalars/arrays are converted; anything else is refused with a `TypeError` that
names the type. A value that went through a file comes back as its JSON form (a model becomes a
dict, a tuple a list).

CSV cells hold text, so non-text values are JSON-encoded in the cell and decoded on reading:
an empty cell is None, a cell that parses as JSON is that value, any other cell is the text
itself. Strings are written as they are, so pandas, spreadsheets and Ragas read `"42"` as 42 and
not as `"42"` in quotes. A string that reading would take for something else (`"42"`, `"true"`,
`""`, `'{"a": 1}'`) is listed by `misread_as_json`; the CSV backend records where such strings
are in a small sidecar file, so they still come back as strings (`backends/files.py`).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import json
import math
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from assay.errors import DataError
from assay.schema.outcome import MetricResult


def to_jsonable(value: Any) -> Any:
    """`value` as plain JSON types (see the module docstring); raises TypeError otherwise."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)  # also numpy/enum subclasses: plain ints from here on
    if isinstance(value, float):
        return float(value)
    if isinstance(value, Mapping):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(item) for item in value]
    if isinstance(value, (set, frozenset)):
        items = [to_jsonable(item) for item in value]
        try:
            return sorted(items)
        except TypeError:
            return items
    if isinstance(value, MetricResult):
        encoded: dict[str, Any] = {"value": to_jsonable(value.value), "reason": value.reason}
        if value.details:
            encoded["details"] = to_jsonable(value.details)
        return encoded
    if hasattr(value, "model_dump") and callable(value.model_dump):  # pydantic v2 models
        return to_jsonable(value.model_dump(mode="json"))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):  # arrays and scalars alike
        return to_jsonable(value.tolist())
    raise TypeError(f"a value of type {type(value).__name__} cannot be stored as JSON")


def encode_row(row: Mapping[str, Any], *, where: str, index: int) -> dict[str, Any]:
    """One row as plain JSON types; an unstorable value is a DataError naming row and column."""
    encoded: dict[str, Any] = {}
    for column, value in row.items():
        try:
            encoded[str(column)] = to_jsonable(value)
        except TypeError as exc:
            raise DataError(
                f"column {column!r}: {exc}; convert it to a string, number, list or dict first",
                file=where,
                row=index,
                field=str(column),
                row_is_index=True,
            ) from None
    return encoded


def dumps(value: Any) -> str:
    """Compact JSON, unicode kept readable. Python's NaN/Infinity literals are allowed."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def encode_cell(value: Any) -> str:
    """A plain-JSON value as CSV cell text: a string as it is, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return dumps(value)


def misread_as_json(value: Any) -> bool:
    """True for a string that `decode_cell` would not give back as that string."""
    return isinstance(value, str) and (value == "" or _parses_as_json(value))


def decode_cell(text: str) -> Any:
    """The inverse of `encode_cell`."""
    if text == "":
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _parses_as_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def is_number(value: Any) -> bool:
    """True for finite ints, floats and bools (bools count as 0/1)."""
    if isinstance(value, int):  # bool included
        return True
    return isinstance(value, float) and math.isfinite(value)


__all__ = [
    "decode_cell",
    "dumps",
    "encode_cell",
    "encode_row",
    "is_number",
    "misread_as_json",
    "to_jsonable",
]
