"""The trace explorer's pages: summaries filtered by a condition and quick filters (time range,
model, status, a score below a threshold, a session), sorted by arrival, latency or tokens, and
paged both ways.

Newest first (the default) pages by arrival number in either direction (`before` for older,
`after` for newer), with the bounded scan of `TraceRepo.summaries` when a condition is given.
Sorted by latency or tokens, pages are offsets (at most `OFFSET_MAX` deep) over the per-project
index of that column; a trace without the measure is left out of such a sort, since it cannot be
placed in it. Counting is bounded (`TraceRepo.count(most=...)`)."""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, select

from assay.platform.server.errors import invalid
from assay.platform.server.storage import models
from assay.platform.server.storage.repos import decode_cursor
from assay.platform.server.storage.trace_fields import latest_score
from assay.platform.server.storage.traces import TraceRepo

T = models.LoggedTrace
SORTS = {"created": T.seq, "latency": T.latency_ms, "tokens": T.tokens}
STATUSES = ("ok", "error")
SOURCES = ("traffic", "experiments")  # where a trace came from: the explorer's quick filter
OFFSET_MAX = 10_000


@dataclass(frozen=True)
class TraceFilter:
    """What the explorer narrows the traces to; every part is optional."""

    condition: Any = None  # a compiled condition (trace_fields.compile_condition)
    since: datetime | None = None
    until: datetime | None = None
    model: str | None = None
    status: str | None = None  # "ok" (no error) or "error"
    score_below: tuple[str, float] | None = None  # (criterion, x): its latest score < x
    session_id: str | None = None
    # "traffic" (not an experiment's published generation) or "experiments"
    source: str | None = None

    def where(self) -> Any:
        """The WHERE expression of every part given (None: no filter)."""
        parts = [] if self.condition is None else [self.condition]
        if self.since is not None:
            parts.append(T.created_at >= self.since)
        if self.until is not None:
            parts.append(T.created_at < self.until)
        if self.model:
            parts.append(T.model == self.model)
        if self.status == "error":
            parts.append(T.error.is_not(None))
        elif self.status == "ok":
            parts.append(T.error.is_(None))
        elif self.status is not None:
            raise invalid("status", f"must be one of {', '.join(STATUSES)}, not {self.status!r}")
        if self.score_below is not None:
            criterion, below = self.score_below
            parts.append(latest_score(criterion) < below)
        if self.session_id:
            parts.append(T.session_id == self.session_id)
        if self.source == "traffic":
            parts.append(T.experiment_id.is_(None))
        elif self.source == "experiments":
            parts.append(T.experiment_id.is_not(None))
        elif self.source is not None:
            raise invalid("source", f"must be one of {', '.join(SOURCES)}, not {self.source!r}")
        return and_(*parts) if parts else None


@dataclass
class TracePage:
    """One page: its rows, and where the neighbouring pages start (None: there is none).
    `older`/`newer` are arrival cursors when sorted newest first, else offsets as text.
    `partial`: a bounded scan ended before the page was full (older traces remain)."""

    rows: builtins.list[Any] = field(default_factory=list)
    older: str | None = None
    newer: str | None = None
    partial: bool = False


class TraceExplorer(TraceRepo):
    def page(
        self,
        filters: TraceFilter,
        *,
        limit: int,
        sort: str = "created",
        descending: bool = True,
        before: str | None = None,
        after: str | None = None,
        offset: int = 0,
        scan: int | None = None,
    ) -> TracePage:
        if sort not in SORTS:
            raise invalid("sort", f"must be one of {', '.join(SORTS)}, not {sort!r}")
        where = filters.where()
        if sort == "created" and descending:
            return self._by_arrival(where, limit, before, after, scan)
        return self._by_offset(where, limit, SORTS[sort], descending, offset)

    def _by_arrival(
        self, where: Any, limit: int, before: str | None, after: str | None, scan: int | None
    ) -> TracePage:
        above = decode_cursor(after)
        if above is None:
            rows, older = self.summaries(limit=limit, cursor=before, where=where, scan=scan)
            below = decode_cursor(before)
            newer = None
            if below is not None:  # a page below the newest: newer ones start above it
                newer = str(rows[0].seq) if rows else str(below - 1)
            partial = older is not None and len(rows) < limit
            return TracePage(rows, older, newer, partial)
        query = self._summary_select().where(T.seq > above)
        if where is not None:
            query = query.where(where)
        found = builtins.list(self.session.execute(query.order_by(T.seq).limit(limit + 1)))
        rows = builtins.list(reversed(found[:limit]))
        newer = str(rows[0].seq) if len(found) > limit else None
        older = str(rows[-1].seq) if rows else str(above + 1)
        return TracePage(rows, older, newer)

    def _by_offset(
        self, where: Any, limit: int, column: Any, descending: bool, offset: int
    ) -> TracePage:
        if offset < 0 or offset > OFFSET_MAX:
            raise invalid(
                "offset", f"sorted pages go {OFFSET_MAX:,} traces deep; narrow the filter"
            )
        query = self._summary_select()
        if where is not None:
            query = query.where(where)
        if column is not T.seq:
            query = query.where(column.is_not(None))
        order = [column.desc(), T.seq.desc()] if descending else [column.asc(), T.seq.asc()]
        found = builtins.list(
            self.session.execute(query.order_by(*order).offset(offset).limit(limit + 1))
        )
        return TracePage(
            found[:limit],
            older=str(offset + limit) if len(found) > limit else None,
            newer=str(max(0, offset - limit)) if offset > 0 else None,
        )

    def recent_models(self, look_at: int = 1000) -> builtins.list[str]:
        """The models of the newest `look_at` traces (the model filter's suggestions), bounded
        so that it never reads the whole table."""
        recent = self._columns(T, T.model).order_by(T.seq.desc()).limit(look_at).subquery()
        query = select(recent.c.model).distinct().where(recent.c.model.is_not(None))
        return sorted(self.session.scalars(query))


__all__ = [
    "OFFSET_MAX",
    "SORTS",
    "SOURCES",
    "STATUSES",
    "TraceExplorer",
    "TraceFilter",
    "TracePage",
]
