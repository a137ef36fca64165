"""Replays of a `cascade_each.py` run from the answers it kept: another budget, or every band.

`cascade_each.py --replay-budget B` fits again with budget B on the run's fit half (no model),
routes the band kept over its test half and, with `--timed`, times that band on the test half
with both judges loaded and empty caches. `cascade_each.py --sweep` routes every band of
`fit_cascade`'s grid over the test half: an oracle that says whether the judge pair can meet
the bound at all. Both add their figures to the run's results file.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cascade import _cached_judge, _merged_caches
from cascade_each import BUDGET, _judge, _write, each, markdown, timed
from cascade_split import halves, scored

from assay._util.sync import run_sync
from assay.alignment import fit_cascade
from assay.alignment.cascade_fit import _Alone, band_edges, bands
from assay.alignment.cascade_routing import Candidates
from assay.benchmark.runner import load_suite
from assay.benchmark.scoring import score_suite
from assay.benchmark.suites import SuiteData
from assay.engine.plan import coerce_dataset
from assay.models import Cascade
from assay.models.local_weights import default_judge_path, small_judge_path


def _halves(report: dict[str, Any], data_dir: str | None) -> tuple[SuiteData, SuiteData]:
    """The run's suite, split as the run split it."""
    _, data = load_suite(
        report["suite"],
        "faithfulness",
        data_dir=data_dir,
        aspect=None,
        split="test",
        limit=report.get("limit"),
        seed=0,
    )
    return halves(data)


def replay_budget(
    budget: float,
    output: Path,
    data_dir: str | None,
    *,
    timed_again: bool = False,
    swapped: bool = False,
) -> None:
    """The run in `output` fitted again with another budget, from its kept answers: the fit on
    its fit half, the band routed over its test half (no model is loaded; no time measured).
    With `timed_again`, the band kept is then timed on the test half as the run timed its
    cascade: both judges loaded, caches that start empty. With `swapped`, the halves trade
    places: fitted on the second, tested on the first (the run answered both with both judges)."""
    report = json.loads(output.with_suffix(".json").read_text())
    work = Path(report["work"])
    fit_half, test_half = _halves(report, data_dir)
    then = report["test"]["then_alone"]
    if swapped:
        fit_half, test_half = test_half, fit_half
        then = report["fit_runs"]["then_alone"]
    small_cache = _merged_caches(work / "fit_first.sqlite", work / "test_first.sqlite")
    strong_cache = _merged_caches(
        work / "fit_then.sqlite", work / "test_then_cascade.sqlite", work / "test_then_alone.sqlite"
    )
    small = _cached_judge(small_judge_path(), report, small_cache)
    strong = _cached_judge(default_judge_path(), report, strong_cache)
    try:
        start = time.perf_counter()
        fit = fit_cascade(fit_half.rows, each(), first=small, then=strong, budget=budget)
        fit_seconds = time.perf_counter() - start  # every answer cached: the fit's own work
        cascade = fit.cascade()
        routed = scored(test_half, cascade, each())
    finally:
        for cache in (small_cache, strong_cache):
            shutil.rmtree(cache.parent, ignore_errors=True)
    summary = cascade.summary()
    halves_named = (
        ("the second half", "the first half") if swapped else ("the fit half", "the test half")
    )
    replay = {
        "command": ".venv/bin/python benchmarks/cascade_each.py --data-dir "
        f"{data_dir} --output {output} --replay-budget {budget:g}"
        + (" --swapped" if swapped else ""),
        "budget": budget,
        "fitted_on": halves_named[0],
        "tested_on": halves_named[1],
        "then_interval": [then["low"], then["high"]],
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "candidates": len(fit.candidates),
        "fit_seconds": round(fit_seconds, 1),
        "fit": {k: v for k, v in fit.to_dict().items() if k not in ("candidates", "frontier")},
        "cascade": routed,
        "within_then_interval": then["low"] <= routed["value"] <= then["high"],
        "escalated": {
            "cells": summary.escalated_share,
            "calls": summary.escalated_calls / summary.calls if summary.calls else None,
            "text": str(summary),
        },
    }
    if timed_again:
        replay["command"] += " --timed"
        replay["timed"] = _timed_band(fit.band, fit.tolerance, report, test_half)
    name = f"budget {budget:g}" + (", halves swapped" if swapped else "")
    report.setdefault("replays", {})[name] = replay
    _write(report, output)
    print(markdown(report), flush=True)


