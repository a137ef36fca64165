"""The compare page's charts laid out as data for an inline SVG (`templates/fragments/
compare_chart.html` writes the markup, every text escaped): one chart per criterion, on that
criterion's own scale (a 1-5 judge on 1-5, a yes/no judge on 0-1), a bar per cohort from the
bottom of the scale to its mean, the 95% interval as a whisker, the mean written above.

A mean at the bottom of the scale (a 0 on 0-1, a 1 on 1-5) is still drawn: a bar of at least
`STUB` px and its figure, never an empty slot; a cohort with no score says so in its slot. Every
mark carries its figures as a tooltip. No script: the page draws without JavaScript, within its
Content-Security-Policy."""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.platform.server.storage.experiment_compare import CriterionComparison
from assay.platform.server.ui.dashboard_charts import colour

WIDTH, HEIGHT = 360, 220
LEFT, RIGHT, TOP, BOTTOM = 40, 10, 22, 34
STUB = 3.0  # px: the least height of a drawn bar


@dataclass(frozen=True)
class Mark:
    x: str
    y: str
    width: str
    height: str
    fill: str
    tip: str


@dataclass(frozen=True)
class Whisker:
    x: str
    top: str
    bottom: str
    left: str
    right: str
    tip: str


@dataclass(frozen=True)
class Text:
    x: str
    y: str
    text: str
    anchor: str = "middle"
    css: str = "tick"


@dataclass
class CompareChart:
    chart_id: str
    title: str
    scale: str
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = WIDTH - RIGHT
    top: int = TOP
    bottom: int = HEIGHT - BOTTOM
    bars: list[Mark] = field(default_factory=list)
    whiskers: list[Whisker] = field(default_factory=list)
    texts: list[Text] = field(default_factory=list)
    grid: list[str] = field(default_factory=list)  # y of each horizontal grid line


def _f(value: float) -> str:
    return f"{value:.1f}"


def figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def criterion_chart(index: int, compared: CriterionComparison, cohorts: list[str]) -> CompareChart:
    low, high = compared.scale
    span = (high - low) or 1.0
    chart = CompareChart(
        chart_id=f"chart-{index}",
        title=compared.name,
        scale=f"{low:g}–{high:g}",
    )

    def y(value: float) -> float:
        clipped = min(max(value, low), high)
        return chart.bottom - (clipped - low) / span * (chart.bottom - chart.top)

    steps = int(span) if span == int(span) and span <= 5 else 4
    for i in range(steps + 1):
        tick = low + span * i / steps
        chart.grid.append(_f(y(tick)))
        chart.texts.append(Text(str(chart.left - 6), _f(y(tick) + 4), f"{tick:g}", "end"))
    slot = (chart.right - chart.left) / max(1, len(cohorts))
    bar = min(56.0, slot * 0.6)
    for position, name in enumerate(cohorts):
        cell = compared.cells.get(name)
        middle = chart.left + slot * (position + 0.5)
        chart.texts.append(Text(_f(middle), str(chart.bottom + 16), name[:18]))
        if cell is None or cell.mean is None:
            chart.texts.append(Text(_f(middle), _f(chart.bottom - 8), "no score", css="bar-label"))
            continue
        top = min(y(cell.mean), chart.bottom - STUB)
        interval = (
            f", 95% interval {figure(cell.low)}–{figure(cell.high)}" if cell.low is not None else ""
        )
        tip = f"{name}: mean {figure(cell.mean)}{interval}, {cell.n_scored} of {cell.n} scored"
        chart.bars.append(
            Mark(
                _f(middle - bar / 2),
                _f(top),
                _f(bar),
                _f(chart.bottom - top),
                colour(position),
                tip,
            )
        )
        label_y = top - 5
        if cell.low is not None and cell.high is not None:
            chart.whiskers.append(
                Whisker(
                    _f(middle),
                    _f(y(cell.high)),
                    _f(y(cell.low)),
                    _f(middle - bar / 4),
                    _f(middle + bar / 4),
                    tip,
                )
            )
            label_y = min(label_y, y(cell.high) - 5)
        chart.texts.append(
            Text(_f(middle), _f(max(label_y, 12)), figure(cell.mean), css="bar-label")
        )
    return chart


__all__ = ["CompareChart", "criterion_chart", "figure"]
