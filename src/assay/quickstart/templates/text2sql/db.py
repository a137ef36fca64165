"""The SQLite database the app queries: shop.db, built from shop.sql the first time it is needed."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATABASE = HERE / "shop.db"
# What the model is shown: the CREATE TABLE statements of shop.sql, without its comments and data.
SCHEMA = "\n".join(
    line
    for line in (HERE / "shop.sql").read_text().split("INSERT", 1)[0].splitlines()
    if not line.startswith("--")
).strip()


def connect() -> sqlite3.Connection:
    """A read-only connection, so no generated query can change the data."""
    if not DATABASE.exists():
        with closing(sqlite3.connect(DATABASE)) as db:
            db.executescript((HERE / "shop.sql").read_text())
    return sqlite3.connect(f"file:{DATABASE}?mode=ro", uri=True)


def run_query(sql: str) -> tuple[list[str], list[tuple]]:
    """(column names, rows) of one query; raises sqlite3.Error when it does not run."""
    with closing(connect()) as db:
        cursor = db.execute(sql)
        return [column[0] for column in cursor.description or []], cursor.fetchall()
