"""Agent criteria: judging a trajectory (a trace's span tree, or a session's traces as one
conversation) with the library's agent metrics, for online evaluators and review queues' judges.

A criterion named in an evaluator or a queue is the project's saved criterion of that name; when
the project has none, it may be one of `AGENT_CRITERIA`, the built-in agent metrics that read a
whole conversation (`assay.metrics.agent`). Their subject is the `MultiTurnSample` that
`assay.integrations.trajectory` converts from the stored trace JSON: `trace_to_sample` for one
trace, `to_conversation` for a session. A trace or session that cannot be converted (no LLM
call, no tool call and no input) is an error outcome `TrajectoryUnavailable` with the
converter's reason, never a silent gap; a metric that finds nothing to judge (no tool call for
step efficiency) is a skipped outcome with its reason, as in `evaluate`.

`tool_argument_correctness` is not offered: it needs the tools' JSON Schemas, which a trace does
not hold. `agent_goal_accuracy` (with a reference) and `topic_adherence` need a reference that
production traffic has not either.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from assay.platform.server.jobs.outcome_rows import error_row, outcome_row, trace_score_outcome
from assay.platform.server.schemas.agent_criteria import (
    AGENT_CRITERIA,
    agent_metric,
    is_agent_criterion,
    needs_judge,
)

log = logging.getLogger("assay.platform.worker")

UNAVAILABLE = "TrajectoryUnavailable"


def unavailable(what: str, exc: Exception) -> dict[str, Any]:
    return {
        "status": "error",
        "error_type": UNAVAILABLE,
        "error_message": f"{what} cannot be read as a trajectory: {exc}",
    }


def trace_trajectory(trace: dict[str, Any]) -> Any:
    """One stored trace's JSON as a `MultiTurnSample`, or the error outcome saying why not."""
    from assay.integrations.trajectory import trace_to_sample

    try:
        return trace_to_sample(trace)
    except Exception as exc:  # DataError / UsageError from the converter: the trace's fault
        return unavailable(f"trace {trace.get('id')}", exc)


def session_trajectory(session_id: str, traces: list[dict[str, Any]]) -> Any:
    """A session's traces (JSON, any order) as one `MultiTurnSample`, or the error outcome."""
    from assay.integrations.trajectory import to_conversation

    try:
        return to_conversation(traces)
    except Exception as exc:
        return unavailable(f"session {session_id!r}", exc)


async def judge_trajectories(
    name: str, subjects: list[Any], judge: Callable[[], Any], what: str
) -> list[dict[str, Any]]:
    """One `trace_scores`-shaped outcome per subject on the agent criterion `name`: a subject is
    a `MultiTurnSample`, or already an error outcome (a dict) that is passed through."""
    outcomes: list[dict[str, Any] | None] = [
        dict(s) if isinstance(s, dict) else None for s in subjects
    ]
    ask = [i for i, s in enumerate(subjects) if not isinstance(s, dict)]
    if ask:
        from assay import aevaluate
        from assay.schema.result import EvaluationResult

        metric = agent_metric(name)
        try:
            llm = judge() if metric.needs_llm else None
            result = await aevaluate(
                [subjects[i] for i in ask], [metric], llm=llm, show_progress=False
            )
            assert isinstance(result, EvaluationResult)  # not asked for an Executor
        except Exception as exc:  # the judge cannot be built or the run refused
            log.warning("judging %s on %s failed: %s", what, name, exc)
            failed = error_row(exc)
            for index in ask:
                outcomes[index] = dict(failed)
        else:
            for position, index in enumerate(ask):
                row = outcome_row(result.outcome(position, metric.name))
                outcomes[index] = trace_score_outcome(row)
    return [o if o is not None else {"status": "error"} for o in outcomes]


__all__ = [
    "AGENT_CRITERIA",
    "UNAVAILABLE",
    "agent_metric",
    "is_agent_criterion",
    "judge_trajectories",
    "needs_judge",
    "session_trajectory",
    "trace_trajectory",
]
