"""A cascade's band fitted on one half of a suite and tested on the other, from a run's answers.

`benchmarks/cascade.py` chooses its band on BEGIN dev and carries it to every suite. What a user
of `fit_cascade` does instead is fit on rows like the ones to be judged. This replays that from
the answers a `cascade.py` run kept (no model is loaded): the suite's units (WikiEval's pairs, or
BEGIN's rows) in the run's order are split in two halves; `fit_cascade` chooses the band and
tolerance on the first half against the 1.5B judge's answers (labels are never read); on the
second half the 1.5B judge alone, the 0.5B judge alone (stopped after the asked statements, as
the cascade asks it) and the fitted cascade are scored with the suite's own statistics. Nothing of
the second half is seen before its figures are computed. No time is measured (the answers are
cached): the cells escalated say what the cascade would have spent.

    .venv/bin/python benchmarks/cascade_split.py --run benchmarks/results/cascade_chosen_on_dev.json \
        --suite wikieval --data-dir /work/shared/data/metaeval \
        --output benchmarks/results/cascade_wikieval_split
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cascade import _cached_judge, _FirstOnly, _merged_caches

from assay import evaluate
from assay.alignment import fit_cascade
from assay.benchmark.runner import load_suite
from assay.benchmark.scoring import score_suite
from assay.benchmark.suites import SuiteData
from assay.metrics.rag.faithfulness import Faithfulness
from assay.models.local_weights import default_judge_path, small_judge_path
from assay.schema.outcome import Ok

BUDGET = 0.5  # the bound on escalated cells, fixed before any figure was seen


def halves(data: SuiteData) -> tuple[SuiteData, SuiteData]:
    """The suite's units in order, split in two: pairs (both rows of a pair together) or rows."""
    if data.kind == "pairwise":
        middle = len(data.pairs) // 2
        parts = [data.pairs[:middle], data.pairs[middle:]]
        return tuple(_pairs_only(data, part) for part in parts)  # type: ignore[return-value]
    middle = len(data.rows) // 2
    return _rows_only(data, range(middle)), _rows_only(data, range(middle, len(data.rows)))


def _pairs_only(data: SuiteData, pairs: list[tuple[int, int]]) -> SuiteData:
    rows = sorted({i for pair in pairs for i in pair})
    where = {old: new for new, old in enumerate(rows)}
    kept = _rows_only(data, rows)
    return dataclasses.replace(
        kept, pairs=[(where[a], where[b]) for a, b in pairs], n_units=len(pairs)
    )


def _rows_only(data: SuiteData, rows: Any) -> SuiteData:
    rows = list(rows)
    return dataclasses.replace(
        data,
        rows=[data.rows[i] for i in rows],
        ids=[data.ids[i] for i in rows],
        labels=[data.labels[i] for i in rows] if data.labels else [],
        groups=[data.groups[i] for i in rows] if data.groups else [],
        n_units=len(rows),
    )


