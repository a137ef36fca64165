"""`local/jsonl` and `local/csv`: one file per dataset under `<root_dir>/datasets/`.

JSONL keeps one row per line exactly as JSON. CSV has one column per key seen in any row (in
order of first appearance), cells encoded by `codec.encode_cell`; a key a row lacks is written
as an empty cell and so reads back as None.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from assay.errors import DataError
from assay.experiments.backends.base import FileBackend
from assay.experiments.codec import decode_cell, dumps, encode_cell, encode_row


class JsonlBackend(FileBackend):
    extension = "jsonl"

    def load(self, name: str) -> list[dict[str, Any]]:
        path = self.path(name)
        rows: list[dict[str, Any]] = []
        with path.open("r", encoding="utf-8", newline="") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise DataError(f"not valid JSON ({exc})", file=str(path), row=number) from None
                if not isinstance(row, dict):
                    raise DataError(
                        f"a row must be a JSON object, got {type(row).__name__}",
                        file=str(path),
                        row=number,
                    )
                rows.append(row)
        return rows

    def save(self, name: str, rows: list[dict[str, Any]]) -> None:
        where = str(self.path(name))
        lines = [dumps(encode_row(row, where=where, index=i)) + "\n" for i, row in enumerate(rows)]

        def write(path: Path) -> None:
            with path.open("w", encoding="utf-8", newline="") as handle:
                handle.writelines(lines)

        self.replace_atomically(name, write)


class CsvBackend(FileBackend):
    extension = "csv"

    def load(self, name: str) -> list[dict[str, Any]]:
        return read_csv_rows(self.path(name))

    def save(self, name: str, rows: list[dict[str, Any]]) -> None:
        write_csv_rows(
            self.path(name), rows, replace=lambda write: self.replace_atomically(name, write)
        )


def read_csv_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a CSV file with a header line, cells decoded by `codec.decode_cell`."""
    with path.open("r", encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None:
            return []
        rows = []
        for number, cells in enumerate(reader, start=2):
            if not cells:
                continue
            if len(cells) > len(header):
                raise DataError(
                    f"{len(cells)} cells but the header has {len(header)} columns",
                    file=str(path),
                    row=number,
                )
            cells = cells + [""] * (len(header) - len(cells))
            rows.append(
                {column: decode_cell(cell) for column, cell in zip(header, cells, strict=True)}
            )
    return rows


def write_csv_rows(target: Path, rows: list[dict[str, Any]], *, replace: Any = None) -> None:
    """Write `rows` as CSV to `target` (through `replace(write)` when given, for atomic saves)."""
    where = str(target)
    encoded = [encode_row(row, where=where, index=i) for i, row in enumerate(rows)]
    header: dict[str, None] = {}
    for row in encoded:
        header.update(dict.fromkeys(row))

    def write(path: Path) -> None:
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            if header:
                writer.writerow(list(header))
            for row in encoded:
                writer.writerow([encode_cell(row.get(column)) for column in header])

    if replace is not None:
        replace(write)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        write(target)


__all__ = ["CsvBackend", "JsonlBackend", "read_csv_rows", "write_csv_rows"]
