"""The job table: each job is claimed by one worker; a stale claim is taken over; a worker that
lost its claim writes nothing more."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy import update

from assay.platform.server.jobs.worker import Claim, ExperimentRun, LostClaim, Worker
from assay.platform.server.storage import models


def _jobs(live, count):
    state = live.app.state.assay
    with state.transaction() as session:
        project = models.Project(name=live.new_project())
        session.add(project)
        session.flush()
        jobs = [
            models.Job(
                project_id=project.id, kind="test", experiment_id=10_000 + i, status="queued"
            )
            for i in range(count)
        ]
        session.add_all(jobs)
        session.flush()
        return project.id, [j.id for j in jobs]


def test_concurrent_claims_are_distinct_and_stale_ones_are_taken_over(live):
    state = live.app.state.assay
    # kind "test": the live server's own worker (kind "experiment") leaves these alone
    project_id, ids = _jobs(live, 4)
    workers = [Worker(state, stale_after=60, name=f"test-{i}", kinds=("test",)) for i in range(6)]
    claims: list[Claim | None] = [None] * len(workers)
    barrier = threading.Barrier(len(workers))

    def claim(index):
        barrier.wait()
        while True:
            found = workers[index].claim()
            if found is None or found.project_id == project_id:
                claims[index] = found
                return
            # a job of another test: put it back untouched
            with state.transaction() as session:
                session.execute(
                    update(models.Job)
                    .where(models.Job.id == found.job_id)
                    .values(status="queued", claimed_by=None)
                )

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(len(workers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    got = [c.job_id for c in claims if c is not None]
    assert sorted(got) == sorted(ids)  # every job once, and two workers found nothing
    first = next(c for c in claims if c is not None)
    owner = workers[claims.index(first)]
    owner.heartbeat(first)
    with state.transaction() as session:  # its worker died: the heartbeat is old
        session.execute(
            update(models.Job)
            .where(models.Job.id == first.job_id)
            .values(heartbeat_at=models.utcnow() - timedelta(seconds=120))
        )
    rescuer = Worker(state, stale_after=60, name="rescuer", kinds=("test",))
    taken = rescuer.claim()
    assert taken is not None and taken.job_id == first.job_id
    with pytest.raises(LostClaim):
        owner.heartbeat(first)
    run = ExperimentRun(state, first, lambda: False, owner=owner.name)
    with pytest.raises(LostClaim), state.transaction() as session:
        run._check_claim(session)
    with state.transaction() as session:  # leave nothing for the live worker
        session.execute(update(models.Job).where(models.Job.id.in_(ids)).values(status="done"))
