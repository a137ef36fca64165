"""The `online_eval` job of a session-scope evaluator: judge each settled session content once.

`OnlineEvaluatorRun` hands a session-scope evaluator's job here. Per chunk it reads the due
pending rows (`storage.session_evaluations`), checks that each session still has the content the
row took (a session that grew meanwhile has a newer row: this one is `superseded`), and judges
every criterion on the whole session:

- a built-in agent criterion (`trajectory.AGENT_CRITERIA`) on the session's traces joined into
  one conversation (`to_conversation`: a `MultiTurnSample` with the tool calls); a session that
  cannot be converted is a `TrajectoryUnavailable` error outcome with the cause;
- a saved criterion on the session's last answer, with the turns before it as the question
  ("User: …" / "Assistant: …") and every turn's contexts.

The outcomes are stored through `SessionRuns` in one transaction after the claim check: the row
leaves `pending` only if it still is, and only then are its scores appended to `session_scores`.
A session whose judge was down for the run (the run's gate, `calls.GatedModels`) is
`judge_down` instead, with no score, and judged by the evaluator's next run.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from assay.platform import criteria_rules
from assay.platform.server.jobs.judging import judge_samples
from assay.platform.server.jobs.trajectory import (
    is_agent_criterion,
    judge_trajectories,
    session_trajectory,
)
from assay.platform.server.storage import models
from assay.platform.server.storage.evaluator_runs import (
    ERROR_MAX,
    EvaluationRuns,
    budget_reason,
    down_reason,
)
from assay.platform.server.storage.evaluators import EvaluatorRepo, score_source, utc_midnight
from assay.platform.server.storage.repos import CriteriaRepo
from assay.platform.server.storage.session_evaluations import SessionRuns
from assay.platform.server.storage.session_labels import session_texts
from assay.platform.server.storage.sessions import SessionRepo
from assay.platform.server.storage.trace_rows import trace_json

CHUNK = 4  # sessions judged at once (each may be many turns long)


def session_sample(traces: list[models.LoggedTrace]) -> Any:
    """A session as one question and answer for a saved (single-turn) criterion: the last
    answer, the turns before it as the question, every turn's contexts
    (`storage.session_labels.session_texts`, also the session queue export's rule)."""
    from assay import SingleTurnSample

    question, answer, contexts = session_texts(traces)
    return SingleTurnSample(user_input=question, response=answer, retrieved_contexts=contexts)


class Taken:
    """A due row read for judging: its session's traces as JSON and as a single-turn sample."""

    def __init__(self, row: models.SessionEvaluation, traces: list[models.LoggedTrace]) -> None:
        self.run_id, self.session_id = row.id, row.session_id
        self.content_key, self.count = row.content_key, row.traces
        self.traces = [trace_json(t) for t in traces]
        self.sample = session_sample(traces)


async def judge_sessions(run: Any) -> bool:
    """Judge the evaluator's due sessions; True when none is left (or it was paused), False when
    asked to stop first. `run` is the `OnlineEvaluatorRun` (its claim, state and judge)."""
    project = run.claim.project_id
    after = 0
    while True:
        if run.should_stop():
            return False
        with run.state.transaction() as session:
            evaluator = run._evaluator(session)
            if evaluator is None or evaluator.scope != "session":
                return True
            runs = SessionRuns(session, project)
            left = EvaluationRuns(session, project).budget_left(evaluator)
            size = CHUNK if left is None else min(CHUNK, left) if left else 500
            chunk = runs.due(evaluator.id, evaluator.version, after, size)
            if not chunk:
                return True
            after = chunk[-1].id
            run._check_claim(session)
            if left == 0:  # the day's budget is spent: these wait for a backfill, with the reason
                runs.skip(
                    [r.id for r in chunk], budget_reason(evaluator.daily_budget, utc_midnight())
                )
                continue
            taken: list[Taken] = []
            for row in chunk:
                if runs.current_key(row.session_id) != row.content_key:
                    runs.close(row.id, "superseded", "the session changed before it was judged")
                    continue
                taken.append(Taken(row, SessionRepo(session, project).traces(row.session_id)))
            names, model = list(evaluator.criteria or []), evaluator.judge_model
            rows = CriteriaRepo(session, project).by_names(names)
            saved = {r.name: {f: getattr(r, f) for f in criteria_rules.FIELDS} for r in rows}
            source = score_source(evaluator)[:1000]
        if not taken:
            continue
        judge = run.models.judge(model)
        what = f"online evaluator {run.claim.evaluator_id}"
        outcomes: dict[str, list[dict[str, Any]]] = {}
        for name in names:
            if name in saved:
                outcomes[name] = await judge_samples(
                    saved[name], [t.sample for t in taken], judge, what
                )
            elif is_agent_criterion(name):
                subjects = [session_trajectory(t.session_id, t.traces) for t in taken]
                outcomes[name] = await judge_trajectories(name, subjects, judge, what)
            else:
                missing = {
                    "status": "error",
                    "error_type": "UnknownCriterion",
                    "error_message": f"no criteria named {name!r} in this project any more",
                }
                outcomes[name] = [dict(missing) for _ in taken]
        down = [
            run.models.unanswered(model, [outcomes[name][i] for name in names])
            for i in range(len(taken))
        ]
        run.models.gate.skipped += sum(d is not None for d in down)
        with run.state.transaction() as session:
            run._check_claim(session)
            _store(session, project, run.claim.evaluator_id, taken, names, outcomes, source, down)


def _store(
    session: Any,
    project: int,
    evaluator_id: int,
    taken: list[Taken],
    names: list[str],
    outcomes: dict[str, list[dict[str, Any]]],
    source: str,
    down: list[str | None],
) -> None:
    """Each judged session once, within the day's budget (the evaluator's row locked); one
    whose judge was down for the run (`down`: why) is `judge_down`, with no score."""
    evaluator = EvaluatorRepo(session, project).find_by_id(evaluator_id, lock=True)
    if evaluator is None:
        return
    runs = SessionRuns(session, project)
    left = EvaluationRuns(session, project).budget_left(evaluator)
    now = datetime.now(timezone.utc)
    for position, item in enumerate(taken):
        cause = down[position]
        if cause is not None:  # judged again by the next run, once the judge answers
            if runs.close(item.run_id, "judge_down", down_reason(cause)):
                evaluator.last_error, evaluator.last_error_at = cause[:ERROR_MAX], now
            continue
        if left is not None and left <= 0:
            runs.skip([item.run_id], budget_reason(evaluator.daily_budget or 0, utc_midnight()))
            continue
        mine = [(name, outcomes[name][position]) for name in names]
        failed = next((o for _n, o in mine if o.get("status") == "error"), None)
        if not runs.close(item.run_id, "error" if failed else "scored"):
            continue  # stored already (another run), or superseded meanwhile
        if left is not None:
            left -= 1
        runs.add_scores(
            [
                {
                    "session_id": item.session_id,
                    "criterion": name,
                    "value": outcome.get("value") if outcome["status"] == "ok" else None,
                    "outcome": outcome,
                    "source": source,
                    "traces": item.count,
                    "content_key": item.content_key,
                    "evaluation_id": item.run_id,
                }
                for name, outcome in mine
            ]
        )
        if failed:
            message = f"{failed.get('error_type')}: {failed.get('error_message')}"
            evaluator.last_error, evaluator.last_error_at = message[:ERROR_MAX], now
    session.flush()


__all__ = ["CHUNK", "judge_sessions", "session_sample"]
