"""A persistent response cache in one SQLite file.

The key hashes everything that can change a model's answer: provider, model, endpoint,
messages, sampling parameters and the requested output schema/mode. Parameters that cannot
change the answer (timeouts) are left out. Only successful responses are stored: an error is
never cached, so a rerun retries it. Writes are not fsynced one by one (`synchronous=NORMAL`):
the file is never corrupted, but a power cut may lose the last answers stored, which a rerun
then asks again.

Where the file lives: `$ASSAY_CACHE_DIR/cache.sqlite` if set; else `./.assay/cache.sqlite`
when the project has an `.assay/` directory; else the user cache directory
(`$XDG_CACHE_HOME/assay` or `~/.cache/assay`).

`ResponseCache(path, replay_only=True)` only reads: a chat or embedding request with no stored
answer raises `CacheMiss` instead of reaching the provider (pytest `--assay-cache=replay`, so a
recorded CI run is free and deterministic, and a changed prompt is an error, not a silent call).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from assay._util.sqlite_wal import use_wal
from assay.errors import ModelError
from assay.models.types import ModelRequest, ModelResponse

_IGNORED_PARAMS = frozenset({"timeout"})
_DATABASE_SCHEMES = ("postgresql", "postgresql+psycopg", "postgres")  # see cache_postgres.py


def default_cache_path() -> Path:
    explicit = os.environ.get("ASSAY_CACHE_DIR")
    if explicit:
        return Path(explicit) / "cache.sqlite"
    project = Path.cwd() / ".assay"
    if project.is_dir():
        return project / "cache.sqlite"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "assay" / "cache.sqlite"


def _digest(payload: Any) -> str:
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def request_key(identity: dict[str, Any], request: ModelRequest) -> str:
    output = request.output
    return _digest(
        {
            "kind": "chat",
            "identity": identity,
            # The same JSON as `model_dump()` / `asdict()` give (keys are sorted), without the
            # copies they make of every message and of the whole schema.
            "messages": [message.wire() for message in request.messages],
            "n": request.n,
            "params": {k: v for k, v in request.params.items() if k not in _IGNORED_PARAMS},
            "output": {"name": output.name, "schema": output.schema, "mode": output.mode}
            if output
            else None,
        }
    )


def embedding_key(identity: dict[str, Any], text: str) -> str:
    return _digest({"kind": "embedding", "identity": identity, "text": text})


class CacheMiss(ModelError):
    """A replay-only cache has no stored answer for a request; no call was made."""


class ResponseCache:
    """Thread-safe; several processes may share the file (SQLite WAL mode). `open_cache` picks
    this or the PostgreSQL cache of a cluster (`cache_postgres.py`) from a path or URL."""

    def __init__(self, path: str | Path | None = None, *, replay_only: bool = False) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.replay_only = replay_only
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        with self._lock:
            use_wal(self._db)  # other processes may be opening the same new file
            # In WAL mode NORMAL never corrupts the file; it only skips the fsync per commit, so
            # an answer written just before a power cut (not a process kill) may be asked again.
            # FULL's fsync blocked the event loop for up to a millisecond on every answer stored.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, kind TEXT NOT NULL, "
                "model TEXT NOT NULL, created REAL NOT NULL, value TEXT NOT NULL)"
            )
            self._db.commit()

    def _get(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM entries WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _put(self, key: str, kind: str, model: str, value: str) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO entries (key, kind, model, created, value) VALUES (?, ?, ?, ?, ?)",
                (key, kind, model, time.time(), value),
            )
            self._db.commit()

    def get_response(self, key: str) -> ModelResponse | None:
        value = self._get(key)
        if value is None and self.replay_only:
            self._missed(key, "chat")
        return ModelResponse.model_validate_json(value) if value is not None else None

    def put_response(self, key: str, model: str, response: ModelResponse) -> None:
        self._put(key, "chat", model, response.model_dump_json(exclude={"cached"}))

    def get_vector(self, key: str) -> list[float] | None:
        value = self._get(key)
        if value is None and self.replay_only:
            self._missed(key, "embedding")
        return json.loads(value) if value is not None else None

    def _missed(self, key: str, kind: str) -> None:
        raise CacheMiss(
            f"replay-only cache {self.path} has no recorded {kind} answer for this request "
            f"(key {key[:16]}); no call was made. Record it first (pytest --assay-cache=record)."
        )

    def put_vector(self, key: str, model: str, vector: list[float]) -> None:
        self._put(key, "embedding", model, json.dumps(vector))

    def get_meta(self, name: str) -> str | None:
        """Small facts learnt about a model (e.g. which structured-output mode it accepts)."""
        return self._get("meta:" + name)

    def put_meta(self, name: str, value: str) -> None:
        self._put("meta:" + name, "meta", "", value)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            rows = self._db.execute(
                "SELECT kind, model, COUNT(*), SUM(LENGTH(value)) FROM entries WHERE kind != 'meta' "
                "GROUP BY kind, model ORDER BY kind, model"
            ).fetchall()
        return {
            "path": str(self.path),
            "entries": sum(row[2] for row in rows),
            "bytes": self.path.stat().st_size if self.path.exists() else 0,
            "by_model": [
                {"kind": r[0], "model": r[1], "entries": r[2], "value_bytes": r[3] or 0}
                for r in rows
            ],
        }

    def clear(self) -> int:
        with self._lock:
            removed = self._db.execute("DELETE FROM entries").rowcount
            self._db.commit()
            self._db.execute("VACUUM")
        return removed

    def close(self) -> None:
        with self._lock:
            self._db.close()


def open_cache(path: str | Path | None = None, *, replay_only: bool = False) -> ResponseCache:
    """The response cache at `path`: a `postgresql://` URL (or, with no path, one in
    `ASSAY_CACHE_URL`) is the PostgreSQL cache a cluster shares, anything else an SQLite file
    (by default `default_cache_path()`)."""
    chosen = path if path is not None else os.environ.get("ASSAY_CACHE_URL")
    if isinstance(chosen, str) and chosen.split("://", 1)[0].lower() in _DATABASE_SCHEMES:
        from assay.models.cache_postgres import PostgresResponseCache

        return PostgresResponseCache(chosen, replay_only=replay_only)
    return ResponseCache(path, replay_only=replay_only)


class AnswerStore(Protocol):
    """What a model reads and writes its cached answers through: a `ResponseCache` (SQLite or
    PostgreSQL) or a caller's key-value store wrapped as a `KeyValueCache`."""

    def get_response(self, key: str) -> ModelResponse | None: ...
    def put_response(self, key: str, model: str, response: ModelResponse) -> None: ...
    def get_vector(self, key: str) -> list[float] | None: ...
    def put_vector(self, key: str, model: str, vector: list[float]) -> None: ...
    def get_meta(self, name: str) -> str | None: ...
    def put_meta(self, name: str, value: str) -> None: ...


