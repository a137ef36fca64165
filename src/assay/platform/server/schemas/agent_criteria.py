"""The built-in agent criteria: names an online evaluator or a review queue may give without a
saved criterion of that name, each one of the library's agent metrics (`assay.metrics.agent`).

They live in `schemas` because the API, the web UI and storage check names against them when an
evaluator or queue is created, below the jobs that judge with them (`jobs/trajectory.py`).
"""

from __future__ import annotations

from typing import Any

# criterion name -> the library's metric class (all exported from `assay`)
AGENT_CRITERIA: dict[str, str] = {
    "task_completion": "TaskCompletion",
    "agent_goal_accuracy_without_reference": "AgentGoalAccuracyWithoutReference",
    "plan_adherence": "PlanAdherence",
    "step_efficiency": "StepEfficiency",
}


def is_agent_criterion(name: str) -> bool:
    return name in AGENT_CRITERIA


def agent_metric(name: str) -> Any:
    import assay

    return getattr(assay, AGENT_CRITERIA[name])()


def needs_judge(name: str) -> bool:
    """Whether the agent criterion asks a model (step efficiency counts steps, with none)."""
    return bool(agent_metric(name).needs_llm)


__all__ = ["AGENT_CRITERIA", "agent_metric", "is_agent_criterion", "needs_judge"]
