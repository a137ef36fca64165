"""Where the dashboard's volume and latency figures come from (`source_for`): the hourly rollups
(`rollups.py`) when the window holds many traces and no condition narrows it, else the traces
themselves (`DashboardRepo`, exact), under a time limit.

From the rollups (`RollupReader`): the window's whole UTC hours are read from `trace_rollups`
and `trace_latency_bins`; an hour at either end that the window covers in part (a 7-day range
ending now starts and ends inside an hour) from its traces, or from its rollups less the traces
of the rest of the hour, whichever is the smaller read (the hour being filled now: its rollups,
less nothing). Traces read here are binned as the rollups are. Counts, errors, tokens and cost are
then exact; latency percentiles are within `rollups.RELATIVE_ERROR` (0.99%) of the exact ones.
A condition can name any field (scores, text, metadata), which the rollups do not keep, so a
dashboard with a condition reads the traces; so does one whose window holds `EXACT_UP_TO`
traces or fewer (exact percentiles cost little there). Reading the traces stops after
`TIME_LIMIT_S` seconds with a 422 naming the condition (or the range) to narrow.

The rollups never count an experiment's published generations (`rollups.Part.experiment`), as
the dashboard leaves them out by default; a dashboard asked to include them
(`include_experiments`) reads the traces, under the same time limit.

The figures say which (`computed`: `from` "rollups" or "traces", and why)."""

from __future__ import annotations

import sqlite3
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import and_, func, or_, select, text
from sqlalchemy.exc import OperationalError

from assay.platform.server.errors import invalid
from assay.platform.server.storage import models
from assay.platform.server.storage.dashboard import PERCENTILES, DashboardRepo, Latency
from assay.platform.server.storage.dashboard_window import Window
from assay.platform.server.storage.rollups import (
    RELATIVE_ERROR,
    SUMS,
    hour_of,
    latency_bin,
    percentile,
)

EXACT_UP_TO = 5_000
TIME_LIMIT_S = 10.0
HOUR = timedelta(hours=1)
R, B, T = models.TraceRollup, models.TraceLatencyBin, models.LoggedTrace


@dataclass
class Volume:
    """A row of `DashboardRepo.volume`'s shape: a bucket and model's sums."""

    key: str
    model: str | None
    traces: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    with_cost: int = 0


class RollupReader:
    """`volume`, `latency` and `total` of a dashboard's window (no condition) from the rollups
    of its whole hours, and for each hour it covers in part, whichever costs less: the traces of
    the part, or the hour's rollups less the traces of the rest of the hour. The rest is taken
    when the part is over half the hour or reaches the present (the rest is then in the future,
    where no traces are), so the hour being filled now costs an empty index range."""

    def __init__(self, repo: DashboardRepo, now: datetime | None = None) -> None:
        self.repo, self.session, self.project_id = repo, repo.session, repo.project_id
        window, now = repo.window, now or datetime.now(timezone.utc)
        first = hour_of(window.since)
        self.start = first if first == window.since else first + HOUR
        self.end = hour_of(window.until)
        self.hours: list[datetime] = []  # part hours read from the rollups
        self.plus: list[DashboardRepo] = []  # traces added
        self.minus: list[DashboardRepo] = []  # traces taken away
        if self.start > self.end:  # inside one hour
            self.start = self.end = first
            parts = [(first, window.since, window.until)]
        else:
            parts = [(first, window.since, self.start), (self.end, self.end, window.until)]
        for hour, since, until in parts:
            if since >= until:
                continue
            if until - since <= HOUR / 2 and until < now:
                self.plus.append(self._part(since, until))
                continue
            self.hours.append(hour)
            for a, b in ((hour, since), (until, hour + HOUR)):
                if a < b:
                    self.minus.append(self._part(a, b))
        self._volume: list[Volume] | None = None

    def _part(self, since: datetime, until: datetime) -> DashboardRepo:
        return DashboardRepo(
            self.session, self.project_id, Window(since, until, self.repo.window.unit)
        )

    def _hours(self, model: Any, *columns: Any) -> Any:
        whole = and_(model.hour >= self.start, model.hour < self.end)
        where = or_(whole, model.hour.in_(self.hours)) if self.hours else whole
        return select(*columns).where(model.project_id == self.project_id, where)

    def total(self) -> int:
        """How many traces the window holds."""
        return sum(v.traces for v in self.volume())

    def volume(self) -> list[Volume]:
        if self._volume is not None:
            return self._volume
        found: dict[tuple[str, str | None], Volume] = {}
        key = self.repo.bucket(R.hour).label("key")
        columns = [func.sum(getattr(R, c)).label(c) for c in SUMS]
        rows = [
            (1, r)
            for r in self.session.execute(
                self._hours(R, key, R.model, *columns).group_by(key, R.model)
            )
        ]
        rows += [(1, r) for part in self.plus for r in part.volume()]
        rows += [(-1, r) for part in self.minus for r in part.volume()]
        for sign, row in rows:
            model = row.model or None
            entry = found.setdefault((row.key, model), Volume(row.key, model))
            entry.traces += sign * int(row.traces or 0)
            entry.errors += sign * int(row.errors or 0)
            entry.input_tokens += sign * int(row.input_tokens or 0)
            entry.output_tokens += sign * int(row.output_tokens or 0)
            entry.cost += sign * float(row.cost or 0.0)
            entry.with_cost += sign * int(row.with_cost or 0)
        self._volume = [v for v in found.values() if v.traces]
        return self._volume

    def latency(self) -> tuple[dict[str, Latency], Latency | None]:
        """The percentiles per bucket and of the whole window from the latency bins (the part
        hours' latencies binned here), within RELATIVE_ERROR of numpy's linear rule."""
        per_key: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        key = self.repo.bucket(B.hour).label("key")
        query = self._hours(B, key, B.bin, func.sum(B.n).label("n")).group_by(key, B.bin)
        for row in self.session.execute(query):
            per_key[row.key][int(row.bin)] += int(row.n)
        for sign, parts in ((1, self.plus), (-1, self.minus)):
            for part in parts:
                found = part._in_window(
                    part._columns(T, part.bucket(T.created_at).label("key"), T.latency_ms)
                ).where(T.latency_ms.is_not(None))
                for row in self.session.execute(found):
                    per_key[row.key][latency_bin(float(row.latency_ms))] += sign
        whole: dict[int, int] = defaultdict(int)
        buckets = {}
        for name, bins in per_key.items():
            bins = {i: n for i, n in bins.items() if n > 0}
            for index, n in bins.items():
                whole[index] += n
            if bins:
                buckets[name] = _latency(bins)
        return buckets, (_latency(whole) if sum(whole.values()) else None)


