"""Retention: a thread beside the job worker that deletes logged traces older than each project's
horizon: the project's own `retention_days` when its admins set one (API or settings page), else
the server's default (`assay serve --retention-days N`, or `ASSAY_RETENTION_DAYS`; none: such
projects keep every trace). Every `interval` seconds it reads the horizons and deletes each
project's older traces `batch` at a time
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
from assay.platform.server.storage.retention import RetentionRepo, horizons

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
    """Deletes each project's traces older than its horizon (its own, else `days`; None: only
    projects with one of their own), in batches, in a thread of its own."""

    def __init__(
        self,
        state: Any,
        days: float | None,
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
        """Delete every trace created longer before `now` than its project's horizon (of the
        projects `only`, or all), batch by batch; returns how many. Stops early (between
        batches) when the thread is asked to stop."""
        now = now or datetime.now(timezone.utc)
        with self.state.transaction() as session:
            found = horizons(session, self.days)
        deleted = 0
        for project_id, days in found.items():
            if only is not None and project_id not in only:
                continue
            cutoff = now - timedelta(days=days)
            done = 0
            while not self._stop.is_set():
                with self.state.transaction() as session:
                    n = RetentionRepo(session, project_id).delete_batch(cutoff, self.batch)
                done += n
                self.deleted += n
                if n < self.batch:
                    break
                self._rest()
            if done:
                log.info(
                    "retention: deleted %d traces of project %d created before %s",
                    done,
                    project_id,
                    cutoff,
                )
            deleted += done
        self.sweeps += 1
        return deleted


__all__ = ["ENV", "Retention", "retention_days"]
