"""A judge cascade measured with two real local judges (issue #42, part 5).

The first judge is Qwen2.5-Coder-0.5B (`assay[small-judge]`), the stronger one the embedded 1.5B
judge. With `--calibrate-on-dev N`, the band is chosen before any test row is seen: the 0.5B judge
answers N BEGIN dev rows (stratified) with and without a system prompt (`CALIBRATION_SYSTEM_PROMPT`),
the variant that less often answers statements it was never asked is kept, and the band is the
30th to 70th percentile of its P(yes) on the asked statements (`MIDDLE`). Then, per suite (BEGIN
test, a stratified sample; WikiEval faithfulness with `--suites begin,wikieval`), `assay
benchmark`'s own runner scores faithfulness three times:

1. the 1.5B judge alone (the reference: its figures, their intervals, its seconds per item);
2. `Cascade(first=0.5B, then=1.5B, band=...)`: share of cells and calls escalated, seconds per
   item, figures, and how many decisions (score >= 0.5) and how much ROC-AUC it keeps;
3. the 0.5B judge alone, stopped after the asked statements as the cascade stops it: with
   faithfulness's default settings (sentences split without a model) its calls are the cascade's
   first calls, answered from the cache those filled, so it shows what the first judge alone
   would have scored, never its speed. It runs last, after (1) and (2) are compared and written.

Both servers live in this one process (one llama.cpp process on the machine, under the judge
lock), with one thread each and rows scored one at a time, so the two judges never ask for more
than the two cores; (1) and (2) are timed alike with no persistent cache. The load average is
recorded beside every time: the machine is shared. Results go to benchmarks/results/cascade.{json,md},
rewritten after each run so a partial run still leaves its figures. Usage:

    flock /tmp/assay-judge.lock .venv/bin/python benchmarks/cascade.py \
        --data-dir /work/shared/data/metaeval --calibrate-on-dev 40 [--suites begin,wikieval] \
        [--limit N] [--band LOW HIGH]

Another suite or size later, with the band an earlier run chose on dev (never tuned on test):
`--band-from benchmarks/results/cascade.json --suites wikieval --output
benchmarks/results/cascade_wikieval`. The page itself is rendered by `cascade_report.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import cascade_dev
from cascade_report import markdown

from assay import __version__
from assay.benchmark.runner import run_benchmark
from assay.engine.checkpoint import saved_cells
from assay.metrics.rag.faithfulness import Faithfulness
from assay.models import Cascade, llm_factory
from assay.models.cache import ResponseCache
from assay.models.cascade import verdict_probabilities
from assay.models.llm import LLM
from assay.models.local import LocalProvider, ServerSettings
from assay.models.local_weights import default_judge_path, small_judge_path
from assay.schema.outcome import Ok
from assay.stats.bootstrap import bootstrap
from assay.stats.classification import roc_auc
from assay.stats.proportion import proportion

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
# BEGIN test is a stratified sample; 300 is what the issue asks, 120 what a loaded 2-core machine
# ran in the time this was measured in (the results say which was used). WikiEval on request.
SUITES = {"begin": {"limit": 300}, "wikieval": {"limit": None}}
DEFAULT_SUITES = "begin"
BAND = (0.2, 0.8)  # fixed before the test runs; see the results file for how it was chosen
HEADLINE = {"begin": "roc_auc", "wikieval": "pairwise_accuracy"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=os.environ.get("ASSAY_METAEVAL_DIR"))
    parser.add_argument("--suites", default=DEFAULT_SUITES, help=f"of {', '.join(SUITES)}")
    parser.add_argument("--band", nargs=2, type=float, default=BAND)
    parser.add_argument("--split", default="test")
    parser.add_argument("--limit", type=int, default=None, help="override each suite's limit")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="llama.cpp threads per judge (1: two servers never ask for more than the 2 cores, "
        "and llama.cpp's spin-waiting threads suffer less on a shared machine)",
    )
    parser.add_argument("--output", default=str(RESULTS / "cascade"))
    parser.add_argument(
        "--first-system-prompt", default=None, help="a system prompt for the 0.5B judge only"
    )
    parser.add_argument(
        "--calibrate-on-dev",
        type=int,
        default=0,
        metavar="N",
        help="choose the band (and whether the 0.5B judge gets CALIBRATION_SYSTEM_PROMPT) from "
        "its answers on N BEGIN dev rows before the test runs",
    )
    parser.add_argument(
        "--choose-on-dev",
        type=int,
        default=0,
        metavar="N",
        help="both judges answer N BEGIN dev rows; the band and tolerance kept are those whose "
        "routed scores lie closest to the 1.5B judge's within --budget (cascade_dev.py)",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=None,
        help="with --choose-on-dev: the share of dev cells the cascade may escalate",
    )
    parser.add_argument(
        "--tolerance", type=float, default=0.0, help="the measured cascade's tolerance"
    )
    parser.add_argument(
        "--band-from",
        metavar="RESULTS_JSON",
        default=None,
        help="take the band, the 0.5B judge's system prompt and their dev calibration from an "
        "earlier run's results (so another suite is measured with the band chosen on BEGIN dev)",
    )
    parser.add_argument(
        "--first-from-cache",
        metavar="WORK",
        default=None,
        help="only score the 0.5B judge alone again, stopped after the asked statements, from "
        "the cascade's cache in WORK (an earlier run's work folder; no model is loaded), and "
        "update the results in --output",
    )
    parser.add_argument(
        "--replay-tolerance",
        metavar="T",
        type=float,
        default=None,
        help="route the answers an earlier run kept (its caches, named in --output's JSON) "
        "through Cascade(tolerance=T) and add its figures to --output; no model is loaded",
    )
    parser.add_argument(
        "--replay-band-from",
        metavar="RESULTS_JSON",
        default=None,
        help="route the answers the run in --output kept through the band and tolerance another "
        "run chose on dev (its JSON), and add the figures to --output; no model is loaded",
    )
    parser.add_argument(
        "--refit-dev",
        action="store_true",
        help="fit the band of the run in --output again from its dev caches (no model) and add "
        "what the fit reports to its record",
    )
    args = parser.parse_args()
    if args.refit_dev:
        refit_dev(Path(args.output), args.data_dir)
        return
    if args.replay_band_from:
        replay_band_from(Path(args.replay_band_from), Path(args.output), args.data_dir)
        return
    if args.first_from_cache:
        first_from_cache(Path(args.first_from_cache), Path(args.output), args.data_dir)
        return
    if args.replay_tolerance is not None:
        replay_tolerance(args.replay_tolerance, Path(args.output), args.data_dir)
        return
    command = "flock /tmp/assay-judge.lock .venv/bin/python " + shlex.join(
        ["benchmarks/cascade.py", *sys.argv[1:]]
    )
    work = Path(tempfile.mkdtemp(prefix="assay-cascade-"))
    calibration = None
    if args.calibrate_on_dev:
        calibration = calibrate(args.data_dir, args.calibrate_on_dev, args.threads)
        args.band = calibration["band"]
        args.first_system_prompt = calibration["system_prompt"]
    elif args.band_from:
        calibration = _calibration_from(Path(args.band_from))
        args.band = calibration["band"]
        args.first_system_prompt = calibration["system_prompt"]
        args.tolerance = calibration.get("tolerance", 0.0)
    small = llm_factory(
        "local",
        model_path=small_judge_path(),
        n_threads=args.threads,
        cache=ResponseCache(work / "first.sqlite"),
        system_prompt=args.first_system_prompt,
    )
    # The 1.5B judge's answers are kept, each run in a cache of its own that starts empty (so
    # nothing is answered from an earlier run and the times stay honest): with the 0.5B judge's
    # cache they let `--replay-tolerance` route the same answers with another tolerance later.
    strong = llm_factory(
        "local", model_path=default_judge_path(), n_threads=args.threads, cache=False
    )
    for judge in (small, strong):
        judge.provider.start()  # type: ignore[attr-defined]  # LocalProvider: load weights now
    if args.choose_on_dev:
        calibration = _choose_on_dev(args, work, small, strong)
        args.band, args.tolerance = calibration["band"], calibration["tolerance"]
        small.cache = ResponseCache(work / "first.sqlite")  # the test runs start empty
    report: dict[str, Any] = {
        "command": command,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "assay_version": __version__,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "band": list(args.band),
        "tolerance": args.tolerance,
        "first_system_prompt": args.first_system_prompt,
        "calibration": calibration,
        "first": small.identity(),
        "then": strong.identity(),
        "concurrency": args.concurrency,
        "threads": args.threads,
        "split": args.split,
        "suites": {},
        "runs": {},  # each run's headline figure and cost as soon as it ends
        "work": str(work),  # the caches the replays read (kept even if a later suite is cut off)
    }
    output = Path(args.output)
    for suite in args.suites.split(","):
        limit = args.limit if args.limit is not None else SUITES[suite]["limit"]
        common = {
            "data_dir": args.data_dir,
            "split": args.split,
            "limit": limit,
            "max_concurrency": args.concurrency,
            "show_progress": False,
        }
        runs = work / suite
        print(f"{suite}: the 1.5B judge alone", flush=True)
        runs.mkdir(parents=True, exist_ok=True)
        strong.cache = ResponseCache(runs / "then_alone.sqlite")
        alone = _timed(suite, strong, runs / "then", common)
        _note(report, output, suite, "then_alone", alone)
        strong.cache = ResponseCache(runs / "then_cascade.sqlite")
        cascade = Cascade(
            first=small, then=strong, band=(args.band[0], args.band[1]), tolerance=args.tolerance
        )
        print(f"{suite}: the cascade", flush=True)
        cascaded = _timed(suite, cascade, runs / "cascade", common)
        summary = cascade.summary()
        _note(report, output, suite, "cascade", cascaded, str(summary))
        print(f"{suite}: {summary}", flush=True)
        found = report["suites"][suite] = _compare(suite, alone, cascaded, summary)
        _write(report, output)
        print(json.dumps(found["headline"], indent=1), flush=True)
        print(f"{suite}: the 0.5B judge alone", flush=True)
        first = _timed(suite, _FirstOnly(small), runs / "first", common)
        found["records"]["first_alone"] = first
        found["headline"]["first_alone"] = _figure(first, HEADLINE[suite])
        _note(report, output, suite, "first_alone", first)
    _write(report, output)


# Tried on dev against the small judge's habit of copying the prompt's four-line example.
CALIBRATION_SYSTEM_PROMPT = (
    "Answer only the numbered statements you are given: exactly one line per statement, then stop."
)
MIDDLE = (0.3, 0.7)  # the band: these quantiles of the chosen variant's P(yes) on dev


class _FirstOnly(Cascade):
    """The first judge alone, noting for each verdict call P(yes) of the statements asked and
    whether it answered statements never asked (the prompt's numbered <items> say how many)."""

    def __init__(self, judge: Any) -> None:
        super().__init__(first=judge, then=judge)
        self.asked = 0
        self.probabilities: list[float] = []
        self.ran_on = 0
        self.calls_seen = 0

    async def agenerate(self, messages: Any, *args: Any, **params: Any) -> Any:
        items = re.search(r"<items>(.*?)</items>", str(messages[-1].content), re.DOTALL)
        self.asked = len(re.findall(r"^\d+\.", items.group(1), re.MULTILINE)) if items else 0
        return await super().agenerate(messages, *args, **params)

    def unsure(self, response: Any, asked: int | None = None) -> bool:
        found = verdict_probabilities(response.generations[0].logprobs, *self.labels)
        self.calls_seen += 1
        self.ran_on += len(found) > self.asked
        self.probabilities += found[: self.asked]
        return False  # never escalates: this is the first judge alone


def _choose_on_dev(args: Any, work: Path, small: LLM, strong: LLM) -> dict[str, Any]:
    """`cascade_dev.choose_on_dev` on BEGIN dev, each judge's answers in a dev cache of its own
    (kept in the work folder: `--refit-dev` fits again from them without a model)."""
    dev = work / "dev"
    dev.mkdir(parents=True, exist_ok=True)
    small.cache = ResponseCache(dev / "first.sqlite")
    strong.cache = ResponseCache(dev / "then.sqlite")
    budget = args.budget if args.budget is not None else cascade_dev.BUDGET
    chosen = cascade_dev.choose_on_dev(small, strong, args.data_dir, args.choose_on_dev, budget)
    print(f"chosen on dev: {chosen['chosen']}", flush=True)
    return {**chosen, "system_prompt": args.first_system_prompt}


def refit_dev(output: Path, data_dir: str | None) -> None:
    """The dev choice of the run in `output` fitted again from its dev caches (no model): the
    same band and tolerance must come out, or nothing is written; the record gains what the fit
    reports now (how well the 0.5B judge's P(yes) predicts the 1.5B judge's verdicts)."""
    report = json.loads(output.with_suffix(".json").read_text())
    recorded = report.get("calibration") or {}
    if "budget" not in recorded:
        raise SystemExit(f"{output}: that run chose no band with --choose-on-dev")
    dev = Path(report["work"]) / "dev"
    small = _cached_judge(
        small_judge_path(), report, dev / "first.sqlite", report.get("first_system_prompt")
    )
    strong = _cached_judge(default_judge_path(), report, dev / "then.sqlite")
    again = cascade_dev.choose_on_dev(small, strong, data_dir, recorded["rows"], recorded["budget"])
    if (again["band"], again["tolerance"]) != (recorded["band"], recorded["tolerance"]):
        raise SystemExit(f"the dev fit gave {again['band']} {again['tolerance']}, not the run's")
    report["calibration"] = {**recorded, **again}
    report["refit"] = f".venv/bin/python benchmarks/cascade.py --refit-dev --output {output}"
    _write(report, output)
    print(f"verdict AUC on dev: {again['verdict_auc']}", flush=True)


def _calibration_from(path: Path) -> dict[str, Any]:
    """An earlier run's dev calibration (band and system prompt), noting which run chose it."""
    earlier = json.loads(path.read_text())
    if not earlier.get("calibration"):
        raise SystemExit(f"--band-from {path}: that run chose no band on dev (no 'calibration')")
    return {**earlier["calibration"], "chosen_by": f"{path} of {earlier['date']}"}


def calibrate(data_dir: str | None, rows: int, threads: int) -> dict[str, Any]:
    """On BEGIN dev: with and without CALIBRATION_SYSTEM_PROMPT, how often the 0.5B judge
    answers statements never asked; keep the variant that does so less, and take MIDDLE's
    quantiles of its P(yes) as the band. Nothing of the test split is seen."""
    import statistics

    found: dict[str, Any] = {}
    for name, system_prompt in (("plain", None), ("system_prompt", CALIBRATION_SYSTEM_PROMPT)):
        judge = _FirstOnly(
            llm_factory(
                "local",
                model_path=small_judge_path(),
                n_threads=threads,
                cache=False,
                system_prompt=system_prompt,
            )
        )
        with tempfile.TemporaryDirectory() as runs:
            run_benchmark(
                "begin",
                Faithfulness(),
                llm=judge,
                data_dir=data_dir,
                split="dev",
                limit=rows,
                runs_dir=runs,
                max_concurrency=1,
                show_progress=False,
            )
        cuts = statistics.quantiles(judge.probabilities, n=10)
        found[name] = {
            "system_prompt": system_prompt,
            "calls": judge.calls_seen,
            "ran_on": judge.ran_on,
            "band": (cuts[int(MIDDLE[0] * 10) - 1], cuts[int(MIDDLE[1] * 10) - 1]),
        }
        print(f"calibration {name}: {found[name]}", flush=True)
    chosen = min(found.values(), key=lambda v: v["ran_on"] / max(1, v["calls"]))
    return {
        "rows": rows,
        "variants": found,
        "band": chosen["band"],
        "system_prompt": chosen["system_prompt"],
    }


class _CacheOnly(LocalProvider):
    """The 0.5B judge's identity (so its cache keys), with no server: a call the cache does not
    hold fails instead of loading the model."""

    async def complete(self, request: Any) -> Any:
        raise AssertionError("not in the cascade's cache: no model is loaded here")


def _cached_judge(
    model_path: Any, report: dict[str, Any], cache: Path, system_prompt: str | None = None
) -> LLM:
    """A local judge's identity (so its cache keys) answering only from `cache`: no model."""
    settings = ServerSettings(str(model_path), report.get("threads", 1), 4096, 2)
    return LLM(_CacheOnly(settings), cache=ResponseCache(cache), system_prompt=system_prompt)


def _replayed_rows(alone: dict[str, Any], data_dir: str | None) -> dict[str, Any]:
    """The runner's settings that give the rows the measured run scored, one at a time."""
    return {
        "data_dir": data_dir or alone["data"]["directory"],
        "split": alone["split"],
        "limit": alone["limit"],
        "max_concurrency": 1,
        "show_progress": False,
    }


def first_from_cache(work: Path, output: Path, data_dir: str | None) -> None:
    """The 0.5B judge alone as the cascade asked it (stopped after the asked statements), scored
    from the cascade's cache; the run's earlier 0.5B-alone figure, asked without the stop, is
    kept beside it as `first_alone_unstopped`."""
    report = json.loads(output.with_suffix(".json").read_text())
    judge = _cached_judge(small_judge_path(), report, work / "first.sqlite")
    for suite, found in report["suites"].items():
        common = _replayed_rows(found["records"]["then_alone"], data_dir)
        with tempfile.TemporaryDirectory() as runs:
            record = _timed(suite, _FirstOnly(judge), Path(runs), common)
        if "first_alone" in found["records"] and "first_alone_unstopped" not in found["records"]:
            found["records"]["first_alone_unstopped"] = found["records"]["first_alone"]
            found["headline"]["first_alone_unstopped"] = found["headline"]["first_alone"]
        found["records"]["first_alone"] = record
        found["headline"]["first_alone"] = _figure(record, found["headline_figure"])
        print(f"{suite}: {found['headline']['first_alone']} ({record['cells']})", flush=True)
    report["first_from_cache"] = (
        "python benchmarks/cascade.py --first-from-cache WORK (the run's work folder)"
    )
    _write(report, output)


def replay_tolerance(tolerance: float, output: Path, data_dir: str | None) -> None:
    """The measured run's answers, routed with its band and `tolerance`. No time is measured:
    with the same first calls and a subset of the strong ones it is at most the measured
    cascade's."""
    report = _replayed(output, data_dir, None, tolerance, f"{tolerance:g}")
    data = f"--data-dir {data_dir} " if data_dir else ""
    report["replay"] = (
        f".venv/bin/python benchmarks/cascade.py {data}--replay-tolerance T --output {output}"
    )
    _write(report, output)


def replay_band_from(source: Path, output: Path, data_dir: str | None) -> None:
    """The answers the run in `output` kept, routed with the band and tolerance the run in
    `source` chose on dev. No time is measured."""
    chosen = _calibration_from(source)
    report = json.loads(output.with_suffix(".json").read_text())
    if chosen.get("system_prompt") != report.get("first_system_prompt"):
        raise SystemExit(f"{source} asked the 0.5B judge with another system prompt")
    band, tolerance = (chosen["band"][0], chosen["band"][1]), chosen.get("tolerance", 0.0)
    noted = {"band": list(band), "tolerance": tolerance, "chosen_by": chosen["chosen_by"]}
    report = _replayed(output, data_dir, band, tolerance, f"band from {source.name}", noted)
    data = f"--data-dir {data_dir} " if data_dir else ""
    report["replay_band"] = (
        f".venv/bin/python benchmarks/cascade.py {data}--replay-band-from {source} "
        f"--output {output}"
    )
    _write(report, output)


def _replayed(
    output: Path,
    data_dir: str | None,
    band: tuple[float, float] | None,
    tolerance: float,
    key: str,
    noted: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The run in `output`, each suite's answers routed with `band` (None: the run's own) and
    `tolerance`, its figures added under `replays[key]`: the 0.5B judge's answers from the
    cascade's cache, the 1.5B judge's from the cascade run's cache and, for calls only the new
    routing escalates, from its alone run's (which holds every call). The measured band and
    tolerance are routed first and must give the measured cascade's scores exactly, or nothing
    is written."""
    report = json.loads(output.with_suffix(".json").read_text())
    work = Path(report["work"])
    first = _cached_judge(
        small_judge_path(),
        report,
        work / "first.sqlite",
        system_prompt=report.get("first_system_prompt"),
    )
    measured_route = ((report["band"][0], report["band"][1]), report.get("tolerance", 0.0))
    for suite, found in report["suites"].items():
        alone, measured = found["records"]["then_alone"], found["records"]["cascade"]
        merged = _merged_caches(
            work / suite / "then_cascade.sqlite", work / suite / "then_alone.sqlite"
        )
        then = _cached_judge(default_judge_path(), report, merged)
        common = _replayed_rows(alone, data_dir)
        routes = (measured_route, (band or measured_route[0], tolerance))
        try:
            for index, (route_band, route_tolerance) in enumerate(routes):
                cascade = Cascade(
                    first=first, then=then, band=route_band, tolerance=route_tolerance
                )
                with tempfile.TemporaryDirectory() as runs:
                    record = _timed(suite, cascade, Path(runs), common)
                    if index == 0:
                        if _values(record) != _values(measured):
                            raise SystemExit(f"{suite}: the measured routing was not reproduced")
                        continue
                    compared = _compare(suite, alone, record, cascade.summary())
        finally:
            shutil.rmtree(merged.parent, ignore_errors=True)
        for name in ("seconds_per_item_cascade", "time_saved_share"):
            compared["headline"].pop(name)
        compared.pop("records")
        compared.update(noted or {})
        found.setdefault("replays", {})[key] = compared
        print(f"{suite}: {key}: {compared['summary']}", flush=True)
        print(json.dumps(compared["headline"], indent=1), flush=True)
    return report


def _merged_caches(*sources: Path) -> Path:
    """One cache of the 1.5B judge's answers, each call's from the first source holding it: the
    cascade run's own answers first (so the measured routing is reproduced exactly; llama.cpp's
    log-probabilities for the same call can differ in the last digits between runs), then the
    alone run's for calls only another routing escalates."""
    import sqlite3

    merged = Path(tempfile.mkdtemp(prefix="assay-cascade-merged-")) / "then.sqlite"
    ResponseCache(merged)  # the cache's own table
    db = sqlite3.connect(merged)
    for index, source in enumerate(sources):
        db.execute(f"ATTACH DATABASE ? AS source{index}", (str(source),))
        db.execute(f"INSERT OR IGNORE INTO entries SELECT * FROM source{index}.entries")
    db.commit()
    db.close()
    return merged