def sweep(output: Path, data_dir: str | None, budget: float) -> None:
    """Every band of `fit_cascade`'s grid routed over the run's test half from its kept answers.

    An oracle, not a fit: the bands are judged on the rows they are scored on, so the best figure
    found among bands escalating under `budget` of the cells bounds what any band a fit could
    choose would reach there. It says whether the pair of judges can meet the bound at all."""
    report = json.loads(output.with_suffix(".json").read_text())
    work = Path(report["work"])
    _, test_half = _halves(report, data_dir)
    small_cache = _merged_caches(work / "test_first.sqlite")
    strong_cache = _merged_caches(
        work / "test_then_cascade.sqlite", work / "test_then_alone.sqlite"
    )
    small = _cached_judge(small_judge_path(), report, small_cache)
    strong = _cached_judge(default_judge_path(), report, strong_cache)
    labels = ("yes", "no")
    try:
        probe = _Alone(small, strong, as_first=True, labels=labels)
        scored(test_half, probe, each())
        edges = band_edges([p for ps in probe.seen.values() for p in ps])
        # one verdict per call: a tolerance below 1 changes nothing, so 0 alone is routed
        settings = [(band, 0.0) for band in bands(edges)]
        routing = Candidates(
            samples=coerce_dataset(test_half.rows).samples,
            metric=each(),
            first=small,
            then=strong,
            probabilities=probe.seen,
            labels=labels,
        )
        routed = run_sync(routing.route(settings))
    finally:
        for cache in (small_cache, strong_cache):
            shutil.rmtree(cache.parent, ignore_errors=True)
    then = report["test"]["then_alone"]
    routed_bands = []
    for ((low, high), _), (values, share) in zip(settings, routed, strict=True):
        per_row = [values.get(i) for i in range(len(test_half.rows))]
        figure = next(f for f in score_suite(test_half, per_row).figures if f.headline)
        routed_bands.append({"band": [low, high], "cells": share, "value": figure.estimate.value})
    under = [b for b in routed_bands if b["cells"] < budget]
    inside = [b for b in routed_bands if b["value"] is not None and b["value"] >= then["low"]]
    report["sweep"] = {
        "command": ".venv/bin/python benchmarks/cascade_each.py --data-dir "
        f"{data_dir} --output {output} --sweep"
        + (f" --budget {budget:g}" if budget != BUDGET else ""),
        "budget": budget,
        "bands": len(routed_bands),
        "best_under_budget": max(under, key=lambda b: (b["value"], -b["cells"])) if under else None,
        "fewest_cells_inside_then_interval": min(inside, key=lambda b: b["cells"])
        if inside
        else None,
        "then_interval": [then["low"], then["high"]],
    }
    _write(report, output)
    print(markdown(report), flush=True)


def _timed_band(
    band: tuple[float, float], tolerance: float, report: dict[str, Any], test_half: SuiteData
) -> dict[str, Any]:
    """A band timed on the test half as `main` times its fitted cascade (fresh caches)."""
    work = Path(tempfile.mkdtemp(prefix="assay-cascade-each-timed-"))
    small = _judge(small_judge_path(), report["threads"], work / "first.sqlite")
    strong = _judge(default_judge_path(), report["threads"], work / "then.sqlite")
    cascade = Cascade(first=small, then=strong, band=band, tolerance=tolerance)
    found = timed(test_half, cascade)
    summary = cascade.summary()
    then = report["test"]["then_alone"]["seconds_per_item"]
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "work": str(work),
        **found,
        "escalated": {
            "cells": summary.escalated_share,
            "calls": summary.escalated_calls / summary.calls if summary.calls else None,
            "text": str(summary),
        },
        "time_saved": 1 - found["seconds_per_item"] / then,
    }
