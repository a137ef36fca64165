"""What the traces table was asked for, read from its query string: the condition, a time range
(a preset, or a custom from/until), the quick filters (model, status, a score below x, traffic or
experiments' generations), the sort
and the page position. A value the page cannot use becomes a problem shown beside the form
(never a 500), naming the field; `url(...)` writes the links of sorting and paging with every
other choice kept."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import urlencode

from assay.platform.server.storage.trace_pages import (
    OFFSET_MAX,
    SORTS,
    SOURCES,
    STATUSES,
    TraceFilter,
)

RANGES = {
    "1h": timedelta(hours=1),
    "24h": timedelta(days=1),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}
RANGE_NAMES = {"": "all time", "1h": "last hour", "24h": "last 24 hours", "7d": "last 7 days"}
RANGE_NAMES.update({"30d": "last 30 days", "custom": "custom"})
TEXT_MAX = 200


def _instant(text: str, name: str, problems: list[str]) -> datetime | None:
    """A datetime-local field's value (read as UTC), else a problem naming the field."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        problems.append(f"{name}: not a date and time (YYYY-MM-DDTHH:MM): {text[:40]!r}")
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


@dataclass
class ExplorerQuery:
    condition: str = ""
    range: str = ""
    since: str = ""
    until: str = ""
    model: str = ""
    status: str = ""
    source: str = ""  # "traffic", "experiments" (published generations) or "" for both
    criterion: str = ""
    below: str = ""
    sort: str = "created"
    order: str = "desc"
    cursor: str = ""  # older than this arrival number
    after: str = ""  # newer than this arrival number
    offset: int = 0  # sorted by a measure: how many come before this page
    at: int = 0  # the position of this page's first trace (for "traces 51-100")
    problems: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, params: Any) -> ExplorerQuery:
        def text(name: str) -> str:
            return str(params.get(name) or "").strip()[:TEXT_MAX]

        query = cls(
            condition=str(params.get("condition") or ""),
            range=text("range"),
            since=text("since"),
            until=text("until"),
            model=text("model"),
            status=text("status"),
            source=text("source"),
            criterion=text("criterion"),
            below=text("below"),
            sort=text("sort") or "created",
            order=text("order") or "desc",
            cursor=text("cursor"),
            after=text("after"),
        )
        problems = query.problems
        if query.range and query.range not in RANGES and query.range != "custom":
            problems.append(f"range: one of {', '.join(RANGES)} or custom, not {query.range!r}")
            query.range = ""
        if query.status and query.status not in STATUSES:
            problems.append(f"status: one of {', '.join(STATUSES)}, not {query.status!r}")
            query.status = ""
        if query.source and query.source not in SOURCES:
            problems.append(f"source: one of {', '.join(SOURCES)}, not {query.source!r}")
            query.source = ""
        if query.sort not in SORTS:
            problems.append(f"sort: one of {', '.join(SORTS)}, not {query.sort!r}")
            query.sort = "created"
        if query.order not in ("asc", "desc"):
            problems.append(f"order: asc or desc, not {query.order!r}")
            query.order = "desc"
        for name in ("offset", "at"):
            raw = text(name)
            if not raw:
                continue
            if not raw.isdigit() or int(raw) > OFFSET_MAX:
                problems.append(f"{name}: a whole number up to {OFFSET_MAX:,}, not {raw!r}")
            else:
                setattr(query, name, int(raw))
        if query.below and not query.criterion:
            problems.append("criterion: name the score to compare with the threshold")
        if query.criterion and query.below:
            try:
                if not math.isfinite(float(query.below)):
                    raise ValueError
            except ValueError:
                problems.append(f"below: a number, not {query.below!r}")
        return query

    @property
    def keyset(self) -> bool:
        """Paged by arrival number (newest first), not by offset."""
        return self.sort == "created" and self.order == "desc"

    def trace_filter(self, condition: Any, now: datetime | None = None) -> TraceFilter:
        """The storage filter of these choices, `condition` being the compiled condition."""
        now = now or datetime.now(timezone.utc)
        since = until = None
        if self.range in RANGES:
            since = now - RANGES[self.range]
        elif self.range == "custom":
            since = _instant(self.since, "since", self.problems)
            until = _instant(self.until, "until", self.problems)
        score = None
        if self.criterion and self.below:
            try:
                score = (self.criterion, float(self.below))
            except ValueError:
                score = None
        return TraceFilter(
            condition=condition,
            since=since,
            until=until,
            model=self.model or None,
            status=self.status or None,
            score_below=score,
            source=self.source or None,
        )

    def params(self, **changes: Any) -> dict[str, str]:
        """The query string's fields (empty ones left out), with `changes` applied; a change of
        filter or sort starts again at the first page unless the change names a position."""
        moved = replace(self, problems=[], **changes)
        values = {
            "condition": moved.condition,
            "range": moved.range,
            "since": moved.since if moved.range == "custom" else "",
            "until": moved.until if moved.range == "custom" else "",
            "model": moved.model,
            "status": moved.status,
            "source": moved.source,
            "criterion": moved.criterion,
            "below": moved.below,
            "sort": "" if moved.sort == "created" else moved.sort,
            "order": "" if moved.order == "desc" else moved.order,
            "at": str(moved.at) if moved.at else "",
            "offset": str(moved.offset) if moved.offset else "",
            "after": moved.after,
            "cursor": moved.cursor,
        }
        return {k: v for k, v in values.items() if v}

    def url(self, base: str, **changes: Any) -> str:
        position = {"cursor": "", "after": "", "offset": 0, "at": 0}
        encoded = urlencode(self.params(**{**position, **changes}))
        return f"{base}?{encoded}" if encoded else base

    def sort_url(self, base: str, key: str) -> str:
        """The link of a column header: sort by it (largest first), or flip its order."""
        if self.sort == key:
            return self.url(base, sort=key, order="asc" if self.order == "desc" else "desc")
        return self.url(base, sort=key, order="desc")


__all__ = ["RANGES", "RANGE_NAMES", "ExplorerQuery"]