def _timed(suite: str, judge: Any, runs_dir: Path, common: dict[str, Any]) -> dict[str, Any]:
    """The runner's record of faithfulness on `suite` with `judge`, with the load average."""
    before = os.getloadavg()
    record = run_benchmark(suite, Faithfulness(), llm=judge, runs_dir=runs_dir, **common)
    record["load_average"] = {"before": before, "after": os.getloadavg()}
    return record


def _note(
    report: dict[str, Any], output: Path, suite: str, name: str, record: dict[str, Any], *extra: str
) -> None:
    """Keep a finished run's headline and cost in the report now (a later run may not finish)."""
    report["runs"][f"{suite}/{name}"] = {
        "figure": _figure(record, HEADLINE[suite]),
        "seconds_per_item": record["cost"]["seconds_per_item"],
        "load_average": record["load_average"],
        "notes": list(extra),
    }
    _write(report, output)


def _values(record: dict[str, Any]) -> dict[int, float]:
    return {
        cell.row: float(cell.outcome.value)
        for cell in saved_cells(record["run_dir"])
        if isinstance(cell.outcome, Ok) and isinstance(cell.outcome.value, (int, float))
    }


def _figure(record: dict[str, Any], name: str) -> dict[str, Any]:
    found = next(f for f in record["figures"] if f["name"] == name)
    return {key: found.get(key) for key in ("value", "low", "high", "n")}


