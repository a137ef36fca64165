"""Charts as inline SVG: score histograms and label counts, one colour per run.

This module lays a chart out (bars, ticks, their tooltips and labels as plain data); the markup is
`templates/chart.svg.j2`, whose engine escapes every text. No scripts, no external references.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from assay.report.stats import format_number, histogram

COLOURS = ("#3566c9", "#e07b39", "#2f9a5a", "#a24bb8", "#c23b4a", "#6b7280")
WIDTH, HEIGHT = 360, 170
LEFT, RIGHT, TOP, BOTTOM = 34, 8, 10, 34


def colour(index: int) -> str:
    return COLOURS[index % len(COLOURS)]


@dataclass(frozen=True)
class Bar:
    x: str
    y: str
    width: str
    height: str
    fill: str
    tip: str


@dataclass(frozen=True)
class Tick:
    x: str
    text: str


@dataclass(frozen=True)
class Chart:
    title: str
    max_count: int
    bars: list[Bar] = field(default_factory=list)
    ticks: list[Tick] = field(default_factory=list)  # labels under the x axis
    axis_label: str | None = None  # under the ticks
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = WIDTH - RIGHT
    top: int = TOP
    bottom: int = HEIGHT - BOTTOM
    centre: str = f"{LEFT + (WIDTH - LEFT - RIGHT) / 2:.1f}"


def _bar(x: float, height: float, width: float, which: int, tip: str) -> Bar:
    y = TOP + (HEIGHT - TOP - BOTTOM) - height
    return Bar(f"{x:.1f}", f"{y:.1f}", f"{width:.1f}", f"{height:.1f}", colour(which), tip)


def histogram_chart(
    series: list[tuple[str, list[float]]], title: str, bins: int = 10
) -> Chart | None:
    """Grouped bars: for each bin, one bar per run (`series` = [(run name, numbers)])."""
    pooled = [value for _, numbers in series for value in numbers]
    edges, _ = histogram(pooled, bins)
    if not edges:
        return None
    start, width = edges[0][0], edges[0][1] - edges[0][0]
    counts = []
    for _, numbers in series:
        found = [0] * len(edges)
        for value in numbers:
            found[min(len(edges) - 1, max(0, int(round((value - start) / width, 9))))] += 1
        counts.append(found)
    top = max(max(found) for found in counts) or 1
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_width / len(edges)
    bar = max(1.0, (slot - 2) / len(series))
    bars = []
    for position, (low, high, _) in enumerate(edges):
        for which, (name, _) in enumerate(series):
            count = counts[which][position]
            tip = f"{name}: {format_number(low, 2)} to {format_number(high, 2)}: {count} row(s)"
            bars.append(
                _bar(
                    LEFT + position * slot + 1 + which * bar,
                    plot_height * count / top,
                    bar,
                    which,
                    tip,
                )
            )
    ticks = [
        Tick(f"{LEFT + position * slot:.1f}", format_number(start + position * width, 2))
        for position in range(0, len(edges) + 1, max(1, len(edges) // 5))
    ]
    return Chart(title, top, bars, ticks, axis_label="score")


def labels_chart(series: list[tuple[str, Counter]], title: str) -> Chart | None:
    """Vertical bars per label (most frequent first), one bar per run."""
    labels = list(
        dict.fromkeys(label for _, counts in series for label, _ in counts.most_common())
    )[:12]
    if not labels:
        return None
    top = max(counts[label] for _, counts in series for label in labels) or 1
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_width / len(labels)
    bar = max(1.0, (slot - 6) / len(series))
    bars, ticks = [], []
    for position, label in enumerate(labels):
        for which, (name, counts) in enumerate(series):
            count = counts[label]
            bars.append(
                _bar(
                    LEFT + position * slot + 3 + which * bar,
                    plot_height * count / top,
                    bar,
                    which,
                    f"{name}: {label}: {count} row(s)",
                )
            )
        shown = label if len(label) <= 14 else label[:13] + "…"
        ticks.append(Tick(f"{LEFT + (position + 0.5) * slot:.1f}", shown))
    return Chart(title, top, bars, ticks)


__all__ = ["COLOURS", "Bar", "Chart", "Tick", "colour", "histogram_chart", "labels_chart"]