def scored(data: SuiteData, judge: Any, metric: Faithfulness | None = None) -> dict[str, Any]:
    """Faithfulness (default settings unless `metric`) on `data`'s rows with `judge`, one row at a
    time, and the suite's headline figure with the per-row values."""
    result = evaluate(
        data.rows, [metric or Faithfulness()], llm=judge, show_progress=False, max_concurrency=1
    )
    values = [
        float(row["faithfulness"].value) if isinstance(row["faithfulness"], Ok) else None
        for row in result.outcomes
    ]
    headline = next(f for f in score_suite(data, values).figures if f.headline)
    return {"figure": headline.name, **headline.estimate.to_dict(), "values": values}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", required=True, help="a cascade.py run's results JSON")
    parser.add_argument("--suite", required=True)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    report = json.loads(Path(args.run).read_text())
    work = Path(report["work"])
    alone = report["suites"][args.suite]["records"]["then_alone"]
    _, data = load_suite(
        args.suite,
        "faithfulness",
        data_dir=args.data_dir or alone["data"]["directory"],
        aspect=alone["aspect"],
        split=alone["split"],
        limit=alone["limit"],
        seed=alone["seed"],
    )
    fit_half, test_half = halves(data)
    prompt = report.get("first_system_prompt")
    small = _cached_judge(small_judge_path(), report, work / "first.sqlite", prompt)
    suite_work = work / args.suite
    merged = _merged_caches(suite_work / "then_cascade.sqlite", suite_work / "then_alone.sqlite")
    strong = _cached_judge(default_judge_path(), report, merged)
    try:
        fit = fit_cascade(fit_half.rows, Faithfulness(), first=small, then=strong, budget=BUDGET)
        cascade = fit.cascade()
        found = {
            "then_alone": scored(test_half, strong),
            "first_alone": scored(test_half, _FirstOnly(small)),
            "cascade": scored(test_half, cascade),
        }
    finally:
        shutil.rmtree(merged.parent, ignore_errors=True)
    summary = cascade.summary()
    then = found["then_alone"]
    result = {
        "command": (
            f".venv/bin/python benchmarks/cascade_split.py --run {args.run} "
            f"--suite {args.suite} --output {args.output}"
        ),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "run": {"file": args.run, "date": report["date"], "work": str(work)},
        "suite": args.suite,
        "units": {"fit": fit_half.n_units, "test": test_half.n_units},
        "fit": {k: v for k, v in fit.to_dict().items() if k != "candidates"},
        "test": {
            **{name: {k: v for k, v in f.items() if k != "values"} for name, f in found.items()},
            "cells_escalated": summary.escalated_share,
            "escalated": str(summary),
            "cascade_within_then_interval": then["low"] is not None
            and then["low"] <= found["cascade"]["value"] <= then["high"],
        },
    }
    out = Path(args.output)
    out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    out.with_suffix(".md").write_text(_markdown(result))
    print(_markdown(result))


def _markdown(result: dict[str, Any]) -> str:
    test, fit = result["test"], result["fit"]

    def fmt(f: dict[str, Any]) -> str:
        interval = f" [{f['low']:.3f}, {f['high']:.3f}]" if f.get("low") is not None else ""
        return f"{f['value']:.3f}{interval} (n={f['n']})"

    auc = fit["verdict_auc"]
    auc_text = f"{auc['value']:.2f}" if auc.get("value") is not None else "n/a"
    return "\n".join(
        [
            f"# A cascade fitted on half of {result['suite']}, tested on the other half",
            "",
            f"Command: `{result['command']}`",
            "",
            f"Date {result['date']}; the answers of the run {result['run']['file']} of "
            f"{result['run']['date']} (no model loaded, no time measured). The first "
            f"{result['units']['fit']} units in the suite's order were fitted on "
            f"(`fit_cascade`, budget {fit['budget']:.0%} of cells, against the 1.5B judge's "
            f"answers; labels not read), the other {result['units']['test']} tested.",
            "",
            f"Fitted: band ({fit['band'][0]:.3f}, {fit['band'][1]:.3f}), tolerance "
            f"{fit['tolerance']:g}, {fit['chosen']['escalated_share']:.0%} of the fitted cells "
            f"escalated; the 0.5B judge's P(yes) predicts the 1.5B judge's verdicts there with "
            f"ROC-AUC {auc_text} over {fit['verdicts']} verdicts.",
            "",
            f"## Tested ({test['then_alone']['figure']})",
            "",
            "| | value |",
            "| --- | --- |",
            f"| 1.5B judge alone | {fmt(test['then_alone'])} |",
            f"| cascade, fitted | {fmt(test['cascade'])} |",
            f"| 0.5B judge alone | {fmt(test['first_alone'])} |",
            f"| cascade within the 1.5B judge's interval | "
            f"{test['cascade_within_then_interval']} |",
            f"| cells escalated | {test['cells_escalated']:.0%} |",
            "",
            f"Cascade: {test['escalated']}.",
            "",
        ]
    )


if __name__ == "__main__":
    main()
