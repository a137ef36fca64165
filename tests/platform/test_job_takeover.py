"""Taking over a job whose worker is provably gone (issue #45, 4): a claim records its worker's
process (host, pid, start time), and a worker on the same host claims at once a running job whose
holder's pid is free, a zombie, or now another process, instead of waiting for its heartbeat to go
stale. A live holder, or one on another host, is left alone. The decision is checked here with
real processes; `test_resume.py` kills `assay serve` mid-experiment and times the takeover."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from sqlalchemy import delete, select

from assay.platform.server.jobs import holder
from assay.platform.server.jobs.holder import Process
from assay.platform.server.jobs.worker import Worker
from assay.platform.server.storage import models

KIND = "test-takeover"  # the live server's own worker (experiments, review judges) leaves it alone


def sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


@pytest.fixture
def dead() -> Process:
    """A process of this host that was started, recorded, killed and reaped."""
    process = sleeper()
    recorded = Process(holder.host_key(), process.pid, holder.start_time(process.pid))
    process.kill()
    process.wait(10)
    return recorded


@pytest.fixture
def alive() -> Iterator[Process]:
    process = sleeper()
    try:
        yield Process(holder.host_key(), process.pid, holder.start_time(process.pid))
    finally:
        process.kill()
        process.wait(10)


def test_this_process_is_alive():
    here = holder.this_process()
    assert here.pid > 0 and here.started is not None and here.host
    assert not holder.gone(here)
    assert holder.this_process() == here


def test_a_killed_process_is_gone(dead):
    assert holder.gone(dead)


def test_a_running_process_is_not_gone(alive):
    assert not holder.gone(alive)


def test_a_reused_pid_is_a_different_process(alive):
    """The pid runs, but started at another time than the one recorded: the holder is gone."""
    assert alive.started is not None
    earlier = Process(alive.host, alive.pid, str(int(alive.started) - 1))
    assert holder.gone(earlier)
    unknown = Process(alive.host, alive.pid, None)  # no start time recorded: cannot tell
    assert not holder.gone(unknown)


def test_a_killed_process_not_yet_reaped_is_gone():
    process = sleeper()
    recorded = Process(holder.host_key(), process.pid, holder.start_time(process.pid))
    process.kill()
    deadline = time.monotonic() + 10
    while holder._stat(process.pid)[0] != "Z":  # a zombie until its parent waits for it
        assert time.monotonic() < deadline
        time.sleep(0.01)
    try:
        assert holder.gone(recorded)
    finally:
        process.wait(10)


def test_another_host_is_never_judged(dead):
    """Pids of another machine or container mean nothing here: the heartbeat decides."""
    elsewhere = Process(dead.host + "-other", dead.pid, dead.started)
    assert not holder.gone(elsewhere)


# -- the claim: on both backends --------------------------------------------------------------
def _running_job(live, held_by: Process | None, name: str = "gone-worker") -> tuple[int, int]:
    """A running job with a fresh heartbeat, claimed by `held_by` (None: a claim from before
    the holder was recorded); (project id, job id)."""
    state = live.app.state.assay
    with state.transaction() as session:
        project = models.Project(name=live.new_project())
        session.add(project)
        session.flush()
        job = models.Job(
            project_id=project.id,
            kind=KIND,
            status="running",
            claimed_by=name,
            heartbeat_at=models.utcnow(),
            attempts=1,
        )
        if held_by is not None:
            job.claimed_host, job.claimed_pid = held_by.host, held_by.pid
            job.claimed_started = held_by.started
        session.add(job)
        session.flush()
        return project.id, job.id


def _cleanup(live) -> None:
    with live.app.state.assay.transaction() as session:
        session.execute(delete(models.Job).where(models.Job.kind == KIND))


def test_a_job_whose_worker_died_is_taken_over_at_once(live, dead):
    state = live.app.state.assay
    try:
        _project, job_id = _running_job(live, dead)
        rescuer = Worker(state, stale_after=600, name="rescuer", kinds=(KIND,))
        taken = rescuer.claim()  # the heartbeat is fresh: only the dead pid tells
        assert taken is not None and taken.job_id == job_id
        with state.transaction() as session:
            job = session.get(models.Job, job_id)
            assert job.claimed_by == "rescuer" and job.status == "running"
            assert (job.claimed_pid, job.attempts) == (holder.this_process().pid, 2)
            assert job.claimed_host == holder.host_key()
        assert rescuer.claim() is None  # now held by a live process: this one
    finally:
        _cleanup(live)


def test_a_job_held_by_a_live_worker_or_elsewhere_is_left_alone(live, alive, dead):
    state = live.app.state.assay
    try:
        _running_job(live, alive, "live-worker")
        _running_job(live, Process("another-host", dead.pid, dead.started), "remote-worker")
        _running_job(live, None, "old-worker")  # claimed before the holder was recorded
        same_process = holder.this_process()
        _running_job(live, same_process, "sibling-worker")  # another worker of this process
        rescuer = Worker(state, stale_after=600, name="rescuer", kinds=(KIND,))
        assert rescuer.claim() is None
        with state.transaction() as session:
            owners = session.scalars(select(models.Job.claimed_by).where(models.Job.kind == KIND))
            assert sorted(owners) == [
                "live-worker",
                "old-worker",
                "remote-worker",
                "sibling-worker",
            ]
    finally:
        _cleanup(live)
