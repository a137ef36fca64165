"""Session-scope online evaluators: taking sessions, waiting for them to settle, storing their
scores.

A session-scope evaluator takes a session when one of its traces matches the evaluator's
condition and the session falls in its sample (a hash of the evaluator's id and the session id,
as `evaluators.sampled` does for traces). What it takes is the session's *content*: its trace
count and latest arrival number (`content_key`). Taking adds an `online_session_evaluations`
row (evaluator, version, session, content) as `pending`, due `settle_seconds` after the last
arrival; a newer content of the same session supersedes an older one still pending. The unique
row makes "a session is judged at most once per version and content" the database's guarantee
across repeats, backfills and restarts, and a session that grows after it was judged is judged
again, once it settles anew.

The worker's `online_eval` job judges due rows (`jobs/online_sessions.py`) and stores them here
(`store`): in one transaction, the row moves out of `pending` only if it still is, and only then
are its scores appended to `session_scores`. `wake_due` is the worker's idle tick: an evaluator
with rows that became due gets a job.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime, timedelta, timezone
from typing import Any, cast

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from assay.platform.server.storage import models
from assay.platform.server.storage.evaluator_rules import compiled_condition, queue_judging, sampled
from assay.platform.server.storage.repos import ProjectScoped, iso
from assay.platform.server.storage.trace_rows import insert_for

S, T, E = models.SessionEvaluation, models.LoggedTrace, models.OnlineEvaluator
ScoreRow = models.SessionScore
STATES = ("pending", "scored", "error", "skipped_budget", "judge_down")
SCORES_MAX = 500  # session scores given with a session, newest first


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def content_key(count: int, last_seq: int) -> str:
    """A session's content: how many traces it has and the arrival number of the latest. Traces
    only arrive (an arrival number is never reused), so a new trace always changes it."""
    return f"{count}:{last_seq}"


class SessionRuns(ProjectScoped):
    # -- taking sessions ---------------------------------------------------------------------------
    def summaries(self, session_ids: builtins.list[str]) -> dict[str, tuple[int, int, datetime]]:
        """Per session: trace count, latest arrival number, latest trace time (one grouped read
        over the (project, session, time) index)."""
        if not session_ids:
            return {}
        query = (
            self._columns(T, T.session_id, func.count(), func.max(T.seq), func.max(T.created_at))
            .where(T.session_id.in_(session_ids))
            .group_by(T.session_id)
        )
        return {sid: (int(n), int(seq), last) for sid, n, seq, last in self.session.execute(query)}

    def take(
        self, evaluator: models.OnlineEvaluator, trace_ids: builtins.list[str], *, arrived: bool
    ) -> int:
        """Take the sessions of `trace_ids` whose traces match the evaluator and that it samples,
        at their current content. `arrived`: the traces are arriving now (their session is due
        `settle_seconds` from now); else a backfill (due `settle_seconds` after its latest trace's
        time, which is mostly past). Returns how many contents were taken anew."""
        if not trace_ids:
            return 0
        query = self._columns(T, T.session_id).where(T.id.in_(trace_ids), T.session_id.is_not(None))
        where = compiled_condition(evaluator.condition)
        if where is not None:
            query = query.where(where)
        chosen = [
            sid
            for sid in dict.fromkeys(self.session.scalars(query.distinct()))
            if sampled(evaluator.id, sid, evaluator.sample_rate)
        ]
        if not chosen:
            return 0
        now = datetime.now(timezone.utc)
        settle = timedelta(seconds=evaluator.settle_seconds)
        rows = []
        for sid, (count, seq, last) in sorted(self.summaries(chosen).items()):
            last = _utc(last)  # SQLite gives naive times; they are stored in UTC
            rows.append(
                {
                    "project_id": self.project_id,
                    "evaluator_id": evaluator.id,
                    "evaluator_version": evaluator.version,
                    "session_id": sid,
                    "content_key": content_key(count, seq),
                    "traces": count,
                    "status": "pending",
                    "entered_at": now,
                    "due_at": now + settle if arrived else min(now, last) + settle,
                }
            )
        # one statement given every row (executemany), as `EvaluatorRepo._take` does; a content
        # taken before (a trace sent again, a backfill) inserts nothing
        statement = (
            insert_for(self.session, S.__table__)
            .on_conflict_do_nothing(
                index_elements=["evaluator_id", "evaluator_version", "session_id", "content_key"]
            )
            .returning(S.__table__.c.id, S.__table__.c.session_id, S.__table__.c.due_at)
        )
        fresh = builtins.list(self.session.execute(statement, rows)) if rows else []
        if not fresh:
            return 0
        # the new content of each session supersedes what of it was still waiting
        self.session.execute(
            update(S)
            .where(
                S.project_id == self.project_id,
                S.evaluator_id == evaluator.id,
                S.session_id.in_([r.session_id for r in fresh]),
                S.status == "pending",
                S.id.not_in([r.id for r in fresh]),
            )
            .values(status="superseded", reason="newer traces arrived in the session")
        )
        if any(_utc(r.due_at) <= now for r in fresh):
            queue_judging(self.session, self.project_id, evaluator)
        return len(fresh)

    # -- the worker's side -------------------------------------------------------------------------
    def due(
        self, evaluator_id: int, version: int, after: int, limit: int
    ) -> builtins.list[models.SessionEvaluation]:
        """The next `limit` pending rows of the version that are due (row id over `after`)."""
        query = (
            self._select(S)
            .where(
                S.evaluator_id == evaluator_id,
                S.evaluator_version == version,
                S.status == "pending",
                S.due_at <= datetime.now(timezone.utc),
                S.id > after,
            )
            .order_by(S.id)
            .limit(limit)
        )
        return builtins.list(self.session.scalars(query))

    def current_key(self, session_id: str) -> str | None:
        found = self.summaries([session_id]).get(session_id)
        return None if found is None else content_key(found[0], found[1])

    def close(self, run_id: int, status: str, reason: str | None = None) -> bool:
        """Move a row out of `pending` (only if it still is); True when this call moved it."""
        done = self.session.execute(
            update(S)
            .where(S.project_id == self.project_id, S.id == run_id, S.status == "pending")
            .values(status=status, reason=reason, judged_at=datetime.now(timezone.utc))
        )
        return bool(cast(Any, done).rowcount)

    def skip(self, run_ids: builtins.list[int], reason: str) -> int:
        return sum(self.close(ident, "skipped_budget", reason) for ident in run_ids)

    def add_scores(self, rows: builtins.list[dict[str, Any]]) -> None:
        """Append session scores: session_id, criterion, value, outcome, source, traces,
        content_key, evaluation_id each."""
        if rows:
            now = datetime.now(timezone.utc)
            self.session.execute(
                insert_for(self.session, ScoreRow.__table__).values(
                    [{"project_id": self.project_id, "created_at": now, **row} for row in rows]
                )
            )

    # -- counts and reads --------------------------------------------------------------------------
    def counts(self, evaluator_id: int, version: int) -> dict[str, int]:
        query = self._columns(S, S.status, func.count()).where(
            S.evaluator_id == evaluator_id, S.evaluator_version == version
        )
        found = {s: int(n) for s, n in self.session.execute(query.group_by(S.status))}
        return {state: found.get(state, 0) for state in STATES}

    def judged_since(self, evaluator_id: int, since: datetime) -> int:
        query = self._columns(S, func.count()).where(
            S.evaluator_id == evaluator_id,
            S.status.in_(("scored", "error")),
            S.judged_at >= since,
        )
        return int(self.session.scalar(query) or 0)

    def scores(self, session_id: str) -> builtins.list[dict[str, Any]]:
        """The session's scores, newest first (at most `SCORES_MAX`)."""
        query = (
            self._select(ScoreRow)
            .where(ScoreRow.session_id == session_id)
            .order_by(ScoreRow.id.desc())
            .limit(SCORES_MAX)
        )
        return [session_score_json(row) for row in self.session.scalars(query)]


