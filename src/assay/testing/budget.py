"""A judge budget shared by every process of a pytest run (`--assay-budget=USD` or `calls:N`).

The counts live in one small SQLite file, so the workers of `pytest -n` draw on one budget.
A call is reserved before it is made (`BEGIN IMMEDIATE` makes the check-and-count atomic across
processes), so `calls:N` is never exceeded; a USD budget is checked before each call and charged
with the call's cost after it, so it can be passed by at most the calls already in flight.
Retried attempts are calls: each counts. Answers read from the cache are free and not counted.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from assay._util.sqlite_wal import use_wal
from assay.errors import BudgetExhausted
from assay.models.providers.base import Provider
from assay.models.types import ModelRequest, ModelResponse
from assay.models.usage import Price


class SharedBudget:
    def __init__(
        self, path: str | Path, *, max_calls: int | None = None, max_usd: float | None = None
    ) -> None:
        self.path = Path(path)
        self.max_calls = max_calls
        self.max_usd = max_usd
        self._lock = threading.Lock()
        self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        use_wal(db)  # the workers of `pytest -n` open the new file at once
        db.execute(
            "CREATE TABLE IF NOT EXISTS spent (id INTEGER PRIMARY KEY CHECK (id = 0), "
            "calls INTEGER NOT NULL, usd REAL NOT NULL)"
        )
        db.execute("INSERT OR IGNORE INTO spent VALUES (0, 0, 0.0)")
        return db

    def describe(self) -> str:
        if self.max_calls is not None:
            return f"calls:{self.max_calls}"
        return f"${self.max_usd:g}"

    def used(self) -> tuple[int, float]:
        with self._lock:
            calls, usd = self._db.execute("SELECT calls, usd FROM spent").fetchone()
        return int(calls), float(usd)

    def reserve(self) -> None:
        """Count one call, or raise `BudgetExhausted` (and count nothing) if none is left."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                calls, usd = self._db.execute("SELECT calls, usd FROM spent").fetchone()
                if self.max_calls is not None and calls >= self.max_calls:
                    raise BudgetExhausted(
                        f"assay budget calls:{self.max_calls} used up ({calls} judge calls made "
                        "in this pytest run); no call was made"
                    )
                if self.max_usd is not None and usd >= self.max_usd:
                    raise BudgetExhausted(
                        f"assay budget ${self.max_usd:g} used up (${usd:.4f} spent in this pytest "
                        "run); no call was made"
                    )
                self._db.execute("UPDATE spent SET calls = calls + 1")
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def charge(self, usd: float) -> None:
        if usd:
            with self._lock:
                self._db.execute("UPDATE spent SET usd = usd + ?", (usd,))

    def close(self) -> None:
        with self._lock:
            self._db.close()


class BudgetedProvider(Provider):
    """A provider whose every call is reserved against a `SharedBudget` first."""

    def __init__(self, inner: Provider, budget: SharedBudget, price: Price | None) -> None:
        self.inner = inner
        self.budget = budget
        self._price = price
        self.name = inner.name
        self.model = inner.model
        self.profile = inner.profile
        self.price = inner.price

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    def endpoint_address(self) -> dict[str, Any]:
        return self.inner.endpoint_address()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.budget.reserve()
        response = await self.inner.complete(request)
        if self._price is not None:
            self.budget.charge(
                self._price.cost(response.usage.input_tokens, response.usage.output_tokens)
            )
        return response

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        self.budget.reserve()
        return await self.inner.embed(texts)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:  # provider-specific attributes (base_url, ...)
        return getattr(self.inner, name)


__all__ = ["BudgetedProvider", "SharedBudget"]
