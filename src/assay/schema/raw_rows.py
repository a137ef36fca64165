"""A data file as numbered raw rows: what `EvaluationDataset` reads before rows become samples.

Each reader yields (row number, raw row) pairs, read as they are asked for, so that a whole
dataset (`EvaluationDataset.from_jsonl`, `from_csv`) and a file read a piece at a time
(`iter_jsonl`, `iter_csv`) see the same rows with the same numbers and the same errors. Turning a
raw row into a sample (renames, CSV cell decoding, validation) is `rows.py`'s work, not this one's.
"""

from __future__ import annotations

import contextlib
import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay.errors import DataError
from assay.schema.rows import MAX_NESTING, too_deep
from assay.schema.strict_text import csv_records, strict_json, text_lines

_CSV_CELL_LIMIT = 2**31 - 1
IS_A_DIRECTORY = "is a directory, not a data file; give a file: .jsonl, .json or .csv"


def jsonl_rows(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON) for each non-blank line of a .jsonl file."""
    for line_number, line in enumerate(open_text(path), start=1):
        if not line.strip():
            continue
        try:
            yield line_number, strict_json(line)
        except json.JSONDecodeError as exc:
            hint = _multiline_hint(path, line)
            raise DataError(
                f"not valid JSON ({exc.msg} at column {exc.colno}){hint}",
                file=str(path),
                row=line_number,
            ) from None
        except RecursionError:
            raise DataError(too_deep(), file=str(path), row=line_number) from None
        except ValueError as exc:  # a repeated key: which value was meant is unknowable
            raise DataError(str(exc), file=str(path), row=line_number) from None


def csv_rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """(row number, {column: cell}) for each row of a CSV file, read strictly (`csv_records`).

    A long retrieved context easily passes csv's default cell limit of 128 KB, and that limit is
    the process's own setting: it is raised only while a row is being parsed, so the other readers
    of the process (and the work done between two pieces of a streamed run) keep theirs."""
    records = csv_records(open_text(path), file=str(path))
    while True:
        limit = csv.field_size_limit()
        csv.field_size_limit(max(limit, _CSV_CELL_LIMIT))
        try:
            record = next(records, None)
        finally:
            csv.field_size_limit(limit)
        if record is None:
            return
        yield record


def open_text(path: Path) -> Iterator[str]:
    """The file's lines; not found, a directory or bytes that are not UTF-8 are DataErrors."""
    if path.is_dir():
        raise DataError(IS_A_DIRECTORY, file=str(path))
    return text_lines(path)


def _multiline_hint(path: Path, line: str) -> str:
    """A hint when a line that is not JSON looks like the start of a pretty-printed document."""
    start = line.strip()
    if not start.startswith(("[", "{")):
        return ""
    whole: Any = None
    with contextlib.suppress(OSError, ValueError, RecursionError):
        whole = json.loads(path.read_text(encoding="utf-8-sig"))
    if isinstance(whole, list) or (whole is None and start.startswith("[")):
        return (
            "; the file looks like a JSON array spread over several lines; "
            "save it as .json or one object per line"
        )
    if isinstance(whole, dict) or start == "{":
        return "; the file looks like a JSON object spread over several lines; write one object per line"
    return ""


def too_deep_element(text: str) -> int | None:
    """The 1-based position, in a top-level JSON array, of the first element nested too deep."""
    depth, element, in_string, escaped = 0, 1, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_NESTING + 1:  # the array is level 0 here, its rows level 1
                return element
        elif char in "]}":
            depth -= 1
        elif char == "," and depth == 1:
            element += 1
    return None


__all__ = ["IS_A_DIRECTORY", "csv_rows", "jsonl_rows", "open_text", "too_deep_element"]
