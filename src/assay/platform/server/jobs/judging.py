"""Judging an experiment's cells: one criterion over the traces of one chunk, each a typed outcome.

A trace whose generation failed gets an error outcome naming the cause; a function criterion is
matched here with RE2 (`criteria_rules.string_match`); the rest go to the library in one
`assay.aevaluate` call with its `Criteria` metric and the run's judge model. `outcome_row` turns
the library's outcome into the row stored in `scores` (a non-finite value is an error, never NaN).
The review queues' judge (`review_judge.py`) uses `function_outcome` and `outcome_row` too, and
`trace_score_outcome` for the shape `trace_scores.outcome` keeps: one error key, `error_message`,
everywhere (`storage.trace_rows.readable_outcome` reads the older `message` of stored rows).

Separate from `run.py` because it only computes outcomes, with no database access and
no claim: the run decides which cells are missing and stores what this module returns.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from assay.platform import criteria_rules
from assay.platform.server.jobs.generation import Unit
from assay.platform.server.jobs.outcome_rows import error_row, outcome_row, trace_score_outcome
from assay.platform.server.jobs.trajectory import judge_trajectories, trace_trajectory
from assay.platform.server.schemas.agent_criteria import is_agent_criterion
from assay.platform.server.storage import models

log = logging.getLogger("assay.platform.worker")


async def judge_cells(
    criterion: dict[str, Any], todo: list[tuple[Unit, models.Trace]], judge: Any
) -> list[dict[str, Any]]:
    """One outcome per (unit, trace) in `todo`, in order, each with its `trace`."""
    outcomes: list[dict[str, Any] | None] = [None] * len(todo)
    ask: list[int] = []
    for index, (_unit, trace) in enumerate(todo):
        if trace.error_type is not None:
            outcomes[index] = {
                "status": "error",
                "error_type": trace.error_type,
                "error_message": f"the answer could not be generated: {trace.error_message}",
            }
        elif criterion["criteria_type"] == "function":
            outcomes[index] = function_outcome(criterion, trace.output or "", trace.contexts)
        else:
            ask.append(index)
    if ask:
        from assay import SingleTurnSample, aevaluate
        from assay.metrics.criteria import Criteria as LibraryCriteria
        from assay.schema.result import EvaluationResult

        fields = {f: criterion[f] for f in criteria_rules.FIELDS if f != "validation_status"}
        metric = LibraryCriteria(**fields)
        samples = []
        for index in ask:
            unit, trace = todo[index]
            samples.append(
                SingleTurnSample(
                    user_input=unit.example.question,
                    response=trace.output or "",
                    retrieved_contexts=list(trace.contexts or []),
                    reference=unit.example.ground_truth_answer or None,
                )
            )
        result = await aevaluate(samples, [metric], llm=judge, show_progress=False)
        assert isinstance(result, EvaluationResult)  # not asked for an Executor
        for position, index in enumerate(ask):
            outcomes[index] = outcome_row(result.outcome(position, metric.name))
    filled = [outcome for outcome in outcomes if outcome is not None]  # every cell has one by now
    return [{"trace": t, **o} for (_u, t), o in zip(todo, filled, strict=True)]


async def judge_traces(
    criterion: dict[str, Any] | None,
    name: str,
    traces: list[models.LoggedTrace],
    judge: Callable[[], Any],
    what: str,
) -> list[dict[str, Any]]:
    """One `trace_scores` outcome per logged trace on the saved criterion `criterion` (named
    `name`; None when it was deleted: an error outcome naming it). `judge()` builds the judge
    model when one is needed; a judge that cannot be built, or a run the library refuses, is an
    error outcome for each trace, never a silent gap. Review queues' judge and online evaluators
    (`what` names which, for the log) both score through here. A name the project has no saved
    criterion of may be a built-in agent criterion (`schemas.agent_criteria`): it judges the
    trace's own span tree as a trajectory."""
    if criterion is None:
        if is_agent_criterion(name):  # a built-in agent criterion: the trace's trajectory
            from assay.platform.server.storage.trace_rows import trace_json

            subjects = [trace_trajectory(trace_json(t)) for t in traces]
            return await judge_trajectories(name, subjects, judge, what)
        missing = {
            "status": "error",
            "error_type": "UnknownCriterion",
            "error_message": f"no criteria named {name!r} in this project any more",
        }
        return [dict(missing) for _ in traces]
    from assay import SingleTurnSample

    samples = [
        SingleTurnSample(
            user_input=t.input_text or None,
            response=t.output_text,
            retrieved_contexts=list(t.contexts or []),
        )
        for t in traces
    ]
    return await judge_samples(criterion, samples, judge, what)


async def judge_samples(
    criterion: dict[str, Any], samples: list[Any], judge: Callable[[], Any], what: str
) -> list[dict[str, Any]]:
    """One `trace_scores` outcome per `SingleTurnSample` on the saved criterion: what
    `judge_traces` does once it has the samples, and what a session's saved criteria are judged
    with (`online_sessions.py`: the session's last answer, the turns before it as the input)."""
    if criterion["criteria_type"] == "function":
        return [
            trace_score_outcome(
                function_outcome(criterion, s.response or "", list(s.retrieved_contexts or []))
            )
            for s in samples
        ]
    from assay import aevaluate
    from assay.metrics.criteria import Criteria as LibraryCriteria
    from assay.schema.result import EvaluationResult

    fields = {f: criterion[f] for f in criteria_rules.FIELDS if f != "validation_status"}
    metric = LibraryCriteria(**fields)
    try:
        result = await aevaluate(samples, [metric], llm=judge(), show_progress=False)
        assert isinstance(result, EvaluationResult)  # not asked for an Executor
    except Exception as exc:  # the judge cannot be built or the run refused: a typed outcome each
        log.warning("judging %s failed: %s", what, exc)
        failed = error_row(exc)
        return [dict(failed) for _ in samples]
    return [
        trace_score_outcome(outcome_row(result.outcome(i, metric.name)))
        for i in range(len(samples))
    ]


def function_outcome(criterion: dict[str, Any], answer: str, contexts: list[str]) -> dict[str, Any]:
    """A function criterion (a string match over the answer, or over the contexts for a
    retrieval criterion) as an outcome row; the one implementation for experiments and review
    queues. A pattern that cannot run is an error outcome with its cause."""
    subject = "\n\n".join(contexts or []) if criterion["phase"] == "retrieval" else (answer or "")
    try:
        matched = criteria_rules.string_match(
            subject,
            criterion["match_type"],
            criterion["match_pattern"],
            criterion["case_sensitive"],
            require_re2=True,
        )
    except Exception as exc:
        return error_row(exc)
    verdict = "matched" if matched else "no match"
    return {
        "status": "ok",
        "value": float(matched),
        "reason": f"{criterion['match_type']} {criterion['match_pattern']!r}: {verdict}",
    }


__all__ = [
    "function_outcome",
    "judge_cells",
    "judge_samples",
    "judge_traces",
    "outcome_row",
    "trace_score_outcome",
]
