"""The `jobs` table as the workers use it: claim a job, keep the claim fresh, finish it, and check
before each write that the claim still holds.

Claiming is one `UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED) RETURNING …` (on SQLite,
whose writers are serialised by `BEGIN IMMEDIATE`, the lock clause is left out). A running job
whose heartbeat is older than `stale_after` seconds (its worker died) is claimed again and resumes.
A claim also records the worker's process (`holder.py`: host, pid, start time), so a worker on
the same host takes over at once from one that is provably gone (killed, crashed): a restarted
`assay serve` resumes its experiment within a poll, not after the heartbeat's timeout.
A claim is lost when another worker took the job over or the job was cancelled; a run that lost
its claim writes nothing more.

Separate from `worker.py` because both the worker thread and the runs it starts (an experiment's
`ExperimentRun`, a review queue's `QueueJudgeRun`) need these statements and the `LostClaim`
errors, and none of them needs the worker's threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import or_, select, update

from assay.platform.server.jobs import holder
from assay.platform.server.jobs.holder import Process
from assay.platform.server.storage import models


@dataclass(frozen=True)
class Claim:
    job_id: int
    experiment_id: int | None
    project_id: int
    kind: str = "experiment"
    queue_id: int | None = None  # a review_judge job's queue (review_judge.py)
    evaluator_id: int | None = None  # an online_eval job's evaluator (online_eval.py)


class LostClaim(Exception):
    """Another worker took the job over (this one's heartbeat went stale)."""


class JobCancelled(LostClaim):
    """The job was cancelled (its experiment too, by the cancel endpoint): write nothing more."""


def claimed_by(session: Any, job_id: int) -> str | None:
    """Which worker holds the job (None for a job nobody holds, or no such job)."""
    return session.scalar(select(models.Job.claimed_by).where(models.Job.id == job_id))


def claim_lost(session: Any, job_id: int, owner: str) -> LostClaim | None:
    """Why this worker may no longer write for the job, or None while it holds it. On PostgreSQL
    the job row stays locked until the caller's transaction ends, so a cancel or a takeover waits
    for a write in progress instead of slipping in between this check and the write."""
    query = select(models.Job.claimed_by, models.Job.status).where(models.Job.id == job_id)
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update()
    row = session.execute(query).first()
    if row is not None and row.status == "cancelled":
        return JobCancelled(f"job {job_id} was cancelled")
    if row is None or row.claimed_by != owner or row.status != "running":
        return LostClaim(f"job {job_id} was taken over")
    return None


# what a claim returns, in the order of Claim's fields
_RETURNED = (
    models.Job.id,
    models.Job.experiment_id,
    models.Job.project_id,
    models.Job.kind,
    models.Job.queue_id,
    models.Job.evaluator_id,
)


def claim_next(
    state: Any,
    owner: str,
    kinds: tuple[str, ...],
    stale_after: float,
    process: Process | None = None,
) -> Claim | None:
    """Claim a job of one of `kinds`: first a running one whose worker's process is provably gone
    (on this host), then the oldest queued one or a running one whose heartbeat is stale."""
    process = process or holder.this_process()
    now = datetime.now(timezone.utc)
    stale = now - timedelta(seconds=stale_after)
    job = models.Job
    candidate = (
        select(job.id)
        .where(
            job.kind.in_(kinds),
            or_(job.status == "queued", (job.status == "running") & (job.heartbeat_at < stale)),
        )
        .order_by(job.id)
        .limit(1)
    )
    if state.engine.dialect.name == "postgresql":
        candidate = candidate.with_for_update(skip_locked=True)
    statement = (
        update(job)
        .where(job.id == candidate.scalar_subquery())
        .values(_claimed(owner, process, now))
        .returning(*_RETURNED)
    )
    with state.transaction() as session:
        taken = _take_over_the_dead(session, owner, kinds, process, now)
        if taken is not None:
            return taken
        row = session.execute(statement).first()
    return Claim(*row) if row else None


def _claimed(owner: str, process: Process, now: datetime) -> dict[str, Any]:
    return {
        "status": "running",
        "claimed_by": owner,
        "claimed_host": process.host,
        "claimed_pid": process.pid,
        "claimed_started": process.started,
        "heartbeat_at": now,
        "attempts": models.Job.attempts + 1,
    }


def _take_over_the_dead(
    session: Any, owner: str, kinds: tuple[str, ...], process: Process, now: datetime
) -> Claim | None:
    """A running job of `kinds` held on this host by a process that is gone, claimed for `owner`
    (the UPDATE repeats who held it, so of two workers seeing the same dead holder one wins)."""
    job = models.Job
    held = session.execute(
        select(job.id, job.claimed_by, job.claimed_pid, job.claimed_started)
        .where(
            job.kind.in_(kinds),
            job.status == "running",
            job.claimed_host == process.host,
            job.claimed_pid.is_not(None),
        )
        .order_by(job.id)
    ).all()
    for ident, was, pid, started in held:
        if not holder.gone(Process(process.host, pid, started), process):
            continue
        row = session.execute(
            update(job)
            .where(
                job.id == ident,
                job.status == "running",
                job.claimed_by == was,
                job.claimed_pid == pid,
            )
            .values(_claimed(owner, process, now))
            .returning(*_RETURNED)
        ).first()
        if row:
            return Claim(*row)
    return None


def _still_ours(claim: Claim, owner: str) -> Any:
    """An UPDATE of the claimed job that touches it only while `owner` still runs it (not one
    cancelled or taken over meanwhile)."""
    return update(models.Job).where(
        models.Job.id == claim.job_id,
        models.Job.claimed_by == owner,
        models.Job.status == "running",
    )


def heartbeat(state: Any, claim: Claim, owner: str) -> None:
    """Keep the claim fresh; `JobCancelled` or `LostClaim` when the job is no longer ours."""
    with state.transaction() as session:
        done = session.execute(
            _still_ours(claim, owner).values(heartbeat_at=datetime.now(timezone.utc))
        )
        lost = claim_lost(session, claim.job_id, owner) if done.rowcount == 0 else None
    if done.rowcount == 0:
        raise lost or LostClaim(f"job {claim.job_id} was taken over")


def check(state: Any, claim: Claim, owner: str) -> None:
    """`JobCancelled` or `LostClaim` when the job is no longer ours; a read, cheaper than a
    heartbeat, for looking often whether the job was cancelled."""
    with state.transaction() as session:
        lost = claim_lost(session, claim.job_id, owner)
    if lost is not None:
        raise lost


def finish(
    state: Any,
    claim: Claim,
    owner: str,
    status: str,
    error: str | None = None,
    experiment_status: str | None = None,
) -> None:
    """End the claim with the job's `status` (`queued` hands it back) and, for an experiment job,
    the experiment's; nothing changes when the job was cancelled or taken over meanwhile."""
    now = datetime.now(timezone.utc)
    with state.transaction() as session:
        done = session.execute(
            _still_ours(claim, owner).values(
                status=status,
                error=error,
                finished_at=now if status in ("done", "failed") else None,
                claimed_by=None if status == "queued" else owner,
            )
        )
        if experiment_status is not None and done.rowcount:
            session.execute(
                update(models.Experiment)
                .where(
                    models.Experiment.id == claim.experiment_id,
                    models.Experiment.project_id == claim.project_id,
                )
                .values(status=experiment_status, error=error, finished_at=now)
            )


__all__ = [
    "Claim",
    "JobCancelled",
    "LostClaim",
    "check",
    "claim_lost",
    "claim_next",
    "claimed_by",
    "finish",
    "heartbeat",
]
