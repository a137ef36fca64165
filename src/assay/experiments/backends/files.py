"""`local/jsonl` and `local/csv`: one file per dataset under `<root_dir>/datasets/`.

JSONL keeps one row per line exactly as JSON. CSV has one column per key seen in any row (in
order of first appearance), cells encoded by `codec.encode_cell`; a key a row lacks is written
as an empty cell and so reads back as None. Text is written as it is; a string that would read
back as a number, boolean, JSON or None (`"4"`, `"true"`, `""`) is recorded in a sidecar file
`<name>.csv.types.json` (row indexes per column, and the hash of the CSV it belongs to), so
assay reads it back as a string while other tools see plain `4`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
from pathlib import Path
from typing import Any

from assay.errors import DataError
from assay.experiments.backends.base import FileBackend, write_atomically
from assay.experiments.codec import decode_cell, dumps, encode_cell, encode_row, misread_as_json

log = logging.getLogger(__name__)


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


def sidecar_path(path: Path) -> Path:
    """Where the CSV at `path` records which of its cells are strings that look like JSON."""
    return path.with_name(path.name + ".types.json")


def read_csv_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a CSV file with a header line, cells decoded by `codec.decode_cell`, except the
    cells its sidecar names as strings (when the sidecar was written with this very file)."""
    data = path.read_bytes()
    strings = _strings_of(path, data)
    reader = csv.reader(io.StringIO(data.decode("utf-8-sig"), newline=""))
    header = next(reader, None)
    if header is None:
        return []
    rows = []
    index = 0
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
        as_text = strings.get(index, ())
        rows.append(
            {
                column: cell if column in as_text else decode_cell(cell)
                for column, cell in zip(header, cells, strict=True)
            }
        )
        index += 1
    return rows


def _strings_of(path: Path, data: bytes) -> dict[int, set[str]]:
    """{row index: columns whose cell is a string} from the sidecar, if it belongs to `data`."""
    sidecar = sidecar_path(path)
    try:
        recorded = json.loads(sidecar.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("ignoring %s (%s): number-like text cells are read as numbers", sidecar, exc)
        return {}
    if not isinstance(recorded, dict) or recorded.get("sha256") != hashlib.sha256(data).hexdigest():
        log.warning(
            "%s was changed after %s was written: number-like text cells are read as numbers",
            path,
            sidecar.name,
        )
        return {}
    strings: dict[int, set[str]] = {}
    for column, indexes in (recorded.get("strings") or {}).items():
        for index in indexes:
            strings.setdefault(int(index), set()).add(column)
    return strings


def write_csv_rows(target: Path, rows: list[dict[str, Any]], *, replace: Any = None) -> None:
    """Write `rows` as CSV to `target` (through `replace(write)` when given, for atomic saves),
    and beside it the sidecar naming string cells that would read back as something else."""
    where = str(target)
    encoded = [encode_row(row, where=where, index=i) for i, row in enumerate(rows)]
    header: dict[str, None] = {}
    for row in encoded:
        header.update(dict.fromkeys(row))
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    if header:
        writer.writerow(list(header))
    strings: dict[str, list[int]] = {}
    for index, row in enumerate(encoded):
        writer.writerow([encode_cell(row.get(column)) for column in header])
        for column, value in row.items():
            if misread_as_json(value):
                strings.setdefault(column, []).append(index)
    data = buffer.getvalue().encode("utf-8")

    def write(path: Path) -> None:
        path.write_bytes(data)

    if replace is not None:
        replace(write)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        write(target)
    # The CSV first: if the process dies between the two, the old sidecar no longer matches the
    # new file and is ignored (number-like text then reads as numbers; nothing is lost).
    sidecar = sidecar_path(target)
    if strings:
        recorded = {"sha256": hashlib.sha256(data).hexdigest(), "strings": strings}
        write_atomically(sidecar, lambda path: path.write_text(json.dumps(recorded), "utf-8"))
    else:
        sidecar.unlink(missing_ok=True)


__all__ = ["CsvBackend", "JsonlBackend", "read_csv_rows", "sidecar_path", "write_csv_rows"]
