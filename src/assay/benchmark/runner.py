"""Run one suite for one metric through `evaluate()` and compute its agreement with people.

The scoring goes through the ordinary engine, so every cell has a typed outcome, model answers
are cached, and the run directory (under `benchmarks/runs/` by default) lets an interrupted run
resume. Statistics use the `ok` cells only; skipped and failed cells are counted in the record.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeGuard

from assay._version import __version__
from assay.benchmark.loaders import loaders
from assay.benchmark.scoring import score_suite
from assay.benchmark.suites import (
    SUITES,
    SuiteData,
    check_split,
    check_suite,
    choose_aspect,
    resolve_data_dir,
)
from assay.engine.checkpoint import saved_cells
from assay.errors import UsageError
from assay.metrics.base import Metric
from assay.metrics.registry import default_name
from assay.schema.outcome import Cell, Error, Ok, Skipped
from assay.schema.result import EvaluationResult

RECORD_FORMAT = 1


def prepare_models(
    metric: Metric, llm: Any = None, embeddings: Any = None, *, cache: bool = True
) -> Metric:
    """The metric with its judge and embeddings filled in (the defaults when none are given),
    so that the record can name the exact models before the run starts."""
    from assay.models.defaults import default_embeddings, default_llm

    if metric.needs_llm and getattr(metric, "llm", None) is None and llm is None:
        llm = default_llm(cache=cache)
    if (
        metric.needs_embeddings
        and getattr(metric, "embeddings", None) is None
        and embeddings is None
    ):
        embeddings = default_embeddings(cache=cache)
    return metric.with_models(llm=llm, embeddings=embeddings)


def fit_to_judge(llm: Any, requested: int) -> int:
    """No more rows at once than the embedded judge has slots: a row's timeout counts from its
    start, so rows queued behind a busy local server would time out while waiting."""
    slots = getattr(getattr(getattr(llm, "provider", None), "profile", None), "concurrency", None)
    if isinstance(slots, int) and slots > 0:
        return min(requested, slots)
    return requested


def fit_concurrency(metric: Metric, requested: int) -> int:
    return fit_to_judge(getattr(metric, "llm", None), requested)


def start_local_judge(llm: Any) -> str | None:
    """Load the embedded judge before the clock starts (loading weights is not a row's cost) and
    return its address; None for any other judge."""
    from assay.models.local import LocalProvider

    provider = getattr(llm, "provider", None)
    if isinstance(provider, LocalProvider):
        return provider.start()
    return None


def cost_figures(
    *,
    wall: float,
    computed: int,
    n_rows: int,
    cell_latency: float | None,
    concurrency: int,
    requests: float,
    cached_requests: float,
    input_tokens: float,
    output_tokens: float,
    usd: float | None,
) -> dict[str, Any]:
    """What a row costs the machine: wall time over the rows this run scored (rows overlap, so a
    row's own latency, kept beside it, is longer; None when every row was resumed), and calls and
    tokens per row."""

    def per_row(total: float) -> float:
        return total / n_rows if n_rows else 0.0

    return {
        "seconds_per_item": wall / computed if computed else None,
        "rows_computed": computed,
        "cell_latency_seconds": cell_latency,
        "wall_seconds": wall,
        "max_concurrency": concurrency,
        "calls_per_item": per_row(requests),
        "cached_calls_per_item": per_row(cached_requests),
        "input_tokens_per_item": per_row(input_tokens),
        "output_tokens_per_item": per_row(output_tokens),
        "usd": usd,
    }


def _digest(payload: Any) -> str:
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _checkpoint_cells(run_dir: Path, metric: str, n_rows: int) -> dict[int, Cell]:
    """The metric's finished cells in a run directory, by row (the last record of a row wins)."""
    cells: dict[int, Cell] = {}
    for cell in saved_cells(run_dir):  # the checkpoint's own reader: same lines, same tolerance
        if cell.metric == metric and cell.row < n_rows:
            cells[cell.row] = cell
    return cells


def _finished_rows(run_dir: Path, metric: str, n_rows: int) -> int:
    """Rows a resumed run will keep: error cells are computed again."""
    return sum(
        cell.outcome.status != "error"
        for cell in _checkpoint_cells(run_dir, metric, n_rows).values()
    )


def _cell_seconds(run_dir: Path, metric: str, n_rows: int) -> float | None:
    """Mean seconds per cell from the checkpoint (resumed cells keep their original time)."""
    seconds = [cell.seconds for cell in _checkpoint_cells(run_dir, metric, n_rows).values()]
    return sum(seconds) / len(seconds) if seconds else None


def _problems(outcomes: list[Any], ids: list[str]) -> dict[str, Any]:
    """Skipped and failed cells: counts by reason and a few examples, never silently dropped."""
    errors = Counter(cell.error_type for cell in outcomes if isinstance(cell, Error))
    skips = Counter(cell.reason for cell in outcomes if isinstance(cell, Skipped))
    examples = [
        {
            "id": row_id,
            "status": cell.status,
            "reason": (
                f"{cell.error_type}: {cell.message}" if isinstance(cell, Error) else cell.reason
            )[:300],
        }
        for row_id, cell in zip(ids, outcomes, strict=True)
        if not isinstance(cell, Ok)
    ][:5]
    return {
        "error_types": dict(errors),
        "skip_reasons": dict(skips.most_common(5)),
        "examples": examples,
    }


def load_suite(
    suite: str,
    metric_id: str,
    *,
    data_dir: str | Path | None,
    aspect: str | None,
    split: str,
    limit: int | None,
    seed: int,
) -> tuple[Path, SuiteData]:
    """The data directory and the suite's rows and labels for the aspect `metric_id` is checked on."""
    check_suite(suite)
    check_split(suite, split)
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be at least 1, got {limit}")
    root = resolve_data_dir(data_dir)
    chosen_aspect = choose_aspect(suite, metric_id, aspect)
    return root, loaders()[suite](root, chosen_aspect, split, limit, seed)


def run_benchmark(
    suite: str,
    metric: Metric,
    *,
    data_dir: str | Path | None = None,
    llm: Any = None,
    embeddings: Any = None,
    aspect: str | None = None,
    split: str = "test",
    limit: int | None = None,
    seed: int = 0,
    threshold: float = 0.5,
    runs_dir: str | Path = Path("benchmarks") / "runs",
    max_concurrency: int = 8,
    timeout: float | None = 600.0,
    show_progress: bool = True,
    cache: bool = True,
) -> dict[str, Any]:
    """Score SUITE with METRIC and return the run's record (see `report.write_record`)."""
    from assay.engine.run import evaluate

    root, data = load_suite(
        suite,
        default_name(type(metric)),
        data_dir=data_dir,
        aspect=aspect,
        split=split,
        limit=limit,
        seed=seed,
    )
    chosen_aspect = data.aspect
    metric = prepare_models(metric, llm, embeddings, cache=cache)
    spec = metric.spec()
    max_concurrency = fit_concurrency(metric, max_concurrency)
    settings = {
        "suite": suite,
        "aspect": chosen_aspect,
        "split": split,
        "limit": limit,
        "seed": seed,
    }
    run_dir = (
        Path(runs_dir)
        / f"{suite}-{chosen_aspect}-{metric.name}-{split}-{_digest([settings, spec])}"
    )

    done_before = _finished_rows(run_dir, metric.name, len(data.rows))
    start_local_judge(getattr(metric, "llm", None))
    started = time.perf_counter()
    result = evaluate(
        data.rows,
        [metric],
        run_dir=run_dir,
        max_concurrency=max_concurrency,
        timeout=timeout,
        show_progress=show_progress,
    )
    assert isinstance(result, EvaluationResult)  # not asked for an Executor
    wall = time.perf_counter() - started
    computed = len(data.rows) - done_before  # rows this run scored (a resumed run keeps the others)
    outcomes = [row[metric.name] for row in result.outcomes]
    values = [
        cell.value if isinstance(cell, Ok) and _is_number(cell.value) else None for cell in outcomes
    ]
    not_numeric = sum(isinstance(cell, Ok) and not _is_number(cell.value) for cell in outcomes)
    scored = score_suite(data, values, threshold=threshold, seed=seed)

    n_rows = len(data.rows)
    usage = result.usage(metric.name)
    cost = cost_figures(
        wall=wall,
        computed=computed,
        n_rows=n_rows,
        cell_latency=_cell_seconds(run_dir, metric.name, n_rows),
        concurrency=max_concurrency,
        requests=usage.requests,
        cached_requests=usage.cached_requests,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        usd=usage.cost,
    )
    return build_record(
        data,
        root,
        settings,
        scored,
        outcomes,
        not_numeric,
        metric={key: spec.get(key) for key in ("name", "class", "version", "params")},
        prompts=spec.get("prompts", []),
        judge=spec.get("llm"),
        embeddings=spec.get("embeddings"),
        cost=cost,
        run_dir=run_dir,
        threshold=threshold,
        engine={"name": "assay", "version": __version__},
    )


def build_record(
    data: SuiteData,
    root: Path,
    settings: dict[str, Any],
    scored: Any,
    outcomes: list[Any],
    not_numeric: int,
    *,
    metric: dict[str, Any],
    prompts: list[Any],
    judge: Any,
    embeddings: Any,
    cost: dict[str, Any],
    run_dir: Path,
    threshold: float,
    engine: dict[str, Any],
) -> dict[str, Any]:
    """A run's record (see `report.write_record`), the same for assay's metrics and for another
    framework's metric run side by side (`engine` says which scored the rows)."""
    return {
        "format": RECORD_FORMAT,
        "suite": data.suite,
        "aspect": data.aspect,
        "kind": data.kind,
        "split": data.split,
        "limit": settings["limit"],
        "seed": settings["seed"],
        "threshold": threshold if data.kind == "binary" else None,
        "engine": engine,
        "metric": metric,
        "prompts": prompts,
        "judge": judge,
        "embeddings": embeddings,
        "data": {
            "directory": str(root),
            "folder": SUITES[data.suite][0],
            "files": data.sources,
            "notes": data.notes,
        },
        "n_units": scored.n_units,
        "n_scored": scored.n_scored,
        "coverage": scored.coverage,
        "cells": {
            "rows": len(data.rows),
            "ok": sum(isinstance(cell, Ok) for cell in outcomes) - not_numeric,
            "ok_not_numeric": not_numeric,
            "skipped": sum(isinstance(cell, Skipped) for cell in outcomes),
            "error": sum(isinstance(cell, Error) for cell in outcomes),
            **_problems(outcomes, data.ids),
        },
        "figures": [figure.to_dict() for figure in scored.figures],
        "cost": cost,
        "run_dir": str(run_dir),
        "assay_version": __version__,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float))  # bools count: a pass/fail metric is 0/1


__all__ = [
    "RECORD_FORMAT",
    "build_record",
    "cost_figures",
    "fit_concurrency",
    "fit_to_judge",
    "load_suite",
    "prepare_models",
    "run_benchmark",
    "start_local_judge",
]