def _latency(bins: dict[int, int]) -> Latency:
    values = {p: percentile(bins, p) for p in PERCENTILES}
    return Latency(sum(bins.values()), {p: float(v or 0.0) for p, v in values.items()})


def source_for(repo: DashboardRepo, exact_up_to: int | None = None) -> tuple[Any, dict[str, Any]]:
    """What reads the window's volume and latency (the repo itself or a `RollupReader`), and
    the `computed` note the figures carry; `exact_up_to` defaults to `EXACT_UP_TO`."""
    if exact_up_to is None:
        exact_up_to = EXACT_UP_TO
    if repo.where is not None:
        return repo, {
            "from": "traces",
            "why": "a condition is matched against the traces themselves",
            "time_limit_s": TIME_LIMIT_S,
        }
    if repo.include_experiments:
        return repo, {
            "from": "traces",
            "why": "experiments' generations included: the rollups count production traces only",
            "time_limit_s": TIME_LIMIT_S,
        }
    reader = RollupReader(repo)
    total = reader.total()
    if total <= exact_up_to:
        return repo, {
            "from": "traces",
            "why": f"{total:,} traces in the range: read exactly",
            "time_limit_s": TIME_LIMIT_S,
        }
    return reader, {
        "from": "rollups",
        "why": f"{total:,} traces in the range: read from hourly rollups",
        "latency_tolerance": round(RELATIVE_ERROR, 4),
    }


@contextmanager
def time_limit(repo: DashboardRepo, seconds: float | None) -> Iterator[None]:
    """Stop the queries made in the block after `seconds` (None: no limit), answering a 422
    that names the condition (or the range) to narrow."""
    if seconds is None:
        yield
        return
    connection = repo.session.connection()
    raw: Any = None
    if repo.postgres:
        connection.execute(text(f"SET LOCAL statement_timeout = {int(seconds * 1000)}"))
    else:
        raw = connection.connection.driver_connection
        deadline = time.monotonic() + seconds
        raw.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        yield
    except OperationalError as exc:
        if not _timed_out(exc):
            raise
        field = "condition" if repo.where is not None else "range"
        raise invalid(
            field,
            f"reading the traces of this range took longer than {seconds:g} s; "
            "choose a shorter range or a narrower condition",
        ) from None
    finally:  # PostgreSQL's limit ends with the transaction (SET LOCAL)
        if raw is not None:
            raw.set_progress_handler(None, 0)


def _timed_out(exc: OperationalError) -> bool:
    original = exc.orig
    if isinstance(original, sqlite3.OperationalError):
        return "interrupted" in str(original)
    return type(original).__name__ == "QueryCanceled"


__all__ = ["EXACT_UP_TO", "TIME_LIMIT_S", "RollupReader", "Volume", "source_for", "time_limit"]