class KeyValueCache:
    """Any key-value store with `get(key)`, `set(key, value)` and `has_key(key)` (Ragas' CacheInterface
    among them) used as the response cache: answers are stored as JSON text under `assay:` keys."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend

    def _read(self, key: str) -> Any:
        return self.backend.get(key) if self.backend.has_key(key) else None

    def get_response(self, key: str) -> ModelResponse | None:
        value = self._read("assay:chat:" + key)
        return ModelResponse.model_validate_json(value) if isinstance(value, str) else None

    def put_response(self, key: str, model: str, response: ModelResponse) -> None:
        self.backend.set("assay:chat:" + key, response.model_dump_json(exclude={"cached"}))

    def get_vector(self, key: str) -> list[float] | None:
        value = self._read("assay:embedding:" + key)
        return json.loads(value) if isinstance(value, str) else None

    def put_vector(self, key: str, model: str, vector: list[float]) -> None:
        self.backend.set("assay:embedding:" + key, json.dumps(vector))

    def get_meta(self, name: str) -> str | None:
        value = self._read("assay:meta:" + name)
        return value if isinstance(value, str) else None

    def put_meta(self, name: str, value: str) -> None:
        self.backend.set("assay:meta:" + name, value)


__all__ = [
    "AnswerStore",
    "CacheMiss",
    "KeyValueCache",
    "ResponseCache",
    "default_cache_path",
    "embedding_key",
    "open_cache",
    "request_key",
]
