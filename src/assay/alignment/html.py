"""The report as HTML: statistics with intervals, the confusion matrices (before and after) and a
reliability diagram. Rendered by Jinja2 with autoescaping (every label, reason and input is data),
the diagram as inline SVG laid out here, no script and no external resource. A self-contained
page, or `section=True` for the `<section>` alone, which the `assay report` page embeds."""

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
TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)


def reliability_points(
    bins: list[dict[str, Any]] | None, series: str = "after"
) -> list[dict[str, Any]]:
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
                "series": series,
                "x": PAD + b["mean_score"] * SIZE,
                "y": PAD + (1 - b["positive_rate"]) * SIZE,
                "r": 3 + 6 * (b["n"] / largest) ** 0.5,
                "n": b["n"],
                "low": b.get("low"),
                "high": b.get("high"),
                "score": b["mean_score"],
                "rate": b["positive_rate"],
            }
        )
    return points


def _category_name(kind: str, category: Any) -> str:
    if kind == "binary":
        return {0: "no", 1: "yes"}.get(category, str(category))
    return str(category)


def confusion_view(
    kind: str, confusion: dict[str, Any] | None, title: str, threshold: float | None
) -> dict[str, Any] | None:
    """A confusion matrix as rows of cells, each with the human and judge category it counts."""
    if not confusion:
        return None
    names = [_category_name(kind, c) for c in confusion["categories"]]
    rows = [
        {
            "human": names[i],
            "cells": [{"judge": names[j], "n": n} for j, n in enumerate(counts)],
            "total": sum(counts),
        }
        for i, counts in enumerate(confusion["matrix"])
    ]
    return {
        "title": title,
        "threshold": threshold if kind == "binary" else None,
        "categories": names,
        "rows": rows,
        "n": sum(row["total"] for row in rows),
    }


def render_report(report: Any, *, section: bool = False) -> str:
    """The page (or, with `section=True`, the `<section>` alone, for another page to embed) of an
    AlignmentReport or of the dict its `to_dict()` / `to_json()` gave."""
    data = dict(report) if isinstance(report, dict) else report.to_dict()
    data.setdefault("notes", [])  # a report saved before notes were kept
    kind = data["label_kind"]
    compared = data.get("before") is not None
    matrices = [
        confusion_view(
            kind,
            data.get("before_confusion"),
            "before",
            data.get("before_threshold"),
        ),
        confusion_view(
            kind, data["confusion"], "after" if compared else "judge", data["threshold"]
        ),
    ]
    points = reliability_points(data.get("before_calibration_bins"), "before")
    points += reliability_points(data["calibration_bins"], "after" if compared else "judge")
    return _ENV.get_template("alignment.html.j2").render(
        report=data,
        anchor="alignment-" + "".join(c if c.isalnum() else "-" for c in str(data["metric"])),
        matrices=[m for m in matrices if m is not None],
        points=points,
        series=sorted({p["series"] for p in points}, key=["before", "after", "judge"].index),
        ticks=[{"value": t, "x": PAD + t * SIZE, "y": PAD + (1 - t) * SIZE} for t in TICKS],
        size=SIZE,
        pad=PAD,
        section=section,
    )


__all__ = ["confusion_view", "reliability_points", "render_report"]
