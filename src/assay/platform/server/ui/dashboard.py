"""A project's dashboard, its landing page (`/ui/p/{project}/dashboard`): over a range (the last
hour, day, 7 or 30 days, or custom times) and a condition in the review-queue language, the
headline figures and charts of trace volume and errors, error rate, latency p50/p95/p99, tokens
and cost by model, each criterion's mean score over time with its interval, and labels per
bucket, and per criterion how far to trust its scores (its judge's card, the mean corrected by
people's labels, the agreement alert: `fragments/trust_panel.html`). The figures are `GET
/api/v1/dashboard`'s (`storage/dashboard_figures.py`); the charts
are inline SVG laid out by `dashboard_charts.py`, so the page makes no request of its own. A bad
range or condition is shown beside its field, not as an error page. An experiment's
generations (published as traces) are left out unless "Include experiments" is ticked."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from assay.platform.server.errors import ApiError
from assay.platform.server.schemas.traces import CONDITION_MAX
from assay.platform.server.storage.dashboard import DashboardRepo
from assay.platform.server.storage.dashboard_figures import figures
from assay.platform.server.storage.dashboard_matched import narrowed
from assay.platform.server.storage.dashboard_window import RANGES, parse_moment, window_of
from assay.platform.server.storage.trace_fields import compile_condition
from assay.platform.server.storage.trust_figures import trust
from assay.platform.server.ui import dashboard_charts as charts
from assay.platform.server.ui.web import member, render, state_of

router = APIRouter(prefix="/p/{project_id}")  # under the UI app, mounted at /ui
CHOICES = (*RANGES, "custom")


def _window(range_: str, since: str, until: str) -> Any:
    """The window asked for by the form; an ApiError names the field that is wrong."""
    if range_ == "custom":
        if not since:
            raise ApiError(
                422, "validation_error", "since: a custom range needs a start", field="since"
            )
        return window_of(None, since, until or None, datetime.now(timezone.utc))
    return window_of(range_ or None, None, None, datetime.now(timezone.utc))


def build_charts(found: dict[str, Any]) -> dict[str, Any]:
    """Every chart of the page from the figures (`figures`' JSON)."""
    series, unit = found["series"], found["bucket"]
    starts = [parse_moment(b["start"], "start") for b in series]
    volume = charts.stacked_bars(
        "Traces",
        "chart-volume",
        starts,
        unit,
        [
            ("ok", charts.colour(0), [b["traces"] - b["errors"] for b in series]),
            ("failed", charts.ERROR, [b["errors"] for b in series]),
        ],
    )
    rates = [100 * b["errors"] / b["traces"] if b["traces"] else None for b in series]
    error_rate = charts.lines_over_time(
        "Error rate", "chart-errors", starts, unit, [("error rate", charts.ERROR, rates)], "%"
    )
    latency = charts.lines_over_time(
        "Latency",
        "chart-latency",
        starts,
        unit,
        [
            (f"p{p}", charts.colour(i), [b["latency_ms"][f"p{p}"] for b in series])
            for i, p in enumerate((50, 95, 99))
        ],
        " ms",
    )
    models = found["models"]
    names = [m["model"] or "(no model)" for m in models]
    tokens = charts.horizontal_bars(
        "Tokens by model",
        "chart-tokens",
        [
            (
                name,
                [
                    ("input", charts.colour(0), m["tokens"]["input"]),
                    ("output", charts.colour(1), m["tokens"]["output"]),
                ],
            )
            for name, m in zip(names, models, strict=True)
        ],
    )
    cost = charts.horizontal_bars(
        "Cost by model",
        "chart-cost",
        [
            (name, [("cost", charts.colour(2), m["cost"])])
            for name, m in zip(names, models, strict=True)
        ],
    )
    scores = [
        charts.lines_over_time(
            f"{criterion}: mean score, 95% interval",
            f"chart-score-{index}",
            starts,
            unit,
            [(criterion, charts.colour(index), [_score(b, criterion, "mean") for b in series])],
            bands=[
                (
                    charts.colour(index),
                    [_score(b, criterion, "low") for b in series],
                    [_score(b, criterion, "high") for b in series],
                )
            ],
            from_zero=False,
        )
        for index, criterion in enumerate(found["scores"])
    ]
    criteria = list(found["labels"])
    labels = charts.stacked_bars(
        "Labels",
        "chart-labels",
        starts,
        unit,
        [
            (c, charts.colour(i), [float(b["labels"].get(c, 0)) for b in series])
            for i, c in enumerate(criteria)
        ],
    )
    return {
        "evaluators": evaluator_chart(found["evaluators"]),
        "volume": volume,
        "error_rate": error_rate,
        "latency": latency,
        "tokens": tokens,
        "cost": cost,
        "scores": scores,
        "labels": labels,
    }


def evaluator_chart(evaluators: list[dict[str, Any]]) -> charts.Chart | None:
    """Per online evaluator, a bar as long as the traces it matches: those its current version
    scored, failed on, has pending, skipped for its budget or left while its judge was down, and
    the rest (not sampled)."""
    if not evaluators:
        return None
    rows = []
    for e in evaluators:
        coverage = "–" if e["coverage"] is None else f"{100 * e['coverage']:.0f}%"
        taken = e["scored"] + e["error"] + e["pending"] + e["skipped_budget"] + e["judge_down"]
        parts = [
            ("scored", charts.colour(2), float(e["scored"])),
            ("failed", charts.ERROR, float(e["error"])),
            ("pending", charts.colour(5), float(e["pending"])),
            ("over budget", charts.colour(1), float(e["skipped_budget"])),
            ("judge down", charts.colour(3), float(e["judge_down"])),
            ("not sampled", "#d9dde5", float(max(0, e["matching"] - taken))),
        ]
        name = f"{e['name']} v{e['version']} ({e['status']}): {coverage} of {e['matching']}"
        rows.append((name, parts))
    return charts.horizontal_bars("Online evaluators: coverage", "chart-evaluators", rows)


def _score(bucket: dict[str, Any], criterion: str, key: str) -> float | None:
    found = bucket["scores"].get(criterion)
    return None if found is None else found[key]


@router.get("/dashboard")
def dashboard(
    request: Request,
    project_id: int,
    range: str = "7d",
    since: str = "",
    until: str = "",
    condition: str = "",
    include_experiments: bool = False,
) -> Response:
    access = member(request, project_id)
    problem, field, found, drawn = "", "", None, None
    try:
        if len(condition) > CONDITION_MAX:
            raise ApiError(
                422,
                "validation_error",
                f"condition: at most {CONDITION_MAX} characters",
                field="condition",
            )
        window = _window(range, since.strip(), until.strip())
        where = compile_condition(condition)
        with state_of(request).transaction() as session:
            repo = DashboardRepo(
                session, project_id, window, where, include_experiments=include_experiments
            )
            with narrowed(repo):  # the condition matched once, for figures and trust panel
                found = figures(repo, condition)
                found["trust"] = trust(session, project_id, window, repo.traces_where())
        drawn = build_charts(found)
    except ApiError as exc:
        problem, field = exc.message, exc.field or ""
    return render(
        request,
        "dashboard.html",
        project=access.project,
        choices=CHOICES,
        chosen=range if range in CHOICES else "7d",
        since=since,
        until=until,
        condition=condition,
        include_experiments=include_experiments,
        problem=problem,
        problem_field=field,
        found=found,
        charts=drawn,
        short=charts.short,
    )


__all__ = ["build_charts", "router"]
