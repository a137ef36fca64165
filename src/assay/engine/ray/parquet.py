"""Rows of a Ray run as Parquet part files (`RayExecutor(output_format="parquet")`).

One Parquet row per cell, so the output reads as a table (`pandas.read_parquet("runs/r42/rows")`,
DuckDB, Spark, ...) with one typed column per field of the outcome:

    row_id, row, metric        which cell
    status                     "ok" | "skipped" | "error"
    value                      an ok number (a bool as 0/1) as float64, else null
    value_json                 an ok value exactly as JSON (bool, int, float, label or ranking)
    reason, details            the ok or skipped reason; an ok's details as JSON
    error_type, message,       an error's cause, never a NaN in `value`
      attempts, raw
    seconds, usage             time spent; the model usage (struct), null when none
    cell_json                  null, unless some text of the cell is not valid UTF-8 (a lone
                               surrogate, which Parquet strings cannot hold): then the whole cell
                               as ASCII JSON, read instead of the columns (which show that
                               character as a `\\udcff` escape)

A part file is written whole by one worker (Parquet has its footer at the end, so it cannot be
appended to): `decode` reads it back into the same `Cell`s the JSONL rows give, the cells of one
row in a row.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pydantic import ValidationError

from assay._util.deps import require
from assay.schema.outcome import Cell

USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "requests",
    "cached_requests",
    "cost",
    "unpriced_requests",
)
TEXT_COLUMNS = ("row_id", "metric", "reason", "details", "error_type", "message", "raw")


def import_pyarrow() -> Any:
    require("pyarrow", extra="parquet", feature="Parquet output of a Ray run")
    import pyarrow.parquet

    return pyarrow


def _schema(pa: Any) -> Any:
    usage = pa.struct(
        [(name, pa.float64() if name == "cost" else pa.int64()) for name in USAGE_FIELDS]
    )
    return pa.schema(
        [
            ("row_id", pa.string()),
            ("row", pa.int64()),
            ("metric", pa.string()),
            ("status", pa.string()),
            ("value", pa.float64()),
            ("value_json", pa.string()),
            ("reason", pa.string()),
            ("details", pa.string()),
            ("error_type", pa.string()),
            ("message", pa.string()),
            ("attempts", pa.int64()),
            ("raw", pa.string()),
            ("seconds", pa.float64()),
            ("usage", usage),
            ("cell_json", pa.string()),
        ]
    )


def _utf8(text: str | None) -> tuple[str | None, bool]:
    """The text as Parquet can store it, and whether it had to change."""
    if text is None or text.isascii():
        return text, False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8"), True
    return text, False


def _flat(row_id: str, cell: dict[str, Any]) -> dict[str, Any]:
    """One cell (`Cell.model_dump(mode="json")`) as a Parquet row."""
    outcome = cell["outcome"]
    status = outcome["status"]
    value = outcome.get("value") if status == "ok" else None
    details = outcome.get("details")
    flat: dict[str, Any] = {
        "row_id": row_id,
        "row": cell["row"],
        "metric": cell["metric"],
        "status": status,
        "value": float(value) if isinstance(value, (bool, int, float)) else None,
        "value_json": json.dumps(value, ensure_ascii=False) if status == "ok" else None,
        "reason": outcome.get("reason"),
        "details": json.dumps(details, ensure_ascii=False) if details is not None else None,
        "error_type": outcome.get("error_type"),
        "message": outcome.get("message"),
        "attempts": outcome.get("attempts"),
        "raw": outcome.get("raw"),
        "seconds": cell.get("seconds", 0.0),
        "usage": cell.get("usage"),
        "cell_json": None,
    }
    changed = False
    for name in (*TEXT_COLUMNS, "value_json"):
        flat[name], lost = _utf8(flat[name])
        changed |= lost
    if changed:
        flat["cell_json"] = json.dumps(cell, ensure_ascii=True)
    return flat


def encode(records: list[tuple[str, list[Cell]]]) -> bytes:
    """The rows (row id, its cells) as the bytes of one Parquet file."""
    pa = import_pyarrow()
    flat = [
        _flat(row_id, cell.model_dump(mode="json")) for row_id, cells in records for cell in cells
    ]
    schema = _schema(pa)
    table = pa.Table.from_pylist(flat, schema=schema)
    sink = pa.BufferOutputStream()
    pa.parquet.write_table(table, sink, compression="zstd")
    data: bytes = sink.getvalue().to_pybytes()
    return data


def _cell(flat: dict[str, Any]) -> Cell:
    if flat["cell_json"] is not None:
        return Cell.model_validate(json.loads(flat["cell_json"]))
    status = flat["status"]
    if status == "ok":
        outcome: dict[str, Any] = {
            "status": status,
            "value": json.loads(flat["value_json"]),
            "reason": flat["reason"],
            "details": json.loads(flat["details"]) if flat["details"] is not None else None,
        }
    elif status == "skipped":
        outcome = {"status": status, "reason": flat["reason"]}
    else:
        outcome = {
            "status": status,
            "error_type": flat["error_type"],
            "message": flat["message"],
            "attempts": flat["attempts"],
            "raw": flat["raw"],
        }
    return Cell.model_validate(
        {
            "row": flat["row"],
            "metric": flat["metric"],
            "outcome": outcome,
            "seconds": flat["seconds"],
            "usage": flat["usage"],
        }
    )


def decode(data: bytes) -> Iterator[tuple[str, list[Cell]] | None]:
    """The rows of one Parquet part file; None for each cell (or the whole file) that cannot be
    read as one."""
    pa = import_pyarrow()
    try:
        flats = pa.parquet.read_table(pa.BufferReader(data)).to_pylist()
    except (pa.ArrowException, OSError, ValueError):
        yield None
        return
    row_id: str | None = None
    cells: list[Cell] = []
    for flat in flats:
        try:
            cell = _cell(flat)
        except (KeyError, TypeError, ValueError, ValidationError):
            yield None
            continue
        if flat["row_id"] != row_id:
            if row_id is not None:
                yield row_id, cells
            row_id, cells = flat["row_id"], []
        cells.append(cell)
    if isinstance(row_id, str):
        yield row_id, cells


__all__ = ["decode", "encode", "import_pyarrow"]
