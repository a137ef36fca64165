"""Seconds per sample of each judged metric on the embedded local judge (issue 4's speed floor).

Runs every metric alone over examples/rag_samples.jsonl with the cache off, so each number is a
cold judgement, and writes benchmarks/results/local_judge_speed.{json,md}. The judge must already
be assembled (run the README's first command once). Usage:

    .venv/bin/python benchmarks/local_judge_speed.py [--metrics faithfulness,context_recall] [--threads 2] [--parallel 2]

Before the clock starts, every metric scores one made-up sample (`WARM_UP`, not in the data): the
first judgement of a process pays one-off costs (the server's compute buffers, the sentence
splitter, the embedding model), about 3 s a sample when it fell on the first timed metric. The
warm-up's prompts share nothing with the data's beyond the instructions, so the timed rows are
still read cold by the server.

The README's main command scores the five default metrics in one `evaluate` run, which keeps
both llama.cpp slots busy across metrics; summing five single-metric runs of five samples leaves
a slot idle at each run's tail. So the five are also timed together, first, as that command runs
them (the CLI's default concurrency). The server is then restarted before the single-metric runs,
so none of them finds the combined run's prompts in the server's prompt cache.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from datetime import datetime, timezone
from pathlib import Path

from assay import __version__, evaluate
from assay.metrics.registry import create_metric
from assay.models.defaults import default_embeddings
from assay.models.factory import llm_factory
from assay.models.local import SERVERS

ROOT = Path(__file__).resolve().parent
WARM_UP = {
    "user_input": "Which metal is the lighthouse on Karsk Point painted to resist?",
    "response": "The Karsk Point lighthouse is painted with a zinc coating against salt corrosion.",
    "retrieved_contexts": [
        "Karsk Point lighthouse was built in 1911. Its iron tower is coated with zinc paint, "
        "renewed every eight years, because the sea air corrodes bare iron."
    ],
    "reference": "It is coated with zinc paint to protect the iron from corrosion by sea air.",
}
# The README's five (defaults), then opt-in settings for comparison: one verdict call per
# statement, and the claim splits.
EACH = "faithfulness(verdicts=each)"
DEFAULT_METRICS = (
    "faithfulness",
    "answer_relevancy",
    "context_precision",
    "context_recall",
    "factual_correctness",
    EACH,
    "faithfulness(statements=claims)",
    "factual_correctness(statements=claims)",
)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=str(ROOT.parent / "examples" / "rag_samples.jsonl"))
    parser.add_argument("--metrics", default=",".join(DEFAULT_METRICS))
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument(
        "--parallel", type=int, default=None, help="llama.cpp slots (default: the judge's own)"
    )
    args = parser.parse_args()

    from assay.cli.metric_spec import parse_metric, split_top_level

    local = {"n_threads": args.threads}
    if args.parallel:
        local["n_parallel"] = args.parallel
    llm = llm_factory("local", cache=False, **local)
    embeddings = default_embeddings(cache=False)
    rows = []
    metrics = [
        (spec, parse_metric(spec) if "(" in spec else create_metric(spec))
        for spec in split_top_level(args.metrics)
    ]
    default_five = [metric for spec, metric in metrics if spec in DEFAULT_METRICS[:5]]
    together = None
    if len(default_five) == 5:
        together = _time_together(args.data, default_five, llm, embeddings)
        print(json.dumps({"five_together": together}))
        SERVERS.stop_all()  # a fresh server: no prompt of the combined run stays cached
    _warm_up([metric for _, metric in metrics], llm, embeddings)
    for spec, metric in metrics:
        started = time.perf_counter()
        result = evaluate(
            args.data,
            [metric],
            llm=llm,
            embeddings=embeddings,
            show_progress=False,
            max_concurrency=2,
        )
        seconds = time.perf_counter() - started
        summary = result.summary(metric.name)
        usage = result.usage()
        rows.append(
            {
                "metric": spec,
                "samples": summary.n_rows,
                "ok": summary.n_ok,
                "errors": summary.n_error,
                "seconds_per_sample": round(seconds / summary.n_rows, 2),
                "mean": summary.mean,
                "requests_per_sample": round(usage.requests / summary.n_rows, 2),
                "input_tokens_per_sample": round(usage.input_tokens / summary.n_rows),
                "output_tokens_per_sample": round(usage.output_tokens / summary.n_rows),
            }
        )
        print(json.dumps(rows[-1]))
    report = {
        "assay_version": __version__,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "processor": platform.machine(),
        },
        "judge": llm.identity(),
        "threads": args.threads,
        "parallel": llm.provider.settings.n_parallel,  # llama.cpp slots
        "data": args.data,
        "results": rows,
        "five_together": together,
        "load_average_at_end": os.getloadavg(),
    }
    out = ROOT / "results"
    out.mkdir(exist_ok=True)
    (out / "local_judge_speed.json").write_text(json.dumps(report, indent=2))
    lines = [
        "# Local judge speed",
        "",
        f"assay {__version__}, {report['date']}, judge {llm.model}, "
        f"{args.threads} threads, {report['parallel']} slots, {os.cpu_count()} cores; load average at the end {os.getloadavg()[0]:.1f} "
        "(other work on the machine inflates these numbers). "
        "Every metric scored one made-up sample before the clock started.",
        "",
        "| metric | samples | ok | s / sample | requests / sample | in tok / sample | out tok / sample | mean |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        mean = "n/a" if row["mean"] is None else f"{row['mean']:.3f}"
        lines.append(
            f"| {row['metric']} | {row['samples']} | {row['ok']} | {row['seconds_per_sample']} | "
            f"{row['requests_per_sample']} | {row['input_tokens_per_sample']} | {row['output_tokens_per_sample']} | {mean} |"
        )
    faithfulness = next((row for row in rows if row["metric"] == "faithfulness"), None)
    if faithfulness is not None:
        met = faithfulness["seconds_per_sample"] <= 5.0
        lines += [
            "",
            f"Floor (issue 4): faithfulness at most 5 s per sample on this judge: "
            f"{'met' if met else 'NOT met'} ({faithfulness['seconds_per_sample']} s).",
        ]
    five = [row for row in rows if "(" not in row["metric"]]
    if len(five) == 5:
        total = sum(row["seconds_per_sample"] for row in five)
        lines += [
            f"The five default metrics, their single-metric runs summed: {total:.1f} s per sample, "
            f"{sum(row['requests_per_sample'] for row in five):.1f} model requests per sample (judge calls and embedding batches)."
        ]
        each = next((row for row in rows if row["metric"] == EACH), None)
        if each is not None:
            swapped = total - five[0]["seconds_per_sample"] + each["seconds_per_sample"]
            if five[0]["metric"] == "faithfulness":
                lines.append(
                    f"The same with {EACH} in place of faithfulness: {swapped:.1f} s per sample."
                )
    if together is not None:
        lines.append(
            f"The five in one run, as the README's main command scores them: "
            f"{together['seconds_per_sample']} s per sample, {together['requests_per_sample']} "
            f"model requests per sample, {together['ok']} of {together['cells']} cells ok "
            "(timed first, on its own server)."
        )
    (out / "local_judge_speed.md").write_text("\n".join(lines) + "\n")


def _warm_up(metrics: list, llm, embeddings) -> None:
    """Outside the timings: start the server, load the weights, pay every metric's first call
    (one metric per call: two settings of one metric share its name)."""
    for metric in metrics:
        evaluate([WARM_UP], [metric], llm=llm, embeddings=embeddings, show_progress=False)


def _time_together(data: str, five: list, llm, embeddings) -> dict:
    """The five default metrics in one run at the CLI's default concurrency, after the warm-up
    (called before any other run, so the judge server has seen none of the data's prompts)."""
    _warm_up(five, llm, embeddings)
    started = time.perf_counter()
    result = evaluate(data, five, llm=llm, embeddings=embeddings, show_progress=False)
    seconds = time.perf_counter() - started
    samples = len(result.dataset)
    outcomes = [result.summary(metric.name) for metric in five]
    return {
        "samples": samples,
        "cells": sum(summary.n_rows for summary in outcomes),
        "ok": sum(summary.n_ok for summary in outcomes),
        "seconds_per_sample": round(seconds / samples, 2),
        "requests_per_sample": round(result.usage().requests / samples, 2),
    }


if __name__ == "__main__":
    main()
