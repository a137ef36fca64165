"""Online evaluators: storage of the rules, and the routing of traces to them.

A trace is taken by an active evaluator when it matches the evaluator's condition and falls in
its sample: at ingest, in the transaction that stores it, and for stored traces by a backfill over
a time range. Taking a trace adds an `online_evaluations` row (evaluator, version, trace) as
`pending`; the row's unique key means a trace is taken, and so scored, at most once per version
whatever arrives twice, crashes or is backfilled again. An evaluator with pending rows gets an
`online_eval` job; the worker (`jobs/online_eval.py`) judges them through `evaluator_runs.py`.

Sampling is a hash of (evaluator id, trace id) read as a number in [0, 1): the same traces are
sampled after a restart, on every server, and again after a change of version.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from typing import Any, cast

from sqlalchemy import Table, func, update
from sqlalchemy.orm import Session

from assay.platform.server.errors import ApiError, conflict, invalid
from assay.platform.server.schemas.agent_criteria import AGENT_CRITERIA, is_agent_criterion
from assay.platform.server.storage import models
from assay.platform.server.storage.evaluator_rules import (
    JOB,
    back_to_pending,
    compiled_condition,
    queue_judging,
    sampled,
)
from assay.platform.server.storage.repos import CriteriaRepo, ProjectScoped, iso
from assay.platform.server.storage.session_evaluations import STATES as SESSION_STATES
from assay.platform.server.storage.session_evaluations import SessionRuns
from assay.platform.server.storage.trace_fields import compile_condition
from assay.platform.server.storage.trace_rows import insert_for

E, Run, T = models.OnlineEvaluator, models.OnlineEvaluation, models.LoggedTrace
BACKFILL_PAGE = 5_000
# what decides a score: a change of any of these is a new version of the evaluator
RULE_FIELDS = ("condition", "sample_rate", "criteria", "judge_model", "scope")
JUDGED = ("scored", "error")  # what the daily budget counts: traces a judge was asked about


def unknown_criterion(name: str) -> str:
    """Why a criterion name is refused: neither saved in the project nor a built-in agent one."""
    return (
        f"no criteria named {name!r} in this project (the judge scores saved criteria, or the "
        f"agent criteria {', '.join(AGENT_CRITERIA)})"
    )


def score_source(evaluator: models.OnlineEvaluator) -> str:
    """The `source` of the scores an evaluator stores: its name and version."""
    return f"evaluator:{evaluator.name}@v{evaluator.version}"


def utc_midnight(moment: datetime | None = None) -> datetime:
    moment = moment or datetime.now(timezone.utc)
    return moment.astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)


def evaluator_json(evaluator: models.OnlineEvaluator, counts: dict[str, Any]) -> dict[str, Any]:
    used = counts.get("judged_today", 0)
    budget = evaluator.daily_budget
    return {
        "object_type": "online_evaluator",
        "id": evaluator.id,
        "name": evaluator.name,
        "condition": evaluator.condition,
        "sample_rate": evaluator.sample_rate,
        "criteria": list(evaluator.criteria or []),
        "judge_model": evaluator.judge_model,
        "scope": evaluator.scope,
        "settle_seconds": evaluator.settle_seconds,
        "daily_budget": budget,
        "status": evaluator.status,
        "version": evaluator.version,
        "source": score_source(evaluator),
        "last_error": evaluator.last_error,
        "last_error_at": iso(evaluator.last_error_at),
        "created_at": iso(evaluator.created_at),
        "updated_at": iso(evaluator.updated_at),
        # this version's traces by state (judge_down: left for the next run, the judge being
        # down); judged_today counts every version (the budget's count)
        "traces": {s: counts.get(s, 0) for s in SESSION_STATES},
        # a session-scope version's sessions (contents) by the same states
        "sessions": counts.get("sessions") or {s: 0 for s in SESSION_STATES},
        "judged_today": used,
        "budget_exhausted": budget is not None and used >= budget,
        # the worker's latest run of it: queued, running, done or failed (with the error)
        "job": counts.get("job"),
    }


class EvaluatorRepo(ProjectScoped):
    # -- the evaluators ----------------------------------------------------------------------------
    def by_name(self, name: str, *, lock: bool = False) -> models.OnlineEvaluator | None:
        query = self._select(E).where(E.name == name)
        return self.session.scalar(query.with_for_update() if lock else query)

    def get(self, name: str, *, lock: bool = False) -> models.OnlineEvaluator:
        evaluator = self.by_name(name, lock=lock)
        if evaluator is None:
            raise ApiError(404, "not_found", f"no online evaluator named {name!r} in this project")
        return evaluator

    def find_by_id(self, ident: int, *, lock: bool = False) -> models.OnlineEvaluator | None:
        query = self._select(E).where(E.id == ident)
        return self.session.scalar(query.with_for_update() if lock else query)

    def list(
        self, *, limit: int, cursor: str | None
    ) -> tuple[builtins.list[models.OnlineEvaluator], str | None]:
        return self._page(self._select(E), E, limit, cursor)

    def counts(self, evaluator: models.OnlineEvaluator) -> dict[str, int]:
        query = self._columns(Run, Run.status, func.count()).where(
            Run.evaluator_id == evaluator.id, Run.evaluator_version == evaluator.version
        )
        counts: dict[str, Any] = {
            s: int(n) for s, n in self.session.execute(query.group_by(Run.status))
        }
        counts["sessions"] = SessionRuns(self.session, self.project_id).counts(
            evaluator.id, evaluator.version
        )
        counts["judged_today"] = self.judged_since(evaluator.id, utc_midnight())
        counts["job"] = self.last_job(evaluator.id)
        return counts

    def last_job(self, evaluator_id: int) -> dict[str, Any] | None:
        """The evaluator's latest job: its status and, for one that failed, why."""
        J = models.Job
        query = self._columns(J, J.status, J.error, J.finished_at).where(
            J.kind == JOB, J.evaluator_id == evaluator_id
        )
        row = self.session.execute(query.order_by(J.id.desc()).limit(1)).first()
        if row is None:
            return None
        return {"status": row.status, "error": row.error, "finished_at": iso(row.finished_at)}

    def judged_since(self, evaluator_id: int, since: datetime) -> int:
        """Traces and sessions judged for the evaluator (any version, either scope) since
        `since`: the daily budget's count."""
        query = self._columns(Run, func.count()).where(
            Run.evaluator_id == evaluator_id, Run.status.in_(JUDGED), Run.judged_at >= since
        )
        sessions = SessionRuns(self.session, self.project_id).judged_since(evaluator_id, since)
        return int(self.session.scalar(query) or 0) + sessions

    def rule(self, values: dict[str, Any]) -> dict[str, Any]:
        """A checked body as stored: criteria once each, every one a saved criterion of the
        project (the judge needs its wording), so a rule that could never score fails when it
        is saved, not in the worker."""
        values = {**values, "criteria": builtins.list(dict.fromkeys(values["criteria"]))}
        found = CriteriaRepo(self.session, self.project_id).by_names(values["criteria"])
        known = {row.name for row in found}
        for index, name in enumerate(values["criteria"]):
            if name not in known and not is_agent_criterion(name):
                raise invalid(f"criteria[{index}]", unknown_criterion(name))
        return values

    def create(self, values: dict[str, Any]) -> models.OnlineEvaluator:
        compile_condition(values["condition"])  # a bad condition: 422 before anything is written
        existing = self.by_name(values["name"])
        if existing is not None:
            raise conflict(
                f"an online evaluator named {values['name']!r} already exists (id {existing.id})",
                existing.id,
            )
        evaluator = E(project_id=self.project_id, version=1, status="active", **values)
        self.session.add(evaluator)
        self.session.flush()
        return evaluator

    def replace(self, name: str, values: dict[str, Any]) -> models.OnlineEvaluator:
        """Save `values` over the evaluator `name`. A change of what decides a score
        (`RULE_FIELDS`) is a new version: the traces the old version took and had not judged
        yet are `superseded`, and from now on traces are taken (and scored) under the new one."""
        compile_condition(values["condition"])
        evaluator = self.get(name, lock=True)
        changed = any(getattr(evaluator, f) != values[f] for f in RULE_FIELDS)
        for field, value in values.items():
            setattr(evaluator, field, value)
        evaluator.updated_at = datetime.now(timezone.utc)
        if changed:
            self.session.execute(
                update(Run)
                .where(
                    Run.project_id == self.project_id,
                    Run.evaluator_id == evaluator.id,
                    Run.status == "pending",
                )
                .values(status="superseded", reason=f"version {evaluator.version + 1} replaced it")
            )
            S = models.SessionEvaluation
            self.session.execute(
                update(S)
                .where(
                    S.project_id == self.project_id,
                    S.evaluator_id == evaluator.id,
                    S.status == "pending",
                )
                .values(status="superseded", reason=f"version {evaluator.version + 1} replaced it")
            )
            evaluator.version += 1
        self.session.flush()
        return evaluator

    def set_status(self, name: str, status: str) -> models.OnlineEvaluator:
        """Pause or resume. A resumed evaluator judges what it took before the pause; traces that
        arrived while it was paused are not taken (a backfill over that time takes them)."""
        evaluator = self.get(name, lock=True)
        if evaluator.status != status:
            evaluator.status = status
            evaluator.updated_at = datetime.now(timezone.utc)
            self.session.flush()
        if status == "active":
            self.request_judging(evaluator)
        return evaluator

    def delete(self, name: str) -> None:
        """The evaluator and its rows go; the scores it stored stay on their traces."""
        evaluator = self.get(name)
        runs = cast(Table, Run.__table__)  # a mapped class's table is a Table
        self.session.execute(
            runs.delete().where(Run.project_id == self.project_id, Run.evaluator_id == evaluator.id)
        )
        S = models.SessionEvaluation
        self.session.execute(
            cast(Table, S.__table__)
            .delete()
            .where(S.project_id == self.project_id, S.evaluator_id == evaluator.id)
        )
        self.session.delete(evaluator)
        self.session.flush()

    # -- taking traces -------------------------------------------------------------------------------
    def route(self, trace_ids: builtins.list[str]) -> dict[str, int]:
        """At ingest: every active evaluator takes the new traces it matches and samples."""
        taken: dict[str, int] = {}
        if not trace_ids:
            return taken
        active = self.session.scalars(self._select(E).where(E.status == "active").order_by(E.id))
        for evaluator in active:
            if evaluator.scope == "session":
                count = SessionRuns(self.session, self.project_id).take(
                    evaluator, trace_ids, arrived=True
                )
                if count:
                    taken[evaluator.name] = count
                continue
            query = self._columns(T, T.id).where(T.id.in_(trace_ids))
            count = self._take(evaluator, query)
            if count:
                taken[evaluator.name] = count
        return taken

    def backfill_page(
        self, evaluator: models.OnlineEvaluator, since: datetime, until: datetime | None, after: int
    ) -> tuple[int, int | None]:
        """One page of a backfill (`backfill`): of the traces that arrived in [since, until),
        the next `BACKFILL_PAGE` by arrival after arrival number `after`, those the evaluator
        matches and samples and has not taken at this version, and those it skipped for its
        budget (pending again). Returns how many it took, and where the next page starts (None:
        this was the last). An experiment's generations published as traces are not production
        traffic and are never taken (`experiment_id` set)."""
        query = self._columns(T, T.id, T.seq).where(
            T.created_at >= since, T.seq > after, T.experiment_id.is_(None)
        )
        if until is not None:
            query = query.where(T.created_at < until)
        rows = self.session.execute(query.order_by(T.seq).limit(BACKFILL_PAGE)).all()
        if not rows:
            return 0, None
        ids = [r.id for r in rows]
        if evaluator.scope == "session":
            taken = SessionRuns(self.session, self.project_id).take(evaluator, ids, arrived=False)
        else:
            taken = self._take(evaluator, self._columns(T, T.id).where(T.id.in_(ids)))
            taken += self._retry_skipped(evaluator, ids)
        if taken:
            self.request_judging(evaluator)
        return taken, int(rows[-1].seq) if len(rows) == BACKFILL_PAGE else None

    def _take(self, evaluator: models.OnlineEvaluator, query: Any) -> int:
        where = compiled_condition(evaluator.condition)
        if where is not None:
            query = query.where(where)
        chosen = [
            t
            for t in self.session.scalars(query)
            if sampled(evaluator.id, t, evaluator.sample_rate)
        ]
        if not chosen:
            return 0
        now = datetime.now(timezone.utc)
        rows = [
            {
                "project_id": self.project_id,
                "evaluator_id": evaluator.id,
                "evaluator_version": evaluator.version,
                "trace_id": trace_id,
                "status": "pending",
                "entered_at": now,
            }
            for trace_id in chosen
        ]
        # one statement given every row (executemany), as the trace ingest does: its compiled
        # form is cached, where a statement with the rows in its VALUES was compiled per batch
        statement = (
            insert_for(self.session, Run.__table__)
            .on_conflict_do_nothing(
                index_elements=["evaluator_id", "evaluator_version", "trace_id"]
            )
            .returning(Run.__table__.c.id)
        )
        taken = len(builtins.list(self.session.scalars(statement, rows)))
        if taken and evaluator.status == "active":
            self.request_judging(evaluator)
        return taken

    def _retry_skipped(
        self, evaluator: models.OnlineEvaluator, trace_ids: builtins.list[str]
    ) -> int:
        done = self.session.execute(
            back_to_pending(Run, self.project_id, evaluator, "skipped_budget").where(
                Run.trace_id.in_(trace_ids)
            )
        )
        return int(cast(Any, done).rowcount or 0)

    def request_judging(self, evaluator: models.OnlineEvaluator) -> None:
        """One queued job per evaluator is enough: it judges every pending row of its version."""
        queue_judging(self.session, self.project_id, evaluator)


def backfill(
    transaction: Callable[[], AbstractContextManager[Session]],
    project_id: int,
    evaluator_id: int,
    since: datetime,
    until: datetime | None,
) -> int:
    """Take the stored traces that arrived in [since, until) as if they arrived now; returns how
    many were taken. One transaction a page, so a backfill over months holds SQLite's one writer
    (and so the ingest) for a page at a time, never for the whole range."""
    taken, after = 0, 0
    while True:
        with transaction() as session:
            repo = EvaluatorRepo(session, project_id)
            evaluator = repo.find_by_id(evaluator_id, lock=True)
            if evaluator is None:  # deleted meanwhile
                return taken
            count, next_after = repo.backfill_page(evaluator, since, until, after)
        taken += count
        if next_after is None:
            return taken
        after = next_after


__all__ = [
    "JOB",
    "JUDGED",
    "RULE_FIELDS",
    "EvaluatorRepo",
    "backfill",
    "evaluator_json",
    "sampled",
    "score_source",
    "unknown_criterion",
    "utc_midnight",
]
