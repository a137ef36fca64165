"""The dashboard's figures, as the API answers them and the page draws them (`figures`): over a
window and a condition, the traces, errors and error rate, latency p50/p95/p99, input and output
tokens, cost, the same by model, each criterion's mean score with its interval and `n`, labels
by criterion, each online evaluator's coverage, and every bucket of the window with its own figures (an empty one as zeros).

Percentiles are numpy's linear rule (PostgreSQL's percentile_cont), computed by the database
(`DashboardRepo.latency`).
A criterion's interval is the seeded percentile bootstrap of the mean from `assay.stats` (the
one the experiments' results use), so a reload shows the same interval."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from assay.platform.server.errors import ApiError
from assay.platform.server.storage.dashboard import PERCENTILES, DashboardRepo, Latency
from assay.platform.server.storage.dashboard_matched import narrowed
from assay.platform.server.storage.dashboard_rollups import source_for, time_limit
from assay.platform.server.storage.dashboard_window import Window
from assay.platform.server.storage.db import reading
from assay.platform.server.storage.repos import iso
from assay.platform.server.storage.trace_fields import compile_condition

RESAMPLES = 2000  # of the bootstrap: the interval of a page of buckets stays a few ms
ZERO_TOKENS = {"input": 0, "output": 0}
EVALUATION_STATES = ("scored", "error", "pending", "skipped_budget", "judge_down")


def latency_json(latency: Latency | None) -> dict[str, Any]:
    if latency is None:
        return {f"p{p}": None for p in PERCENTILES} | {"n": 0}
    return {f"p{p}": latency.percentiles[p] for p in PERCENTILES} | {"n": latency.n}


def mean_estimate(values: list[float]) -> dict[str, Any]:
    """A criterion's mean over `values` with its 95% bootstrap interval (none below 2 values).
    The values are sorted first: the database returns them in no set order, and the same
    values must give the same interval."""
    from assay.stats.bootstrap import bootstrap_mean_ci
    from assay.stats.estimate import Estimate

    values = sorted(values)
    n = len(values)
    mean = math.fsum(values) / n
    low = high = None
    if n >= 2:
        low, high = bootstrap_mean_ci(values, resamples=RESAMPLES)
    found = Estimate(mean, low, high, n, "bootstrap")
    return {"mean": found.value, "low": found.low, "high": found.high, "n": found.n}


def _tokens(row: Any) -> dict[str, int]:
    return {"input": int(row.input_tokens or 0), "output": int(row.output_tokens or 0)}


def _bucket_json(start: Any) -> dict[str, Any]:
    return {
        "start": iso(start),
        "traces": 0,
        "errors": 0,
        "tokens": dict(ZERO_TOKENS),
        "cost": 0.0,
        "latency_ms": latency_json(None),
        "scores": {},
        "labels": {},
    }


def _model_json(model: str | None) -> dict[str, Any]:
    return {"model": model, "traces": 0, "errors": 0, "tokens": dict(ZERO_TOKENS), "cost": 0.0}


def figures(
    repo: DashboardRepo, condition: str | None = None, exact_up_to: int | None = None
) -> dict[str, Any]:
    """Every figure of the dashboard over `repo`'s window and condition: volume and latency from
    the hourly rollups or from the traces (`dashboard_rollups.source_for`, said in `computed`);
    reading the traces is time-limited. With a condition, the matching traces are found once
    (`dashboard_matched.narrowed`; a caller that reads more of them, as the trust panel does,
    narrows around both)."""
    reading(repo.session)  # only reads: on SQLite no write lock, so ingest goes on meanwhile
    source, computed = source_for(repo, exact_up_to)  # None: dashboard_rollups.EXACT_UP_TO
    with narrowed(repo), time_limit(repo, computed.get("time_limit_s")):
        found = _figures(repo, source, condition)
    return {**found, "computed": computed}


def _figures(repo: DashboardRepo, source: Any, condition: str | None) -> dict[str, Any]:
    window: Window = repo.window
    buckets = {window.key(start): _bucket_json(start) for start in window.starts()}
    with_cost = 0
    per_model: dict[str | None, dict[str, Any]] = {}
    for row in source.volume():
        traces, errors = int(row.traces), int(row.errors or 0)
        tokens, cost = _tokens(row), float(row.cost or 0.0)
        for entry in (
            buckets.get(row.key),
            per_model.setdefault(row.model, _model_json(row.model)),
        ):
            if entry is None:  # cannot happen: every trace of the window is in one of its buckets
                continue
            entry["traces"] += traces
            entry["errors"] += errors
            entry["tokens"] = {k: entry["tokens"][k] + tokens[k] for k in ZERO_TOKENS}
            entry["cost"] += cost
        with_cost += int(row.with_cost or 0)
    in_buckets, overall = source.latency()
    for key, latency in in_buckets.items():
        if key in buckets:
            buckets[key]["latency_ms"] = latency_json(latency)

    by_criterion: dict[str, list[float]] = defaultdict(list)
    by_bucket: dict[tuple[str, str], list[float]] = defaultdict(list)
    for key, criterion, value in repo.score_values():
        by_criterion[criterion].append(float(value))
        by_bucket[(key, criterion)].append(float(value))
    for (key, criterion), values in sorted(by_bucket.items()):
        if key in buckets:
            buckets[key]["scores"][criterion] = mean_estimate(values)

    labels: dict[str, int] = defaultdict(int)
    for key, criterion, count in repo.label_counts():
        labels[criterion] += int(count)
        if key in buckets:
            buckets[key]["labels"][criterion] = int(count)

    models = sorted(per_model.values(), key=lambda m: (-m["traces"], m["model"] or ""))
    traces = sum(m["traces"] for m in models)
    errors = sum(m["errors"] for m in models)
    return {
        "since": iso(window.since),
        "until": iso(window.until),
        "range": window.range,
        "bucket": window.unit,
        "condition": condition or None,
        "include_experiments": repo.include_experiments,
        "traces": traces,
        "errors": errors,
        "error_rate": errors / traces if traces else None,
        "latency_ms": latency_json(overall),
        "tokens": {k: sum(m["tokens"][k] for m in models) for k in ZERO_TOKENS},
        "cost": math.fsum(m["cost"] for m in models),
        "traces_with_cost": with_cost,
        "models": models,
        "scores": {c: mean_estimate(v) for c, v in sorted(by_criterion.items())},
        "labels": dict(sorted(labels.items())),
        "evaluators": evaluators_json(repo, traces if source is not repo else None),
        "series": list(buckets.values()),
    }


def evaluators_json(repo: DashboardRepo, traces: int | None = None) -> list[dict[str, Any]]:
    """Each online evaluator's coverage of the window: of the traces matching the dashboard's
    condition and the evaluator's own (`matching`), how many its current version has scored,
    failed to score, still has pending, skipped for its daily budget or left for its next run
    because its judge was down; `coverage` is scored /
    matching (about its sample rate once the judge has caught up)."""
    counts = repo.evaluation_counts()
    found = []
    for evaluator in repo.evaluators():
        try:
            condition = compile_condition(evaluator.condition)
        except ApiError:  # saved under an older grammar: its coverage cannot be counted
            condition = None
        # with no condition of its own it matches every trace (counted already from rollups)
        known = traces if condition is None else None
        matching = known if known is not None else repo.matching(condition)
        states = {s: counts.get((evaluator.id, s), 0) for s in EVALUATION_STATES}
        found.append(
            {
                "name": evaluator.name,
                "version": evaluator.version,
                "status": evaluator.status,
                "sample_rate": evaluator.sample_rate,
                "matching": matching,
                **states,
                "coverage": states["scored"] / matching if matching else None,
            }
        )
    return found


__all__ = ["RESAMPLES", "evaluators_json", "figures", "latency_json", "mean_estimate"]
