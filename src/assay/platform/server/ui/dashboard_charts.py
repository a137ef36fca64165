"""The dashboard's charts laid out as plain data for an inline SVG (drawn by
`templates/fragments/svg_chart.html`, whose every text is escaped): bars stacked over time,
lines over time with an optional interval band, and horizontal bars per name. No script, no
request: the page stays within its Content-Security-Policy and draws without JavaScript.

Like `assay.report.svg` (the report's histograms, whose `Bar` this reuses), a module lays a chart
out and a template writes the markup; every mark carries its figure as a tooltip (`<title>`), and every chart has a
text title, so the numbers can be read without seeing the chart."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

from assay.report.svg import Bar  # the report's bar: position, size, colour and tooltip

COLOURS = ("#3461c1", "#e07b39", "#2f9a5a", "#a24bb8", "#b42318", "#6b7280")
ERROR = "#b42318"
WIDTH, HEIGHT = 520, 210
LEFT, RIGHT, TOP, BOTTOM = 54, 14, 12, 30


def colour(index: int) -> str:
    return COLOURS[index % len(COLOURS)]


def short(value: float | None, unit: str = "", *, compact: bool = False) -> str:
    """A figure for a tick or a tooltip: 1.2k, 3.4M, 0.012, 640 (`compact`: 1.9k for 1871)."""
    if value is None:
        return "none"
    size = abs(value)
    if size >= 1e6:
        text = f"{value / 1e6:.3g}M"
    elif size >= (1e3 if compact else 1e4):
        text = f"{value / 1e3:.3g}k"
    elif size >= 100 or value == int(value):
        text = f"{value:.0f}"
    else:
        text = f"{value:.3g}"
    return text + unit


def nice_span(low: float, high: float) -> tuple[float, float]:
    """[low, high] widened to whole steps of a round size (a quarter of the span, rounded up to
    1, 2 or 5 times a power of ten), so the ticks read as round numbers."""
    step = nice_top((high - low) / 4)
    return math.floor(low / step + 1e-9) * step, math.ceil(high / step - 1e-9) * step


def nice_top(top: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten at or above `top` (1 for nothing)."""
    if top <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(top))
    return next(step * power for step in (1, 2, 5, 10) if step * power >= top)


@dataclass(frozen=True)
class Line:
    points: str
    stroke: str
    name: str


@dataclass(frozen=True)
class Dot:
    cx: str
    cy: str
    fill: str
    tip: str


@dataclass(frozen=True)
class Tick:
    x: str
    y: str
    text: str
    anchor: str = "middle"  # for the x axis; y-axis ticks are drawn right-aligned


@dataclass
class Chart:
    title: str
    chart_id: str
    rects: list[Bar] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    bands: list[Line] = field(default_factory=list)  # filled polygons (intervals)
    dots: list[Dot] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)
    y_ticks: list[Tick] = field(default_factory=list)
    labels: list[Tick] = field(default_factory=list)  # texts in the plot (a bar's name)
    legend: list[tuple[str, str]] = field(default_factory=list)  # (colour, name)
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = WIDTH - RIGHT
    top: int = TOP
    bottom: int = HEIGHT - BOTTOM
    empty: str = ""  # said instead of the chart when there is nothing to draw


def _f(value: float) -> str:
    return f"{value:.1f}"


class _Frame:
    """The plot area over `count` buckets and a y range [low, high]."""

    def __init__(self, count: int, low: float, high: float) -> None:
        self.slot = (WIDTH - RIGHT - LEFT) / max(1, count)
        self.low, self.high = low, high

    def x(self, index: int) -> float:  # the middle of bucket `index`
        return LEFT + (index + 0.5) * self.slot

    def y(self, value: float) -> float:
        span = (self.high - self.low) or 1.0
        return HEIGHT - BOTTOM - (value - self.low) / span * (HEIGHT - BOTTOM - TOP)

    def y_ticks(self, unit: str) -> list[Tick]:
        middle = (self.low + self.high) / 2
        return [
            Tick(_f(LEFT - 5), _f(self.y(v) + 4), short(v, unit, compact=True), "end")
            for v in (self.low, middle, self.high)
        ]


def _time_label(start: datetime, unit: str) -> str:
    return start.strftime("%H:00" if unit == "hour" else "%m-%d")


def _x_ticks(frame: _Frame, starts: list[datetime], unit: str) -> list[Tick]:
    every = max(1, math.ceil(len(starts) / 7))
    return [
        Tick(_f(frame.x(i)), _f(HEIGHT - BOTTOM + 16), _time_label(start, unit))
        for i, start in enumerate(starts)
        if i % every == 0
    ]


def _when(start: datetime, unit: str) -> str:
    return start.strftime("%Y-%m-%d %H:00 UTC" if unit == "hour" else "%Y-%m-%d")


