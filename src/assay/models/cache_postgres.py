"""The response cache in PostgreSQL, for a cluster whose nodes share no file system.

    llm_factory("openai/gpt-4o-mini", cache="postgresql+psycopg://user@db-host/assay")
    # or: ASSAY_CACHE_URL=postgresql://user@db-host/assay, with cache=True (the default)

The same cache as the SQLite file (`cache.py`): the same keys, only successful answers stored (a
cut-off one with its finish reason, as the model gave it), `replay_only=True` raising `CacheMiss`
instead of calling. Entries live in one table, `assay_response_cache`, created on first use
(under an advisory lock, so workers starting together do not race). Every process opens its own
connection (psycopg, autocommit: each answer is stored as soon as it is known, so a worker killed
right after a call has already shared its answer).

The URL may carry a password; it is kept in memory only (and sent to Ray workers inside the
pickled judge, like an API key). Messages and `stats()` show it as `***`.
"""

from __future__ import annotations

import threading
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from assay._util.deps import require
from assay.errors import UsageError
from assay.models.cache import _DATABASE_SCHEMES as SCHEMES
from assay.models.cache import ResponseCache

TABLE = "assay_response_cache"
_LOCK_ID = 0x61737361  # the advisory lock that guards creating the table ("assa")


def is_postgres_url(value: Any) -> bool:
    return isinstance(value, str) and value.split("://", 1)[0].lower() in SCHEMES


def _masked(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


class PostgresResponseCache(ResponseCache):
    """Thread-safe; any number of processes and nodes may share the database."""

    def __init__(self, path: str | None = None, *, replay_only: bool = False) -> None:
        import os

        url = path or os.environ.get("ASSAY_CACHE_URL") or ""
        if not is_postgres_url(url):
            raise UsageError(
                f"a PostgreSQL response cache needs a postgresql:// URL, got {_masked(url)!r}"
            )
        self.url = url
        self.path = _masked(url)  # type: ignore[assignment]  # what messages name
        self.replay_only = replay_only
        self._lock = threading.Lock()
        self._db: Any = None
        with self._lock:
            self._connect()
            self._run(lambda db: self._create_table(db))

    # -- connection ------------------------------------------------------------------------
    def _connect(self) -> None:
        psycopg = require("psycopg", extra="platform", feature="the PostgreSQL response cache")
        rest = self.url.split("://", 1)[1]
        try:
            self._db = psycopg.connect(f"postgresql://{rest}", autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UsageError(f"response cache {self.path}: cannot connect ({first})") from None

    def _run(self, work: Any) -> Any:
        """`work(connection)`, reconnecting once if the connection was lost (a restarted server)."""
        import psycopg

        try:
            return work(self._db)
        except psycopg.OperationalError:
            if not self._db.closed:
                raise
        self._connect()
        return work(self._db)

    @staticmethod
    def _create_table(db: Any) -> None:
        with db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_ID,))
            db.execute(
                f"CREATE TABLE IF NOT EXISTS {TABLE} (key TEXT PRIMARY KEY, kind TEXT NOT NULL, "
                "model TEXT NOT NULL, created DOUBLE PRECISION NOT NULL, value TEXT NOT NULL)"
            )

    # -- the cache's storage (everything else is ResponseCache's) ---------------------------
    def _get(self, key: str) -> str | None:
        with self._lock:
            row = self._run(
                lambda db: db.execute(
                    f"SELECT value FROM {TABLE} WHERE key = %s", (key,)
                ).fetchone()
            )
        return row[0] if row else None

    def _put(self, key: str, kind: str, model: str, value: str) -> None:
        with self._lock:
            self._run(
                lambda db: db.execute(
                    f"INSERT INTO {TABLE} (key, kind, model, created, value) "
                    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (key) DO UPDATE SET kind = "
                    "EXCLUDED.kind, model = EXCLUDED.model, created = EXCLUDED.created, "
                    "value = EXCLUDED.value",
                    (key, kind, model, time.time(), value),
                )
            )

    def stats(self) -> dict[str, Any]:
        def read(db: Any) -> tuple[list[Any], int]:
            rows = db.execute(
                f"SELECT kind, model, COUNT(*), SUM(LENGTH(value)) FROM {TABLE} "
                "WHERE kind != 'meta' GROUP BY kind, model ORDER BY kind, model"
            ).fetchall()
            size = db.execute("SELECT pg_total_relation_size(%s)", (TABLE,)).fetchone()[0]
            return rows, int(size or 0)

        with self._lock:
            rows, size = self._run(read)
        return {
            "path": self.path,
            "entries": sum(row[2] for row in rows),
            "bytes": size,
            "by_model": [
                {"kind": r[0], "model": r[1], "entries": r[2], "value_bytes": int(r[3] or 0)}
                for r in rows
            ],
        }

    def clear(self) -> int:
        with self._lock:
            return int(self._run(lambda db: db.execute(f"DELETE FROM {TABLE}").rowcount))

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()


__all__ = ["PostgresResponseCache", "is_postgres_url"]
