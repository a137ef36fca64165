"""The report as an HTML section: statistics with intervals, a reliability diagram and the
confusion matrix. Rendered by Jinja2 with autoescaping (every label, reason and input is data),
the diagram as inline SVG laid out here; a self-contained page, or `section=True` for the block alone."""

from __future__ import annotations

from typing import Any

import jinja2

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("assay.alignment", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)

SIZE = 240  # the reliability diagram's plot area, in px
PAD = 36


def reliability_points(bins: list[dict[str, Any]] | None) -> list[dict[str, float]]:
    """One point per non-empty bin: x the mean score, y the share of positive labels, r by count."""
    if not bins:
        return []
    largest = max((b["n"] for b in bins), default=1) or 1
    points = []
    for b in bins:
        if not b["n"]:
            continue
        points.append(
            {
                "x": PAD + b["mean_score"] * SIZE,
                "y": PAD + (1 - b["positive_rate"]) * SIZE,
                "r": 3 + 6 * (b["n"] / largest) ** 0.5,
                "n": b["n"],
                "score": b["mean_score"],
                "rate": b["positive_rate"],
            }
        )
    return points


def render_report(report: Any, *, section: bool = False) -> str:
    """The page (or, with `section=True`, the `<section>` alone, for another page to embed) of an
    AlignmentReport or of the dict its `to_dict()` / `to_json()` gave."""
    data = report if isinstance(report, dict) else report.to_dict()
    return _ENV.get_template("alignment.html.j2").render(
        report=data,
        points=reliability_points(data["calibration_bins"]),
        size=SIZE,
        pad=PAD,
        section=section,
    )


__all__ = ["reliability_points", "render_report"]
