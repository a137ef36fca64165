"""Retention (`jobs/retention.py`, `storage/retention.py`) on a live server, SQLite and PostgreSQL:
traces older than N days go in batches with their scores, labels and rollup entries, newer ones
stay; ingest through the SDK's batch route is answered while retention is deleting (requests
land between its batches); and the setting is checked (`--retention-days`, the env var)."""

from __future__ import annotations

import threading
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import func, select

from assay.errors import UsageError
from assay.platform.server.jobs.retention import ENV, Retention, retention_days
from assay.platform.server.storage import models
from assay.platform.server.storage.rollups import rebuild

OLD, KEPT = 300, 20


class Taking(Retention):
    """Retention that, after each of its first batches, waits until the test has had an ingest
    request answered (`rested`, `go_on`); then it rests as usual."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.rested, self.go_on, self.rests = threading.Event(), threading.Event(), 0

    def _rest(self) -> None:
        self.rests += 1
        if self.rests <= 3:
            self.rested.set()
            assert self.go_on.wait(60)
            self.go_on.clear()
        super()._rest()


def traces(count: int, at: datetime, prefix: str) -> list[dict]:
    return [
        {
            "id": str(uuid.uuid4()),
            "created_at": (at - timedelta(seconds=i)).isoformat(),
            "input": f"{prefix} {i}",
            "output": "answer",
            "model": "m-a",
            "latency_ms": 10.0 + i,
            "metadata": {"cost": 0.01},
        }
        for i in range(count)
    ]


def counted(session, project_id: int, model) -> int:
    query = select(func.count()).select_from(model).where(model.project_id == project_id)
    return int(session.scalar(query))


def rollup_sum(session, project_id: int) -> int:
    R = models.TraceRollup
    return int(session.scalar(select(func.sum(R.traces)).where(R.project_id == project_id)) or 0)


def test_retention_deletes_old_traces_in_batches_while_ingest_goes_on(live):
    key = live.key()
    now = datetime.now(timezone.utc)
    old = traces(OLD, now - timedelta(days=40), "old")
    kept = traces(KEPT, now - timedelta(days=2), "kept")
    with live.client(key) as api:
        for first in range(0, OLD, 300):
            assert api.post("/traces", json={"traces": old[first : first + 300]}).status_code == 202
        assert api.post("/traces", json={"traces": kept}).status_code == 202
        for trace in (old[0], kept[0]):
            scored = api.post(
                f"/traces/{trace['id']}/scores", json={"criterion": "helpful", "value": 4}
            )
            assert scored.status_code in (200, 201), scored.text
            labelled = api.post(
                f"/traces/{trace['id']}/labels", json={"criterion": "ok", "value": True}
            )
            assert labelled.status_code == 201, labelled.text
        project_id = api.get("/auth/whoami").json()["project"]["id"]

        state = live.app.state.assay
        with state.transaction() as session:
            assert rollup_sum(session, project_id) == OLD + KEPT
        retention = Taking(state, days=30, batch=30, pause=0.05)
        progress: list[int] = []  # how far retention was when each ingest request was answered
        # this project only: the server's database is shared with other tests
        sweep = threading.Thread(target=retention.sweep, kwargs={"only": [project_id]})
        sweep.start()
        for _ in range(3):  # between batches, with retention part-way, ingest is answered
            assert retention.rested.wait(60)
            retention.rested.clear()
            sent = api.post("/traces", json={"traces": traces(5, now, "new")})
            assert sent.status_code == 202, sent.text
            progress.append(retention.deleted)
            retention.go_on.set()
        while sweep.is_alive():  # and while it deletes the rest
            sent = api.post("/traces", json={"traces": traces(5, now, "new")})
            assert sent.status_code == 202, sent.text
            progress.append(retention.deleted)
        sweep.join()

    assert retention.deleted == OLD
    assert all(0 < done < OLD for done in progress[:3]), progress
    assert progress[:3] == sorted(progress[:3]) and progress[0] < progress[2], progress
    T, S, L = models.LoggedTrace, models.TraceScore, models.TraceLabel
    with state.transaction() as session:
        left = set(session.scalars(select(T.input_text).where(T.project_id == project_id)))
        assert not any(text.startswith("old") for text in left)
        assert sum(text.startswith("kept") for text in left) == KEPT
        new = len(progress) * 5
        assert counted(session, project_id, T) == KEPT + new
        assert counted(session, project_id, S) == 1 and counted(session, project_id, L) == 1
        assert rollup_sum(session, project_id) == KEPT + new  # the rollups lost the old ones
        R, B = models.TraceRollup, models.TraceLatencyBin
        before = (
            session.execute(select(R).where(R.project_id == project_id)).all(),
            counted(session, project_id, B),
        )
        rebuild(session, project_id)  # and equal what the traces left give
        session.flush()
        after = (
            session.execute(select(R).where(R.project_id == project_id)).all(),
            counted(session, project_id, B),
        )
        assert len(before[0]) == len(after[0]) and before[1] == after[1]
    assert retention.sweep(only=[project_id]) == 0  # nothing left to delete


def test_the_setting(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert retention_days(None) is None
    assert retention_days(7) == 7
    monkeypatch.setenv(ENV, "30")
    assert retention_days(None) == 30.0
    assert retention_days(2.5) == 2.5  # the option wins over the environment
    monkeypatch.setenv(ENV, "a month")
    with pytest.raises(UsageError, match=ENV):
        retention_days(None)
    for bad in (0, -1, float("nan")):
        with pytest.raises(UsageError, match="--retention-days"):
            retention_days(bad)
