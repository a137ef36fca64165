"""What the evaluator rules and their session runs share: the hash sample, a stored condition
compiled once, queueing the job that judges an evaluator's pending rows, and waking the
evaluators whose rows wait for a judge that was down.

Apart from `evaluators.py` (the rules' repository) so that `session_evaluations.py`, which that
repository uses, can take sessions and wake their judging without importing it back.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import Update, and_, select, update
from sqlalchemy.orm import Session

from assay.platform.server.storage import models
from assay.platform.server.storage.trace_fields import compile_condition

JOB = "online_eval"


def sampled(evaluator_id: int, trace_id: str, rate: float) -> bool:
    """Whether the trace falls in the evaluator's sample: a hash of both ids as a number in
    [0, 1) below `rate` (deterministic, so a restart or a backfill samples the same traces)."""
    if rate >= 1.0:
        return True
    if rate <= 0.0:
        return False
    digest = hashlib.sha256(f"{evaluator_id}:{trace_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


@functools.lru_cache(maxsize=256)
def compiled_condition(condition: str) -> Any:
    """A stored (so valid) condition compiled once per process: at ingest every batch is matched
    against every active evaluator's condition, and parsing it each time cost more than the
    query (SQLAlchemy expressions hold no connection and are reused safely)."""
    return compile_condition(condition)


def queue_judging(session: Session, project_id: int, evaluator: models.OnlineEvaluator) -> None:
    """Queue the job that judges `evaluator`'s pending rows, unless one is already queued (one
    job judges every pending row of its version) or the evaluator is paused."""
    if evaluator.status != "active":
        return
    waiting = session.scalar(
        select(models.Job.id).where(
            models.Job.project_id == project_id,
            models.Job.kind == JOB,
            models.Job.evaluator_id == evaluator.id,
            models.Job.status == "queued",
        )
    )
    if waiting is None:
        session.add(
            models.Job(
                project_id=project_id,
                kind=JOB,
                evaluator_id=evaluator.id,
                experiment_id=None,
                queue_id=None,
                status="queued",
                attempts=0,
            )
        )
        session.flush()


def back_to_pending(
    table: Any, project_id: int, evaluator: models.OnlineEvaluator, status: str
) -> Update:
    """The statement that makes the version's rows of `table` (traces' or sessions' runs) in
    `status` pending again: a backfill's rows skipped for the budget, a run's rows whose judge
    was down. Callers may narrow it further."""
    return (
        update(table)
        .where(
            table.project_id == project_id,
            table.evaluator_id == evaluator.id,
            table.evaluator_version == evaluator.version,
            table.status == status,
        )
        .values(status="pending", reason=None, judged_at=None)
    )


def wake_judge_down(
    transaction: Callable[[], AbstractContextManager[Session]], after: timedelta
) -> int:
    """Give a job to every active evaluator whose current version has rows (traces or sessions)
    left `judge_down` at least `after` ago, so a judge that is back is asked again without
    waiting for a new trace, a resume or a backfill (the run makes those rows pending first).
    A judge still down leaves them `judge_down` again, so they are retried every `after`.
    Returns how many evaluators were woken; cheap when nothing waits (the status column is
    indexed for traces; session rows are few)."""
    E = models.OnlineEvaluator
    cutoff = datetime.now(timezone.utc) - after
    with transaction() as session:
        found: set[tuple[int, int]] = set()
        for table in (models.OnlineEvaluation, models.SessionEvaluation):
            query = (
                select(table.project_id, table.evaluator_id)
                .join(E, and_(E.project_id == table.project_id, E.id == table.evaluator_id))
                .where(
                    table.status == "judge_down",
                    table.judged_at <= cutoff,
                    table.evaluator_version == E.version,
                    E.status == "active",
                )
                .distinct()
            )
            found |= {(int(p), int(e)) for p, e in session.execute(query)}
        for project_id, evaluator_id in sorted(found):
            evaluator = session.get(E, evaluator_id)
            if evaluator is not None and evaluator.project_id == project_id:
                queue_judging(session, project_id, evaluator)
    return len(found)


__all__ = [
    "JOB",
    "back_to_pending",
    "compiled_condition",
    "queue_judging",
    "sampled",
    "wake_judge_down",
]
