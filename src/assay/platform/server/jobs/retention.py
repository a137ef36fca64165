"""Retention: a thread beside the job worker that deletes logged traces older than N days
(`assay serve --retention-days N`, or `ASSAY_RETENTION_DAYS`). Every `interval` seconds it looks
for projects holding older traces and deletes them `batch` at a time
(`storage/retention.RetentionRepo.delete_batch`: one short transaction per batch, which also takes
the traces out of the dashboard's rollups), pausing `pause` seconds between batches so ingest's
transactions are never kept waiting for more than one batch (on SQLite one writer at a time)."""

from __future__ import annotations

import logging
import os
import threading
from datetime import datetime, timedelta, timezone
from typing import Any

from assay.errors import UsageError
from assay.platform.server.storage.retention import RetentionRepo, projects_with_traces_before

log = logging.getLogger("assay.platform.retention")
ENV = "ASSAY_RETENTION_DAYS"
BATCH = 500
PAUSE_S = 0.05
INTERVAL_S = 300.0


def retention_days(value: float | None) -> float | None:
    """The setting: `value` if given, else `ASSAY_RETENTION_DAYS`, else None (keep every
    trace). A value that is not a positive number is a UsageError naming where it came from."""
    source = "--retention-days"
    if value is None:
        raw = os.environ.get(ENV, "").strip()
        if not raw:
            return None
        source = ENV
        try:
            value = float(raw)
        except ValueError:
            raise UsageError(f"{ENV} must be a number of days, got {raw!r}") from None
    if not value > 0 or value != value or value == float("inf"):
        raise UsageError(f"{source} must be a positive number of days, got {value!r}")
    return value


class Retention:
    """Deletes traces older than `days`, in batches, in a thread of its own."""

    def __init__(
        self,
        state: Any,
        days: float,
        *,
        batch: int = BATCH,
        pause: float = PAUSE_S,
        interval: float = INTERVAL_S,
    ) -> None:
        self.state, self.days = state, days
        self.batch, self.pause, self.interval = batch, pause, interval
        self.deleted = 0  # traces deleted since start (read by tests and the log)
        self.sweeps = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Retention:
        self._thread = threading.Thread(target=self._loop, name="assay-retention", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.sweep()
            except Exception:  # the database is away for a moment: try again next time
                log.exception("retention: deleting old traces failed")
            self._stop.wait(self.interval)

    def _rest(self) -> None:
        """Between two batches (the last one committed): let ingest's transactions in."""
        self._stop.wait(self.pause)

    def sweep(self, now: datetime | None = None, only: list[int] | None = None) -> int:
        """Delete every trace created more than `days` before `now` (of the projects `only`, or
        all), batch by batch; returns how many. Stops early (between batches) when the thread
        is asked to stop."""
        cutoff = (now or datetime.now(timezone.utc)) - timedelta(days=self.days)
        with self.state.transaction() as session:
            projects = projects_with_traces_before(session, cutoff)
        if only is not None:
            projects = [p for p in projects if p in only]
        deleted = 0
        for project_id in projects:
            while not self._stop.is_set():
                with self.state.transaction() as session:
                    n = RetentionRepo(session, project_id).delete_batch(cutoff, self.batch)
                deleted += n
                self.deleted += n
                if n < self.batch:
                    break
                self._rest()
        self.sweeps += 1
        if deleted:
            log.info("retention: deleted %d traces created before %s", deleted, cutoff)
        return deleted


__all__ = ["ENV", "Retention", "retention_days"]
