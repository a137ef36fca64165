"""The `review_judge` job of a session-scope queue: score each session item on the queue's
criteria, once per criterion, on the content the session has when it is judged.

`QueueJudgeRun` hands a session queue here. Per chunk of items (in the order they entered) it
reads each session's traces and judges, for every (session, criterion) this queue has not
scored yet (or whose latest score from it says the judge was down, `EndpointDown`: asked again):

- a built-in agent criterion (`trajectory.AGENT_CRITERIA`) on the session's traces as one
  conversation (`trajectory.session_trajectory`; a session that cannot be converted is a
  `TrajectoryUnavailable` error outcome with its cause);
- a saved criterion on the session's last answer with the turns before it as the question
  (`online_sessions.session_sample`), as session-scope evaluators judge it.

Scores are appended to `session_scores` with the queue's id, the trace count and content key
judged, after the claim check; then each item's uncertainty (and, when the queue samples,
whether it is kept) is decided as for trace items, once none of its criteria waits for a judge
that was down.
"""

from __future__ import annotations

from typing import Any

from assay.platform.server.errors import ApiError
from assay.platform.server.jobs.judging import judge_samples
from assay.platform.server.jobs.online_sessions import session_sample
from assay.platform.server.jobs.trajectory import (
    is_agent_criterion,
    judge_trajectories,
    session_trajectory,
)
from assay.platform.server.storage.review import QueueRepo
from assay.platform.server.storage.review_judging import fold_down_again, is_down
from assay.platform.server.storage.review_sampling import most_unsure
from assay.platform.server.storage.review_sessions import SessionQueue
from assay.platform.server.storage.session_evaluations import SessionRuns, content_key
from assay.platform.server.storage.sessions import SessionRepo
from assay.platform.server.storage.trace_rows import trace_json

CHUNK = 4  # sessions judged at once (each may be many turns long)


class Subject:
    """One session read for judging: its traces as JSON and as a single-turn sample."""

    def __init__(self, session_id: str, traces: list[Any]) -> None:
        self.session_id, self.count = session_id, len(traces)
        self.key = content_key(len(traces), max(t.seq for t in traces))
        self.traces = [trace_json(t) for t in traces]
        self.sample = session_sample(traces)


async def judge_session_items(
    run: Any, names: list[str], saved: dict[str, Any], model: str
) -> bool:
    """Judge the queue's unscored sessions; True when done, False when asked to stop first.
    `run` is the `QueueJudgeRun` (claim, state, judge, claim check)."""
    project, queue_id = run.claim.project_id, run.claim.queue_id
    what = f"queue {queue_id}"
    after, due = 0, run.due_before()
    while True:
        if run.should_stop():
            return False
        with run.state.transaction() as session:
            repo = SessionQueue(session, project)
            items = repo.judging_chunk(queue_id, after, CHUNK)
            if not items:
                return True
            after = items[-1].id
            ids = [item.session_id for item in items]
            scored = repo.judged(queue_id, ids, due)
            subjects: dict[str, Subject] = {}
            for sid in ids:
                if all((sid, name) in scored for name in names):
                    continue
                try:
                    subjects[sid] = Subject(sid, SessionRepo(session, project).traces(sid))
                except ApiError:  # no trace names it any more (deleted): nothing to judge
                    continue
        rows: list[dict[str, Any]] = []
        for name in names:
            todo = [s for sid, s in subjects.items() if (sid, name) not in scored]
            if not todo:
                continue
            outcomes = run.waiting(
                model, await _judge(run, name, saved.get(name), todo, model, what)
            )
            for subject, outcome in zip(todo, outcomes, strict=True):
                rows.append(_row(subject, name, outcome, saved.get(name), model, queue_id))
        with run.state.transaction() as session:
            run._check_claim(session)
            # a judge still down: its waiting rows are updated, not added again
            rows = fold_down_again(session, project, queue_id, "session", rows)
            SessionRuns(session, project).add_scores(rows)
            _decide(session, project, queue_id, names, ids)


async def _judge(
    run: Any, name: str, criterion: Any, todo: list[Subject], model: str, what: str
) -> list[dict[str, Any]]:
    judge = run.models.judge(model)
    if criterion is not None:
        return await judge_samples(criterion, [s.sample for s in todo], judge, what)
    if is_agent_criterion(name):
        subjects = [session_trajectory(s.session_id, s.traces) for s in todo]
        return await judge_trajectories(name, subjects, judge, what)
    missing = {
        "status": "error",
        "error_type": "UnknownCriterion",
        "error_message": f"no criteria named {name!r} in this project any more",
    }
    return [dict(missing) for _ in todo]


def _row(
    subject: Subject,
    name: str,
    outcome: dict[str, Any],
    criterion: Any,
    model: str,
    queue_id: int,
) -> dict[str, Any]:
    function = criterion is not None and criterion["criteria_type"] == "function"
    source = f"function:{name}" if function else f"judge:{model}"
    return {
        "session_id": subject.session_id,
        "criterion": name,
        "value": outcome.get("value") if outcome["status"] == "ok" else None,
        "outcome": outcome,
        "source": source[:1000],
        "traces": subject.count,
        "content_key": subject.key,
        "evaluation_id": None,
        "queue_id": queue_id,
    }


def _decide(session: Any, project: int, queue_id: int, names: list[str], ids: list[str]) -> None:
    """Each judged item's uncertainty (its most unsure criterion) and whether it is kept; not
    yet for an item with a criterion left `EndpointDown` (asked again later)."""
    queue = QueueRepo(session, project).find_by_id(queue_id)
    if queue is None:
        return
    repo = SessionQueue(session, project)
    latest = repo.latest_judged(queue_id, ids)
    unsure = {
        sid: most_unsure(s.outcome or {} for name, s in latest[sid].items() if name in names)
        for sid in ids
        if latest[sid]
        and not any(is_down(s.outcome) for name, s in latest[sid].items() if name in names)
    }
    repo.decide(queue, unsure)


__all__ = ["CHUNK", "judge_session_items"]
