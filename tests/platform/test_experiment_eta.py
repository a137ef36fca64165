"""The ETA after a real cancel → pause → resume counts from the resume (the current run segment),
not from the first start: the paused stretch is not spread over the remaining cells. On SQLite
and PostgreSQL, with the loopback fake OpenAI server answering at a fixed latency."""

from __future__ import annotations

import time
from datetime import datetime, timezone

from sqlalchemy import func, select

from assay.platform import Experiment
from tests.platform.test_experiments import behaviour

PAUSE = 4.0  # seconds the experiment stays cancelled


def _key_of(sdk) -> str:
    return sdk.login.__globals__["_client"].key


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _poll(api, ident: int, ready, what: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        progress = api.get(f"/experiments/{ident}/progress").json()
        if ready(progress):
            return progress
        assert time.monotonic() < deadline and progress["status"] != "completed", (what, progress)
        time.sleep(0.03)


def test_the_eta_after_a_resume_counts_from_the_resume(sdk, live, fake, many_capitals):
    from assay.platform.server.storage import models

    fake.default = behaviour(latency=0.15)
    experiment = Experiment(name="eta", **many_capitals())
    experiment.run_async().result(timeout=30)
    with live.client(_key_of(sdk)) as api:

        def done(p: dict) -> int:
            return p["completed"] + p["failed"]

        first = _poll(
            api,
            experiment.id,
            lambda p: p["status"] == "running" and 0 < done(p) < 0.4 * p["total"],
            "part way through the first segment",
        )
        assert first["eta_s"] is not None and first["eta_s"] > 0
        cancelled = experiment.cancel()
        assert cancelled["eta_s"] is None
        time.sleep(PAUSE)
        resumed = experiment.resume()
        assert resumed["status"] == "queued" and resumed["eta_s"] is None  # no worker on it yet
        before = done(cancelled)
        progress = _poll(
            api,
            experiment.id,
            lambda p: p["status"] == "running" and p["eta_s"] is not None and done(p) > before,
            "the resumed segment storing cells",
        )
        now = datetime.now(timezone.utc)
        shown = api.get(f"/experiments/{experiment.id}").json()
        started, segment = _moment(shown["started_at"]), _moment(shown["run_started_at"])
        assert (segment - started).total_seconds() >= PAUSE  # a new segment began at the resume

        remaining = progress["total"] - done(progress)
        # what the first-start rate would say: the pause spread over the remaining cells
        from_first_start = (now - started).total_seconds() / done(progress) * remaining
        with live.app.state.assay.transaction() as session:
            in_segment = session.scalar(
                select(func.count())
                .select_from(models.Score)
                .where(
                    models.Score.experiment_id == experiment.id,
                    models.Score.created_at >= segment,
                )
            )
        assert in_segment > 0  # cells stored since the resume count for the rate
        pause_share = PAUSE * remaining / done(progress)
        assert progress["eta_s"] < from_first_start - 0.5 * pause_share, (
            progress,
            from_first_start,
            pause_share,
        )
    final = experiment.results(wait=True, poll_interval=0.05)
    assert final["status"] == "completed" and final["progress"]["eta_s"] == 0.0
