"""A trace's spans as a waterfall: one row per span, in tree order (a child under its parent,
siblings by start), each with its depth and a bar placed by its start offset and duration
relative to the whole trace, drawn server-side as SVG attributes (the page's CSP allows no
inline style). Times a span lacks are left out: its bar is not drawn and its duration not shown,
rather than guessed."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

WIDTH = 1000  # the SVG's user units across the trace's duration
MIN_BAR = 2  # a bar never narrower than this (a 0 ms span stays visible)
DEPTH_SHOWN = 8  # indentation levels the stylesheet draws; deeper spans indent no further


@dataclass
class SpanRow:
    span: dict[str, Any]
    depth: int
    start_ms: float | None
    duration_ms: float | None
    x: int = 0  # the bar, in units of WIDTH
    width: int = 0
    children: int = 0

    @property
    def kind(self) -> str:
        return str(self.span.get("kind") or "other")

    @property
    def name(self) -> str:
        return str(self.span.get("name") or "")

    @property
    def error(self) -> str | None:
        error = self.span.get("error")
        return str(error) if error else None

    @property
    def indent(self) -> int:
        return min(self.depth, DEPTH_SHOWN)

    @property
    def drawn(self) -> bool:
        return self.start_ms is not None and self.duration_ms is not None


@dataclass
class Waterfall:
    rows: list[SpanRow] = field(default_factory=list)
    total_ms: float | None = None  # from the first start to the last end
    width: int = WIDTH

    def ticks(self, count: int = 4) -> list[tuple[int, str]]:
        """(x, label) of evenly spaced time marks across the trace."""
        if not self.total_ms:
            return []
        return [
            (round(WIDTH * i / count), duration_label(self.total_ms * i / count))
            for i in range(count + 1)
        ]


def _time(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def duration_label(ms: float) -> str:
    """A duration as people read it: `850 ms`, `1.25 s`, `2 min 5 s`."""
    if ms < 1:
        return f"{ms:.2f} ms"
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.2f} s"
    minutes, seconds = divmod(round(ms / 1000), 60)
    return f"{minutes} min {seconds} s"


def waterfall(spans: Any) -> Waterfall:
    """The waterfall of a trace's spans (a list of span dicts as stored)."""
    spans = [s for s in spans or [] if isinstance(s, dict)]
    if not spans:
        return Waterfall()
    times = {id(s): (_time(s.get("started_at")), _time(s.get("ended_at"))) for s in spans}
    starts = [start for start, _ in times.values() if start is not None]
    ends = [end for _, end in times.values() if end is not None]
    origin = min(starts) if starts else None
    total = (max(ends) - origin).total_seconds() * 1000 if origin and ends else None
    if total is not None and total < 0:
        total = None

    ids = {s.get("id") for s in spans}
    children: dict[Any, list[dict[str, Any]]] = {}
    roots = []

    def by_start(span: dict[str, Any]) -> tuple[int, float]:
        # by the time itself: "…:00Z" sorts after "…:00.250Z" as text
        start = times[id(span)][0]
        return (0, start.timestamp()) if start is not None else (1, 0.0)

    for span in sorted(spans, key=by_start):
        parent = span.get("parent_id")
        if parent and parent in ids and parent != span.get("id"):
            children.setdefault(parent, []).append(span)
        else:
            roots.append(span)

    rows: list[SpanRow] = []
    seen: set[int] = set()

    def visit(span: dict[str, Any], depth: int) -> None:
        if id(span) in seen:  # a cycle of parent ids: each span once
            return
        seen.add(id(span))
        start, end = times[id(span)]
        offset = (start - origin).total_seconds() * 1000 if start and origin else None
        duration = (end - start).total_seconds() * 1000 if start and end else None
        if duration is not None and duration < 0:
            duration = None
        row = SpanRow(span, depth, offset, duration)
        kids = children.get(span.get("id"), [])
        row.children = len(kids)
        if row.drawn and total:
            assert offset is not None and duration is not None
            row.x = min(WIDTH - MIN_BAR, max(0, round(WIDTH * offset / total)))
            row.width = max(MIN_BAR, min(WIDTH - row.x, round(WIDTH * duration / total)))
        elif row.drawn:  # every span took no time: full-width bars
            row.width = WIDTH
        rows.append(row)
        for child in kids:
            visit(child, depth + 1)

    for root in roots:
        visit(root, 0)
    for span in spans:  # spans only reachable through a cycle
        if id(span) not in seen:
            visit(span, 0)
    return Waterfall(rows, total)


__all__ = ["SpanRow", "Waterfall", "duration_label", "waterfall"]
