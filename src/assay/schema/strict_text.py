"""Reading CSV and JSON input strictly: a file that would be misread is an error naming where.

Python's `csv` and `json` modules read many broken files without a word: an unclosed quote glues
every later line into one cell, a row with an extra field keeps it under the key `None` (and one
with a missing field gets `None`), a repeated column or JSON key keeps the last value, and a
header-only file is an empty dataset. Each of these turns into a wrong evaluation that looks
right, so every reader of user files (datasets, alignment labels, the platform's import) goes
through the functions here, which raise `DataError` with the row (or header column) instead.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from assay.errors import DataError


def csv_records(
    lines: Iterable[str], *, file: str | None = None, first_row: int = 1
) -> Iterator[tuple[int, dict[str, str]]]:
    """(row number, {column: cell}) for each data row; rows are numbered from `first_row` (the
    first row after the header). Blank lines are skipped. Raises `DataError` for a duplicate or
    empty column name, a row whose field count differs from the header's, a quote that is never
    closed or is followed by text, and a file with no data row."""
    reader = csv.reader(lines, strict=True)
    number = first_row - 1
    try:
        header = next(reader, None)
        if header is None:
            raise DataError("the file is empty: a CSV needs a header line and rows", file=file)
        _check_header(header, file)
        seen = 0
        for cells in reader:
            number += 1
            if not cells or (len(cells) == 1 and not cells[0].strip() and len(header) > 1):
                number -= 1  # a blank line is not a row
                continue
            if len(cells) != len(header):
                more = "more" if len(cells) > len(header) else "fewer"
                raise DataError(
                    f"{len(cells)} fields where the header has {len(header)} ({more} than the "
                    f"columns; line {reader.line_num} of the file): a stray delimiter, or a "
                    "quote that is not closed",
                    file=file,
                    row=number,
                )
            seen += 1
            yield number, dict(zip(header, cells, strict=True))
    except csv.Error as exc:
        raise DataError(
            f"not valid CSV ({exc}; line {reader.line_num} of the file): check the quotes",
            file=file,
            row=number + 1,
        ) from None
    if not seen:
        raise DataError("the file has a header but no rows", file=file)


def _check_header(header: list[str], file: str | None) -> None:
    first: dict[str, int] = {}
    for position, name in enumerate(header, start=1):
        if not name.strip():
            raise DataError(f"column {position} of the header has no name", file=file, row=None)
        if name in first:
            raise DataError(
                f"the header names column {name!r} twice (columns {first[name]} and {position}); "
                "rename one",
                file=file,
                field=name,
            )
        first[name] = position


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"the key {key!r} appears twice in one object")
        found[key] = value
    return found


def strict_json(text: str | bytes) -> Any:
    """`json.loads` that refuses an object with a repeated key (ValueError naming the key; a
    `json.JSONDecodeError` for text that is not JSON, as `json.loads` raises)."""
    return json.loads(text, object_pairs_hook=_unique_keys)


def text_lines(path: Path) -> Iterator[str]:
    """The lines of a UTF-8 text file (a byte-order mark is dropped), with their line endings.
    Bytes that are not UTF-8 are a `DataError` naming the line, decoded line by line so the
    number is exact."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise DataError("file not found", file=str(path)) from None
    except IsADirectoryError:
        raise DataError("is a directory, not a file", file=str(path)) from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(
                    f"not UTF-8 text at line {number}, byte {exc.start + 1} of the line "
                    f"({exc.reason}); save the file as UTF-8",
                    file=str(path),
                ) from None


__all__ = ["csv_records", "strict_json", "text_lines"]