def _compare(
    suite: str, alone: dict[str, Any], cascaded: dict[str, Any], summary: Any
) -> dict[str, Any]:
    headline = HEADLINE[suite]
    then_fig, cascade_fig = _figure(alone, headline), _figure(cascaded, headline)
    then_values, cascade_values = _values(alone), _values(cascaded)
    rows = sorted(set(then_values) & set(cascade_values))
    threshold = 0.5
    same = sum((then_values[r] >= threshold) == (cascade_values[r] >= threshold) for r in rows)
    then_time = alone["cost"]["seconds_per_item"]
    cascade_time = cascaded["cost"]["seconds_per_item"]
    result: dict[str, Any] = {
        "headline_figure": headline,
        "headline": {
            "then_alone": then_fig,
            "cascade": cascade_fig,
            "cascade_within_then_interval": then_fig["low"] is not None
            and then_fig["low"] <= cascade_fig["value"] <= then_fig["high"],
            "cells_escalated": proportion(summary.escalated_cells, summary.cells).to_dict(),
            "calls_escalated": proportion(summary.escalated_calls, summary.calls).to_dict(),
            "seconds_per_item_then_alone": then_time,
            "seconds_per_item_cascade": cascade_time,
            "time_saved_share": 1 - cascade_time / then_time if then_time else None,
            "decisions_kept_at_0.5": proportion(same, len(rows)).to_dict(),
            "mean_abs_score_difference": sum(abs(then_values[r] - cascade_values[r]) for r in rows)
            / len(rows)
            if rows
            else None,
        },
        "summary": str(summary),
        "counts": {
            "calls": summary.calls,
            "escalated_calls": summary.escalated_calls,
            "direct_calls": summary.direct_calls,
            "cells": summary.cells,
            "escalated_cells": summary.escalated_cells,
        },
        "records": {"then_alone": alone, "cascade": cascaded},
    }
    if suite == "begin":
        labels = _labels(alone, rows)
        if labels is not None:
            # ROC-AUC of the cascade minus the 1.5B judge's, on the same rows (paired, stratified)
            difference = bootstrap(
                lambda y, a, b: _difference(y, a, b),
                [labels, [cascade_values[r] for r in rows], [then_values[r] for r in rows]],
                strata=labels,
            )
            result["headline"]["roc_auc_difference_cascade_minus_then"] = difference.to_dict()
    return result


def _difference(y: Any, a: Any, b: Any) -> float | None:
    first, second = roc_auc(y, a), roc_auc(y, b)
    return None if first is None or second is None else first - second


def _labels(record: dict[str, Any], rows: list[int]) -> list[int] | None:
    """BEGIN's labels by row, loaded as the runner loaded them."""
    from assay.benchmark.runner import load_suite

    _, data = load_suite(
        "begin",
        "faithfulness",
        data_dir=record["data"]["directory"],
        aspect=record["aspect"],
        split=record["split"],
        limit=record["limit"],
        seed=record["seed"],
    )
    return [data.labels[r] for r in rows]


def _write(report: dict[str, Any], stem: Path) -> None:
    stem.parent.mkdir(parents=True, exist_ok=True)
    stem.with_suffix(".json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    stem.with_suffix(".md").write_text(markdown(report, SUITES))


if __name__ == "__main__":
    main()
