"""A cascade whose judges are asked one statement per call, fitted on half a suite and timed on the other.

In faithfulness' default verdict lists of three, the 0.5B judge's P(yes) predicts the 1.5B judge's
verdicts on WikiEval worse than chance (ROC-AUC 0.42, benchmarks/results/cascade_wikieval_split.md)
and depends on the statement's place in the list, so no band over it can route. Here both judges
are asked one statement per call (`Faithfulness(verdicts="each")`), each call read on its own.

The suite's units in order (WikiEval's pairs) are split in two halves, as `cascade_split.py` does.
On the first half both judges answer every call (timed, into caches) and `fit_cascade` chooses the
band from those answers against the 1.5B judge's (labels are never read; budget: half the cells).
On the second half, with caches that start empty, the 1.5B judge alone and the fitted cascade are
timed alike, then the 0.5B judge alone is scored from the answers the cascade asked of it. So the
band is fixed before any row it is tested on is scored, and the cascade's time includes every call
it made to either judge. Both judges live in this process (one llama.cpp process on the machine,
under the judge lock), one thread each, rows one at a time.

    flock /tmp/assay-judge.lock nice -n -10 .venv/bin/python benchmarks/cascade_each.py \
        --data-dir /work/shared/data/metaeval --suite wikieval \
        --output benchmarks/results/cascade_each_wikieval
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cascade import _FirstOnly
from cascade_split import halves, scored

from assay import __version__
from assay.alignment import fit_cascade
from assay.benchmark.runner import load_suite
from assay.benchmark.suites import SuiteData
from assay.metrics.rag.faithfulness import Faithfulness
from assay.models import llm_factory
from assay.models.cache import ResponseCache
from assay.models.llm import LLM
from assay.models.local_weights import default_judge_path, small_judge_path

BUDGET = 0.5  # the bound on escalated cells, fixed before any figure was seen


def each() -> Faithfulness:
    """The metric measured: faithfulness with one statement per verdict call."""
    return Faithfulness(verdicts="each")


def timed(data: SuiteData, judge: Any) -> dict[str, Any]:
    """`scored` with the wall time per item and the load average around it."""
    before, start = os.getloadavg(), time.perf_counter()
    found = scored(data, judge, each())
    seconds = time.perf_counter() - start
    return {
        **found,
        "seconds_per_item": seconds / len(data.rows),
        "load_average": {"before": before, "after": os.getloadavg()},
    }


def _judge(path: Path, threads: int, cache: Path) -> LLM:
    judge = llm_factory("local", model_path=path, n_threads=threads, cache=ResponseCache(cache))
    judge.provider.start()  # type: ignore[attr-defined]  # LocalProvider: load the weights now
    return judge


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=os.environ.get("ASSAY_METAEVAL_DIR"))
    parser.add_argument("--suite", default="wikieval")
    parser.add_argument("--limit", type=int, default=None, help="units (pairs or rows) to use")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--budget", type=float, default=BUDGET)
    parser.add_argument("--output", required=True)
    parser.add_argument(
        "--replay-budget",
        type=float,
        default=None,
        metavar="B",
        help="fit again with budget B from the answers the run in --output kept (no model, no "
        "time measured), route its test half through that band, and add the figures to --output",
    )
    parser.add_argument(
        "--timed",
        action="store_true",
        help="with --replay-budget: also time the band kept on the test half, both judges loaded "
        "and caches that start empty (the 1.5B judge alone is not timed again)",
    )
    parser.add_argument(
        "--swapped",
        action="store_true",
        help="with --replay-budget: fit on the second half and test on the first",
    )
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="route every band of fit_cascade's grid over the test half from the run's kept "
        "answers (no model) and add the best figure reached under --budget of the cells",
    )
    args = parser.parse_args()
    if (args.timed or args.swapped) and args.replay_budget is None:
        parser.error("--timed and --swapped go with --replay-budget B")
    if args.timed and args.swapped:
        parser.error("--swapped replays are not timed (the run timed the second half only)")
    if args.sweep or args.replay_budget is not None:
        from cascade_each_replay import replay_budget, sweep  # it imports this module

    if args.sweep:
        sweep(Path(args.output), args.data_dir, args.budget)
        return
    if args.replay_budget is not None:
        replay_budget(
            args.replay_budget,
            Path(args.output),
            args.data_dir,
            timed_again=args.timed,
            swapped=args.swapped,
        )
        return
    _, data = load_suite(
        args.suite,
        "faithfulness",
        data_dir=args.data_dir,
        aspect=None,
        split="test",
        limit=args.limit,
        seed=0,  # the runner's default: the same rows and order as cascade.py's runs
    )
    fit_half, test_half = halves(data)
    work = Path(tempfile.mkdtemp(prefix="assay-cascade-each-"))
    report: dict[str, Any] = {
        "command": "flock /tmp/assay-judge.lock nice -n -10 .venv/bin/python "
        + shlex.join(["benchmarks/cascade_each.py", *sys.argv[1:]]),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "assay_version": __version__,
        "cpus": os.cpu_count(),
        "suite": args.suite,
        "metric": "faithfulness, verdicts='each'",
        "units": {"fit": fit_half.n_units, "test": test_half.n_units},
        "limit": args.limit,
        "threads": args.threads,
        "work": str(work),
        "fit_runs": {},
        "test": {},
    }
    output = Path(args.output)
    small = _judge(small_judge_path(), args.threads, work / "fit_first.sqlite")
    strong = _judge(default_judge_path(), args.threads, work / "fit_then.sqlite")

    print(f"fit half ({fit_half.n_units} units): the 0.5B judge", flush=True)
    report["fit_runs"]["first_alone"] = timed(fit_half, _FirstOnly(small))
    _write(report, output)
    print(f"fit half: 0.5B judge {report['fit_runs']['first_alone']['value']}", flush=True)
    print("fit half: the 1.5B judge", flush=True)
    report["fit_runs"]["then_alone"] = timed(fit_half, strong)
    fit = fit_cascade(fit_half.rows, each(), first=small, then=strong, budget=args.budget)
    report["fit"] = {k: v for k, v in fit.to_dict().items() if k != "candidates"}
    _write(report, output)
    print(f"fitted: band {fit.band}, verdict AUC {fit.verdict_auc}", flush=True)

    print(f"test half ({test_half.n_units} units): the 1.5B judge alone", flush=True)
    strong.cache = ResponseCache(work / "test_then_alone.sqlite")
    report["test"]["then_alone"] = timed(test_half, strong)
    _write(report, output)
    print("test half: the cascade", flush=True)
    small.cache = ResponseCache(work / "test_first.sqlite")
    strong.cache = ResponseCache(work / "test_then_cascade.sqlite")
    cascade = fit.cascade()
    report["test"]["cascade"] = timed(test_half, cascade)
    summary = cascade.summary()
    report["test"]["escalated"] = {
        "cells": summary.escalated_share,
        "calls": summary.escalated_calls / summary.calls if summary.calls else None,
        "text": str(summary),
    }
    # the cascade's own first answers, read back: what the 0.5B judge alone would have scored
    report["test"]["first_alone"] = scored(test_half, _FirstOnly(small), each())
    report["test"]["compared"] = compared(report["test"])
    _write(report, output)
    print(markdown(report), flush=True)


def compared(test: dict[str, Any]) -> dict[str, Any]:
    """The cascade against the 1.5B judge alone: interval, decisions kept, time saved."""
    then, cascade = test["then_alone"], test["cascade"]
    pairs = [
        (a, b)
        for a, b in zip(then["values"], cascade["values"], strict=True)
        if a is not None and b is not None
    ]
    kept = sum((a >= 0.5) == (b >= 0.5) for a, b in pairs)
    return {
        "within_then_interval": then["low"] is not None
        and then["low"] <= cascade["value"] <= then["high"],
        "decisions_kept": {"value": kept / len(pairs) if pairs else None, "n": len(pairs)},
        "mean_abs_difference": sum(abs(a - b) for a, b in pairs) / len(pairs) if pairs else None,
        "time_saved": 1 - cascade["seconds_per_item"] / then["seconds_per_item"],
    }


def _write(report: dict[str, Any], output: Path) -> None:
    output.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n")
    if "compared" in report["test"]:
        output.with_suffix(".md").write_text(markdown(report))


def _fmt(f: dict[str, Any]) -> str:
    interval = f" [{f['low']:.3f}, {f['high']:.3f}]" if f.get("low") is not None else ""
    return f"{f['value']:.3f}{interval} (n={f['n']})"


def markdown(report: dict[str, Any]) -> str:
    """The results page."""
    fit, test = report["fit"], report["test"]
    auc = fit["verdict_auc"]
    auc_text = (
        f"{auc['value']:.2f} [{auc['low']:.2f}, {auc['high']:.2f}]"
        if auc.get("low") is not None
        else "n/a"
    )
    cmp = test["compared"]
    runs = [("fit half", name, r) for name, r in report["fit_runs"].items()] + [
        ("test half", name, test[name]) for name in ("then_alone", "cascade")
    ]
    return "\n".join(
        [
            f"# A cascade asked one statement per call: fitted on half of {report['suite']}, "
            "timed on the other half",
            "",
            f"Command: `{report['command']}`",
            "",
            f"Date {report['date']}, assay {report['assay_version']}, {report['cpus']} cores "
            "(shared machine: load averages below), both judges in one process with "
            f"{report['threads']} llama.cpp thread(s) each, rows one at a time, metric "
            f"{report['metric']}. The first {report['units']['fit']} units in the suite's order "
            f"were fitted on (`fit_cascade`, budget {fit['budget']:.0%} of cells, against the "
            f"1.5B judge's answers; labels not read), the other {report['units']['test']} tested "
            "with caches that started empty.",
            "",
            f"Fitted: band ({fit['band'][0]:.3f}, {fit['band'][1]:.3f}), "
            f"{fit['chosen']['escalated_share']:.0%} of the fitted cells escalated; the 0.5B "
            f"judge's P(yes) predicts the 1.5B judge's verdicts there with ROC-AUC {auc_text} "
            f"over {fit['verdicts']} verdicts.",
            "",
            f"## Tested ({test['then_alone']['figure']})",
            "",
            "| | value |",
            "| --- | --- |",
            f"| 1.5B judge alone | {_fmt(test['then_alone'])} |",
            f"| cascade, fitted | {_fmt(test['cascade'])} |",
            "| 0.5B judge alone (the cascade's first answers, read back) | "
            f"{_fmt(test['first_alone'])} |",
            f"| cascade within the 1.5B judge's interval | {cmp['within_then_interval']} |",
            f"| cells escalated | {test['escalated']['cells']:.0%} |",
            f"| calls escalated | {test['escalated']['calls']:.0%} |",
            f"| decisions (score >= 0.5) kept from the 1.5B judge | "
            f"{cmp['decisions_kept']['value']:.3f} (n={cmp['decisions_kept']['n']}) |",
            f"| mean absolute score difference from the 1.5B judge | "
            f"{cmp['mean_abs_difference']:.3f} |",
            f"| seconds per item, 1.5B alone | {test['then_alone']['seconds_per_item']:.2f} |",
            f"| seconds per item, cascade | {test['cascade']['seconds_per_item']:.2f} |",
            f"| time saved against the 1.5B judge alone | {cmp['time_saved']:.0%} |",
            "",
            f"Cascade: {test['escalated']['text']}.",
            "",
            "## Every timed run",
            "",
            "| half | run | figure | seconds per item | load average before / after |",
            "| --- | --- | --- | --- | --- |",
            *(
                f"| {half} | {name} | {_fmt(r)} | {r['seconds_per_item']:.2f} | "
                f"{tuple(round(x, 2) for x in r['load_average']['before'])} / "
                f"{tuple(round(x, 2) for x in r['load_average']['after'])} |"
                for half, name, r in runs
            ),
            "",
            *_replays(report),
            *_sweep_lines(report.get("sweep")),
        ]
    )


def over(fit: dict[str, Any]) -> str:
    """A note when the band kept escalates more than the fit's budget (no candidate met it), as
    the fit said (`within_budget`; reckoned from the shares for results written before it)."""
    within = fit.get("within_budget", fit["chosen"]["escalated_share"] <= fit["budget"])
    if within:
        return ""
    return " (over the budget: no candidate band met it, so the one escalating least was kept)"


def _replays(report: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for name, replay in report.get("replays", {}).items():
        fit = replay["fit"]
        lines += [
            f"## Replayed: fitted with {name} (no model"
            + ("; the band kept then timed)" if replay.get("timed") else ", no time measured)"),
            "",
            f"Command: `{replay.get('command', '')}`",
            "",
            f"The run's kept answers, fitted again on {replay.get('fitted_on', 'the fit half')}"
            f"{_grid(replay)} with budget "
            f"{replay['budget']:.0%} of cells: band ({fit['band'][0]:.3f}, {fit['band'][1]:.3f}), "
            f"{fit['chosen']['escalated_share']:.0%} of the fitted cells escalated"
            f"{over(fit)}. On {replay.get('tested_on', 'the test half')}: "
            f"{_fmt(replay['cascade'])}, within the 1.5B judge's interval"
            f"{_interval(replay)}: "
            f"{replay['within_then_interval']}; cells escalated "
            f"{replay['escalated']['cells']:.0%}, calls escalated "
            f"{replay['escalated']['calls']:.0%} ({replay['escalated']['text']}).",
            "",
            *_timed_lines(replay.get("timed"), report),
        ]
    return lines


def _interval(replay: dict[str, Any]) -> str:
    if "then_interval" not in replay:
        return ""
    low, high = replay["then_interval"]
    return f" on those rows [{low:.3f}, {high:.3f}]"


def _grid(replay: dict[str, Any]) -> str:
    """Which `fit_cascade` a replay used: its date and how many candidates it routed (replays
    made before 2026-12-07 used a coarser grid and did not record it)."""
    if "candidates" not in replay:
        return " (by the coarser grid of an earlier `fit_cascade`)"
    took = f", fitted in {replay['fit_seconds']:.0f} s" if "fit_seconds" in replay else ""
    return f" ({replay['date'][:10]}, {replay['candidates']} candidates{took})"


def _sweep_lines(found: dict[str, Any] | None) -> list[str]:
    if not found:
        return []

    def band(b: dict[str, Any]) -> str:
        return f"band ({b['band'][0]:.3f}, {b['band'][1]:.3f}): {b['value']:.3f}, {b['cells']:.0%} of cells"

    best, fewest = found["best_under_budget"], found["fewest_cells_inside_then_interval"]
    low, high = found["then_interval"]
    return [
        "## Every band of the fit's grid on the test half (an oracle; no model, no time)",
        "",
        f"Command: `{found['command']}`",
        "",
        f"All {found['bands']} bands of `fit_cascade`'s grid (edges at the 0.5B judge's P(yes) "
        "quantiles on the test half itself, steps of 1/40) routed over the test half's kept "
        "answers. Judged on the rows they are scored on, these bound what any fitted band "
        f"could reach there. Best under {found['budget']:.0%} of the cells escalated: "
        + (band(best) if best else "none")
        + f". Fewest cells escalated by a band whose figure lies inside the 1.5B judge's "
        f"interval [{low:.3f}, {high:.3f}]: " + (band(fewest) if fewest else "none") + ".",
        "",
    ]


def _timed_lines(timed: dict[str, Any] | None, report: dict[str, Any]) -> list[str]:
    if not timed:
        return []
    then = report["test"]["then_alone"]
    return [
        f"Timed on the test half ({timed['date']}, both judges loaded, caches that started "
        f"empty): {_fmt(timed)}, {timed['seconds_per_item']:.2f} s per item against "
        f"{then['seconds_per_item']:.2f} for the 1.5B judge alone (timed in the run above): "
        f"{timed['time_saved']:.0%} of the time saved; {timed['escalated']['text']}. Load "
        f"average before / after: {tuple(round(x, 2) for x in timed['load_average']['before'])}"
        f" / {tuple(round(x, 2) for x in timed['load_average']['after'])}.",
        "",
    ]


if __name__ == "__main__":
    main()