def stacked_bars(
    title: str,
    chart_id: str,
    starts: list[datetime],
    unit: str,
    stacks: list[tuple[str, str, list[float]]],
    value_unit: str = "",
) -> Chart:
    """One bar per bucket, its parts stacked (`stacks`: name, colour, a value per bucket)."""
    totals = [sum(values[i] for _, _, values in stacks) for i in range(len(starts))]
    frame = _Frame(len(starts), 0.0, nice_top(max(totals, default=0.0)))
    chart = Chart(title, chart_id, legend=[(c, n) for n, c, _ in stacks])
    width = max(1.0, frame.slot * 0.8)
    for i, start in enumerate(starts):
        base = 0.0
        for name, fill, values in stacks:
            if values[i] <= 0:
                continue
            y_top = frame.y(base + values[i])
            chart.rects.append(
                Bar(
                    _f(frame.x(i) - width / 2),
                    _f(y_top),
                    _f(width),
                    _f(frame.y(base) - y_top),
                    fill,
                    f"{_when(start, unit)}: {short(values[i], value_unit)} {name}",
                )
            )
            base += values[i]
    chart.x_ticks, chart.y_ticks = _x_ticks(frame, starts, unit), frame.y_ticks(value_unit)
    if not any(totals):
        chart.empty = "nothing in this range"
    return chart


def lines_over_time(
    title: str,
    chart_id: str,
    starts: list[datetime],
    unit: str,
    series: list[tuple[str, str, list[float | None]]],
    value_unit: str = "",
    bands: list[tuple[str, list[float | None], list[float | None]]] | None = None,
    from_zero: bool = True,
) -> Chart:
    """A line per series (a gap where a bucket has no value; a lone value is a dot) and, per
    `bands` entry (colour, lows, highs), the interval as a shaded band."""
    seen = [v for _, _, values in series for v in values if v is not None]
    seen += [v for _, lows, highs in bands or [] for v in [*lows, *highs] if v is not None]
    low = 0.0 if from_zero or not seen else min(seen)
    high = nice_top(max(seen, default=0.0)) if from_zero else max(seen, default=1.0)
    if high - low < 1e-9:
        low, high = low - 0.5, high + 0.5
    if not from_zero:
        low, high = nice_span(low, high)
    frame = _Frame(len(starts), low, high)
    chart = Chart(title, chart_id, legend=[(c, n) for n, c, _ in series])
    for fill, lows, highs in bands or []:
        for run in _runs(
            [
                (lo, hi) if lo is not None and hi is not None else None
                for lo, hi in zip(lows, highs, strict=True)
            ]
        ):
            upper = [f"{_f(frame.x(i))},{_f(frame.y(hi))}" for i, (_lo, hi) in run]
            lower = [f"{_f(frame.x(i))},{_f(frame.y(lo))}" for i, (lo, _hi) in reversed(run)]
            chart.bands.append(Line(" ".join(upper + lower), fill, "interval"))
    for name, stroke, values in series:
        for run in _runs(values):
            if len(run) > 1:
                points = " ".join(f"{_f(frame.x(i))},{_f(frame.y(v))}" for i, v in run)
                chart.lines.append(Line(points, stroke, name))
        for i, value in enumerate(values):
            if value is not None:
                tip = f"{_when(starts[i], unit)}: {name} {short(value, value_unit)}"
                chart.dots.append(Dot(_f(frame.x(i)), _f(frame.y(value)), stroke, tip))
    chart.x_ticks, chart.y_ticks = _x_ticks(frame, starts, unit), frame.y_ticks(value_unit)
    if not seen:
        chart.empty = "nothing in this range"
    return chart


def _runs(values: list) -> list[list]:
    """The stretches of consecutive buckets that have a value, as (index, value) lists."""
    runs: list[list] = [[]]
    for i, value in enumerate(values):
        if value is None:
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append((i, value))
    return [run for run in runs if run]


def horizontal_bars(
    title: str, chart_id: str, rows: list[tuple[str, list[tuple[str, str, float]]]], unit: str = ""
) -> Chart:
    """A bar per row (name, its parts: part name, colour, value), the parts end to end in one
    bar, in the order given; each row's name is written above its bar, whole."""
    row_height = 34
    height = TOP + BOTTOM + row_height * max(1, len(rows))
    totals = [sum(v for _, _, v in parts) for _, parts in rows]
    top = nice_top(max(totals, default=0.0))
    left, right = 12, WIDTH - RIGHT - 12
    legend = list(dict.fromkeys((c, n) for _, parts in rows for n, c, _ in parts))
    chart = Chart(
        title,
        chart_id,
        legend=legend,
        height=height,
        left=left,
        right=right,
        bottom=height - BOTTOM,
    )
    for row, (name, parts) in enumerate(rows):
        y, x = TOP + row_height * row, float(left)
        chart.labels.append(Tick(_f(left + 2), _f(y + 11), name[:70], "start"))
        for part, fill, value in parts:
            if value <= 0:
                continue
            width = (right - left) * value / top
            tip = f"{name}: {short(value, unit)} {part}"
            chart.rects.append(Bar(_f(x), _f(y + 15), _f(max(width, 1.0)), "14", fill, tip))
            x += width
    chart.x_ticks = [
        Tick(_f(left + (right - left) * f), _f(height - BOTTOM + 16), short(top * f, unit), anchor)
        for f, anchor in ((0, "start"), (0.5, "middle"), (1, "end"))
    ]
    if not rows:
        chart.empty = "nothing in this range"
    return chart


__all__ = [
    "COLOURS",
    "ERROR",
    "Chart",
    "colour",
    "horizontal_bars",
    "lines_over_time",
    "nice_top",
    "short",
    "stacked_bars",
]
