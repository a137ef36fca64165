"""Switch an SQLite connection to WAL mode when other connections may be doing the same.

Changing the journal mode needs an exclusive lock, and SQLite refuses it at once with
"database is locked" (without calling the busy handler, to avoid a deadlock) while another
connection is switching the same new file. The mode is stored in the file, so a connection that
finds the file in WAL mode already has nothing to do; the others retry for a bounded time.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import tenacity

_WAIT_SECONDS = 30.0


def is_busy(exc: BaseException) -> bool:
    """True for SQLite's "database is locked" / "busy" refusals (from any DB-API wrapper)."""
    cause = getattr(exc, "orig", exc)  # SQLAlchemy wraps the driver's error
    return isinstance(cause, sqlite3.OperationalError) and (
        "locked" in str(cause) or "busy" in str(cause)
    )


def use_wal(connection: Any) -> None:
    """Put the file behind a DB-API `connection` (sqlite3 or its SQLAlchemy proxy) in WAL mode."""
    for attempt in tenacity.Retrying(
        retry=tenacity.retry_if_exception(is_busy),
        wait=tenacity.wait_random(0.005, 0.05),
        stop=tenacity.stop_after_delay(_WAIT_SECONDS),
        reraise=True,
    ):
        with attempt:
            cursor = connection.cursor()
            try:
                mode = cursor.execute("PRAGMA journal_mode").fetchone()[0]
                if str(mode).lower() != "wal":
                    cursor.execute("PRAGMA journal_mode=WAL")
            finally:
                cursor.close()


__all__ = ["is_busy", "use_wal"]
