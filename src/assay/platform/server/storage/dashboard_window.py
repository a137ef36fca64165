"""The time range a dashboard looks at (`Window`): from the query's `range` (1h, 1d, 7d, 30d),
or `since` and `until` (ISO 8601 times or dates; a time without an offset is UTC), and its
buckets: hours for a range of a day or less, days otherwise, every bucket of the range listed so
an empty one shows as zero. A bad value is a 422 naming its field. No queries here.

Bucket keys are the UTC start of the bucket written as the database groups it
(`YYYY-MM-DD HH` for hours, `YYYY-MM-DD` for days; `storage/dashboard.py` builds the same text
in SQL), so the figures of a bucket are found by its key."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Literal

from assay.platform.server.errors import invalid

RANGES = {
    "1h": timedelta(hours=1),
    "1d": timedelta(days=1),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}
DEFAULT_RANGE = "7d"
LONGEST = timedelta(days=400)  # at most 401 day buckets on a page or in an answer
HOURLY_UP_TO = timedelta(days=1)
KEY_FORMAT = {"hour": "%Y-%m-%d %H", "day": "%Y-%m-%d"}
STEP = {"hour": timedelta(hours=1), "day": timedelta(days=1)}

Unit = Literal["hour", "day"]


@dataclass(frozen=True)
class Window:
    """Traces created at `since` or later and before `until` (UTC), in `unit` buckets."""

    since: datetime
    until: datetime
    unit: Unit
    range: str | None = None  # the named range it came from, if any

    def starts(self) -> list[datetime]:
        """The start of every bucket that overlaps the window, oldest first."""
        first = self.since.replace(minute=0, second=0, microsecond=0)
        if self.unit == "day":
            first = first.replace(hour=0)
        found, moment = [], first
        while moment < self.until:
            found.append(moment)
            moment += STEP[self.unit]
        return found

    def key(self, start: datetime) -> str:
        return start.strftime(KEY_FORMAT[self.unit])


def parse_moment(text: str, field: str) -> datetime:
    """An ISO 8601 time (a `Z` or an offset; none is UTC) or a date (its midnight UTC)."""
    raw = text.strip()
    try:
        if len(raw) == 10:
            day = date.fromisoformat(raw)
            return datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise invalid(
            field, f"{text!r} is not an ISO 8601 time (e.g. 2026-12-01T09:00:00Z) or date"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def window_of(range_: str | None, since: str | None, until: str | None, now: datetime) -> Window:
    """The window the query asks for: `range` ending at `until` (default now), or `since` to
    `until` (default now); nothing at all is the last 7 days."""
    if range_ is not None and range_ not in RANGES:
        raise invalid("range", f"must be one of {', '.join(RANGES)}, got {range_!r}")
    if range_ is not None and since:
        raise invalid("range", "give either range or since (with until), not both")
    end = parse_moment(until, "until") if until else now.astimezone(timezone.utc)
    if since:
        start = parse_moment(since, "since")
    else:
        range_ = range_ or DEFAULT_RANGE
        start = end - RANGES[range_]
    if start >= end:
        raise invalid("until", "must be later than since")
    if end - start > LONGEST:
        raise invalid("since", f"the range is at most {LONGEST.days} days long")
    unit: Unit = "hour" if end - start <= HOURLY_UP_TO else "day"
    return Window(start, end, unit, range_ if not since else None)


__all__ = ["DEFAULT_RANGE", "RANGES", "Window", "parse_moment", "window_of"]
