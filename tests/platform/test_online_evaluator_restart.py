"""An online evaluator's job across a worker stop and a crash, on SQLite and PostgreSQL: the live
server's worker is stopped while the judge answers the second chunk (the first is stored), its
job is then left as a killed process leaves it (running, held by a pid that is gone), and a new
worker takes it over at once and finishes: every trace is scored exactly once."""

from __future__ import annotations

import itertools
import subprocess
import time
from datetime import datetime, timezone
from typing import Any

import pytest

from tests.models.fake_openai import dynamic, ok
from tests.platform.test_online_evaluators import (
    CORRECT,
    evaluator,
    settled,
    stored_scores,
    trace,
    wait_for,
)

WORKER_OPTIONS = {"poll_interval": 0.1, "heartbeat_interval": 0.2, "stale_after": 2.0}


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def _as_if_killed(live: Any, evaluator_id: int) -> int:
    """Leave the evaluator's job as a `kill -9` of its worker would: running, held by a gone pid."""
    from sqlalchemy import select, update

    from assay.platform.server.jobs import holder
    from assay.platform.server.storage import models

    with live.app.state.assay.transaction() as session:
        job = session.scalar(
            select(models.Job.id).where(
                models.Job.evaluator_id == evaluator_id, models.Job.status == "queued"
            )
        )
        assert job is not None, "the stopped worker handed its job back"
        session.execute(
            update(models.Job)
            .where(models.Job.id == job)
            .values(
                status="running",
                claimed_by="killed-worker",
                claimed_host=holder.host_key(),
                claimed_pid=_dead_pid(),
                claimed_started="1",
                heartbeat_at=datetime.now(timezone.utc),  # fresh: only the gone pid frees it
            )
        )
    return int(job)


@pytest.mark.slow  # ~3 s a backend: the second chunk's answers take 1.5 s
def test_a_stopped_then_killed_worker_leaves_every_trace_scored_once(live, fake, monkeypatch):
    from assay.platform.server.jobs import online_eval
    from assay.platform.server.jobs.worker import Worker

    monkeypatch.setattr(online_eval, "CHUNK", 2)  # the live server's worker runs in this process
    asked = itertools.count()  # the first chunk answers at once, the rest slowly: the stop
    # below lands while the second chunk is asked, however loaded the machine is
    fake.default = dynamic(lambda _request: ok("yes", latency=0.05 if next(asked) < 2 else 1.5))
    with live.client(live.key()) as api:
        assert api.post("/criteria", json=CORRECT).status_code == 201
        made = api.post("/evaluators", json=evaluator(fake)).json()
        traces = [trace() for _ in range(4)]
        api.post("/traces", json={"traces": traces})
        deadline = time.monotonic() + 30
        while len(fake.chat_requests) < 3:  # the second chunk is being judged
            assert time.monotonic() < deadline, len(fake.chat_requests)
            time.sleep(0.02)
        own = live.app.state.worker  # the live server's: restarted at the end, as it was
        own.stop()
        rescuer = None
        try:
            stopped = api.get("/evaluators/Prod").json()["traces"]
            assert stopped["scored"] == 2 and stopped["pending"] == 2, stopped
            job = _as_if_killed(live, made["id"])
            rescuer = Worker(live.app.state.assay, **WORKER_OPTIONS).start()
            done = wait_for(api, "Prod", lambda s: s["traces"]["scored"] == 4 and settled(s))
        finally:
            if rescuer is not None:
                rescuer.stop()
            own.start()  # fresh workers; the server's lifespan stops them at the end
        assert done["traces"]["error"] == 0
        scores = stored_scores(live, [t["id"] for t in traces])
        assert sorted(s.trace_id for s in scores) == sorted(t["id"] for t in traces)
        from sqlalchemy import select

        from assay.platform.server.storage import models

        with live.app.state.assay.transaction() as session:
            row = session.execute(
                select(models.Job.status, models.Job.attempts).where(models.Job.id == job)
            ).one()
        assert row.status == "done" and row.attempts >= 2  # taken over, not started afresh