def session_score_json(row: models.SessionScore) -> dict[str, Any]:
    return {
        "criterion": row.criterion,
        "value": row.value,
        "outcome": row.outcome,
        "source": row.source,
        "traces": row.traces,
        "content_key": row.content_key,
        "created_at": iso(row.created_at),
    }


def latest_by_criterion(scores: builtins.list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Of scores newest first, the newest per criterion."""
    latest: dict[str, dict[str, Any]] = {}
    for score in scores:
        latest.setdefault(score["criterion"], score)
    return latest


def wake_due(transaction: Callable[[], AbstractContextManager[Session]]) -> int:
    """Give a job to every active evaluator with session rows that became due; returns how many
    evaluators were woken. Cheap when nothing waits: one read of the (status, due_at) index."""
    with transaction() as session:
        query = (
            select(S.project_id, S.evaluator_id)
            .where(S.status == "pending", S.due_at <= datetime.now(timezone.utc))
            .distinct()
        )
        waiting = builtins.list(session.execute(query))
        for project_id, evaluator_id in waiting:
            evaluator = session.get(models.OnlineEvaluator, int(evaluator_id))
            if evaluator is not None and evaluator.project_id == int(project_id):
                queue_judging(session, int(project_id), evaluator)
    return len(waiting)


__all__ = [
    "SCORES_MAX",
    "STATES",
    "SessionRuns",
    "content_key",
    "latest_by_criterion",
    "session_score_json",
    "wake_due",
]
