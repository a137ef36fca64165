"""A review queue's judge job: queueing it, which of its scores stand, and asking again what it
could not ask while its judge was down.

A queue with a judge model and criteria gets a `review_judge` job whenever items enter it or its
judge or criteria change (`request_judging`; one queued job is enough, it scores every item still
unscored). When the judge is down for a run (jobs/calls.py), the items left get an error score
from the queue with `error_type` `EndpointDown` (the calls that found it down too: jobs/
review_judge.py). Such a score stands only until its retry is due: `standing` leaves a (trace or
session, criterion) out of what the queue has judged once the queue's latest score of it is an
`EndpointDown` older than `retry_after()` (`ASSAY_JUDGE_RETRY_AFTER`, 300 s), so the queue's next
judge run after that asks again and appends the new score (the latest score wins wherever scores
are read). A newer one waits: runs that new items start while the judge is still down do not
ask it again for the whole backlog. Any other error, or a real score, stands for good.

A judge that stays down for several runs leaves one `EndpointDown` row per (item, criterion), not
one per run: `fold_down_again` updates the waiting row in place (the latest cause, and the time
the retry waits from) instead of appending another.

`wake_judge_down` is the idle scoring worker's look (jobs/worker.py, every
`DOWN_CHECK_INTERVAL`): a queue whose items have waited so for `after` or longer, with no judge
job queued or running, gets its job. A judge still down leaves fresh `EndpointDown` scores, so
it is asked at most once every `after`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.platform.server.storage import models

JUDGE_JOB = "review_judge"
DOWN = "EndpointDown"  # the error type of a score stored without asking a judge that was down
RETRY_AFTER_ENV, DEFAULT_RETRY_AFTER = "ASSAY_JUDGE_RETRY_AFTER", 300.0
Q, Job = models.ReviewQueue, models.Job


def request_judging(session: Session, project_id: int, queue: models.ReviewQueue) -> bool:
    """Queue `queue`'s judge job unless one is already queued (or the queue has no judge or no
    criteria). True when a job was added."""
    if not queue.judge_model or not queue.criteria:
        return False
    waiting = session.scalar(
        select(Job.id).where(
            Job.project_id == project_id,
            Job.kind == JUDGE_JOB,
            Job.queue_id == queue.id,
            Job.status == "queued",
        )
    )
    if waiting is not None:
        return False
    session.add(
        Job(
            project_id=project_id,
            kind=JUDGE_JOB,
            queue_id=queue.id,
            experiment_id=None,
            status="queued",
            attempts=0,
        )
    )
    session.flush()
    return True


def is_down(outcome: dict[str, Any] | None) -> bool:
    """Whether a stored outcome is the error of a judge that was down (not asked, so asked
    again later)."""
    if not outcome:
        return False
    return outcome.get("status") == "error" and outcome.get("error_type") == DOWN


def retry_after() -> timedelta:
    """How long an `EndpointDown` score waits before its judge is asked again
    (`ASSAY_JUDGE_RETRY_AFTER` seconds, 300 by default; the idle wake reads the same)."""
    raw = os.environ.get(RETRY_AFTER_ENV, "")
    try:
        seconds = float(raw) if raw.strip() else DEFAULT_RETRY_AFTER
    except ValueError:
        seconds = DEFAULT_RETRY_AFTER
    return timedelta(seconds=max(0.0, seconds))


def standing(rows: Iterable[Any], due_before: datetime | None = None) -> set[tuple[str, str]]:
    """Of one queue's scores as (subject id, criterion, outcome, created_at) rows, oldest
    first: the (subject, criterion) pairs whose latest score stands. A real score or any other
    error stands; an `EndpointDown` error stands only while it is newer than `due_before` (it
    waits for its retry: a run that new items start while the judge is still down does not ask
    it again and store another), and not at all without `due_before`."""
    latest: dict[tuple[str, str], tuple[Any, datetime]] = {}
    for subject, criterion, outcome, at in rows:
        latest[(subject, criterion)] = (outcome, at)
    return {
        pair
        for pair, (outcome, at) in latest.items()
        if not is_down(outcome) or (due_before is not None and _utc(at) > due_before)
    }


def fold_down_again(
    session: Session, project_id: int, queue_id: int, scope: str, rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Of the score rows a judge run of queue `queue_id` (`scope` "trace" or "session") is about
    to append: each `EndpointDown` whose (subject, criterion)'s latest score from the queue is an
    `EndpointDown` already updates that row instead (its outcome and `created_at` now, so the
    next retry waits from this attempt). Returns the rows still to append, in order."""
    S: Any = models.SessionScore if scope == "session" else models.TraceScore
    key = "session_id" if scope == "session" else "trace_id"
    subjects = {row[key] for row in rows if is_down(row["outcome"])}
    if not subjects:
        return rows
    query = (
        select(S)
        .where(S.project_id == project_id, S.queue_id == queue_id, getattr(S, key).in_(subjects))
        .order_by(S.created_at, S.id)
    )
    latest = {(getattr(score, key), score.criterion): score for score in session.scalars(query)}
    now, kept = datetime.now(timezone.utc), []
    for row in rows:
        waiting = latest.get((row[key], row["criterion"]))
        if is_down(row["outcome"]) and waiting is not None and is_down(waiting.outcome):
            waiting.outcome, waiting.value, waiting.created_at = row["outcome"], None, now
        else:
            kept.append(row)
    session.flush()
    return kept


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _waits(session: Session, queue: models.ReviewQueue, cutoff: datetime) -> bool:
    """Whether `queue` has an item whose latest score from it is an `EndpointDown` error stored
    at or before `cutoff`, with no judge job queued or running.

    Kept cheap for the idle look: the jobs table is read by its `queue_id` index first, and the
    scores (by their `queue_id` index) only when the queue's latest judge job failed, which a
    run that met its judge down always does (`ModelsDown`); only the scores stored since that
    job was queued are read, the ones its run (or one overlapping it) stored. (Scores left by
    an earlier run, when a later run failed for another reason before asking again, wait for
    the queue's next run: items entering it, or a change of its judge or criteria.)"""
    jobs = select(Job.status, Job.created_at).where(
        Job.project_id == queue.project_id, Job.kind == JUDGE_JOB, Job.queue_id == queue.id
    )
    if session.execute(jobs.where(Job.status.in_(("queued", "running"))).limit(1)).first():
        return False
    last = session.execute(jobs.order_by(Job.id.desc()).limit(1)).first()
    if last is None or last.status != "failed":
        return False
    S: Any = models.SessionScore if queue.scope == "session" else models.TraceScore
    subject = S.session_id if queue.scope == "session" else S.trace_id
    query = (
        select(subject, S.criterion, S.outcome, S.created_at)
        .where(
            S.project_id == queue.project_id,
            S.queue_id == queue.id,
            S.created_at >= last.created_at,
        )
        .order_by(S.created_at, S.id)
    )
    latest: dict[tuple[str, str], tuple[Any, datetime]] = {}
    for sid, criterion, outcome, at in session.execute(query):
        latest[(sid, criterion)] = (outcome, at)
    return any(is_down(outcome) and _utc(at) <= cutoff for outcome, at in latest.values())


def wake_judge_down(
    transaction: Callable[[], AbstractContextManager[Session]], after: timedelta
) -> int:
    """Give a judge job to every judged queue (any project) whose items hold `EndpointDown`
    scores from it stored at least `after` ago and that has no judge job queued or running, so
    a judge that is back is asked again without waiting for a new item. Returns how many
    queues were woken. Reads the queues with a judge (few) and, per queue, its latest job."""
    cutoff = datetime.now(timezone.utc) - after
    woken = 0
    with transaction() as session:
        judged = select(Q).where(Q.judge_model.is_not(None), Q.judge_model != "").order_by(Q.id)
        for queue in list(session.scalars(judged)):
            if queue.criteria and _waits(session, queue, cutoff):
                woken += request_judging(session, queue.project_id, queue)
    return woken


__all__ = [
    "DOWN",
    "JUDGE_JOB",
    "fold_down_again",
    "is_down",
    "request_judging",
    "retry_after",
    "standing",
    "wake_judge_down",
]
