"""`sqlite`: one SQLite database file per dataset, `<root_dir>/datasets/<name>.sqlite`.

Schema (format version 1):

    rows(position INTEGER PRIMARY KEY, data TEXT NOT NULL)   -- data: the row as a JSON object
    info(key TEXT PRIMARY KEY, value TEXT NOT NULL)          -- format_version, name

Rows are JSON, so nested values survive and SQLite's JSON functions query them directly:
`SELECT json_extract(data, '$.query') FROM rows ORDER BY position`. A save replaces all rows in
one transaction. Only the standard library's sqlite3 is used.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from typing import Any

from assay.errors import DataError
from assay.experiments.backends.base import FileBackend
from assay.experiments.codec import dumps, encode_row

FORMAT_VERSION = "1"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS rows (position INTEGER PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class SqliteBackend(FileBackend):
    extension = "sqlite"

    def _connect(self, name: str) -> sqlite3.Connection:
        return sqlite3.connect(self.path(name), timeout=30)

    def load(self, name: str) -> list[dict[str, Any]]:
        where = str(self.path(name))
        try:
            with contextlib.closing(self._connect(name)) as db:
                fetched = db.execute("SELECT position, data FROM rows ORDER BY position").fetchall()
        except sqlite3.DatabaseError as exc:
            raise DataError(f"not an assay SQLite dataset ({exc})", file=where) from None
        rows = []
        for position, data in fetched:
            try:
                row = json.loads(data)
            except ValueError as exc:
                raise DataError(
                    f"stored row is not valid JSON ({exc})",
                    file=where,
                    row=position,
                    row_is_index=True,
                ) from None
            rows.append(row)
        return rows

    def save(self, name: str, rows: list[dict[str, Any]]) -> None:
        where = str(self.path(name))
        encoded = [(i, dumps(encode_row(row, where=where, index=i))) for i, row in enumerate(rows)]
        self.directory.mkdir(parents=True, exist_ok=True)
        with contextlib.closing(self._connect(name)) as db:
            db.executescript(_SCHEMA)
            with db:  # one transaction: readers see the old rows or the new ones
                db.execute("DELETE FROM rows")
                db.executemany("INSERT INTO rows (position, data) VALUES (?, ?)", encoded)
                db.executemany(
                    "INSERT OR REPLACE INTO info (key, value) VALUES (?, ?)",
                    [("format_version", FORMAT_VERSION), ("name", name)],
                )


__all__ = ["SqliteBackend"]
