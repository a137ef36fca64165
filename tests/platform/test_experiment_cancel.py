"""Cancel and resume an experiment, and a server that stops promptly while its worker is busy.

Cancel: the experiment is `cancelled` at once, nothing is stored after the cancel answered, the
worker stops calling models, and the partial results say how much was done (never NaN). Resume:
the experiment continues without repeating a stored generation or judgement and ends with the
results of an uninterrupted run. SIGTERM to `assay serve` mid-experiment: the process is gone in a
few seconds (not the worker's 30 s join) and the job is back in the queue.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import httpx
import pytest
from sqlalchemy import select

import assay.platform as ragmetrics
from assay.platform import Cohort, Conflict, Experiment, PlatformError
from tests.models.fake_openai import Behaviour, RecordedRequest, Reply, hang
from tests.platform.test_experiments import behaviour, seed_objects
from tests.platform.test_resume import comparable, start

LATENCY = 0.15


def _key_of(sdk) -> str:
    return sdk.login.__globals__["_client"].key


@pytest.fixture
def one_cohort(fake):
    """Makes experiments of one cohort, judged by the function criterion only (no judge model),
    over the 4 seed examples, which every experiment of the test shares (made at the first call,
    after login). Each gets a model string of its own, so no cached answer finishes it early;
    `generator_model` gives it another one (a provider that is down)."""
    objects = []

    def make(name: str, generator_model: str | None = None) -> Experiment:
        if not objects:
            objects.extend(seed_objects(fake, f"-{uuid.uuid4().hex[:8]}"))
        dataset, task, criteria = objects
        model = generator_model or fake.model_string(f"gen-{uuid.uuid4().hex[:12]}")
        return Experiment(
            name=name,
            dataset=dataset,
            task=task,
            cohorts=[Cohort(name="c", generator_model=model)],
            criteria=criteria[2:],
            judge_model="",
        )

    return make


def _request_key(record) -> tuple[str, str]:
    return record.body.get("model", ""), json.dumps(record.messages, sort_keys=True)


def test_cancel_keeps_partial_results_and_resume_matches_an_uninterrupted_run(
    sdk, live, fake, many_capitals, capsys
):
    fake.default = behaviour(latency=LATENCY)
    spec = many_capitals()
    experiment = Experiment(name="cancelled", **spec)
    with ThreadPoolExecutor(1) as pool, live.client(_key_of(sdk)) as api:
        running = pool.submit(experiment.run, poll_interval=0.05)  # its bar is live meanwhile
        deadline = time.monotonic() + 60
        while True:
            progress = (
                api.get(f"/experiments/{experiment.id}/progress").json()
                if experiment.id is not None
                else {"completed": 0, "failed": 0, "total": 1}
            )
            done = progress["completed"] + progress["failed"]
            if 0 < done < progress["total"] * 0.5:
                break
            assert done < progress["total"] * 0.5 and time.monotonic() < deadline, progress
            time.sleep(0.02)
        cancelled = experiment.cancel()
        cancelled_at = time.monotonic()
        assert cancelled["status"] == "cancelled" and cancelled["eta_s"] is None
        assert (
            cancelled["pending"]
            == cancelled["total"] - cancelled["completed"] - cancelled["failed"]
        )
        assert cancelled["pending"] > 0
        # the run() that was waiting ends cleanly with the partial results
        partial = running.result(timeout=30)
    assert partial["status"] == "cancelled"
    assert f"{experiment.name} (cancelled)" in capsys.readouterr().err
    json.dumps(partial, allow_nan=False)  # never NaN
    assert partial["progress"]["pending"] > 0
    coverage = [line["coverage"] for line in partial["summary"]]
    assert all(0.0 <= c <= 1.0 for c in coverage) and min(coverage) < 1.0
    assert all(line["n"] == 20 for line in partial["summary"])
    stored = sum(len(row["scores"]) for row in partial["rows"])
    assert stored == partial["progress"]["completed"] + partial["progress"]["failed"]

    # the worker notices (next store or heartbeat): nothing more is stored, no model is called
    time.sleep(1.0)
    quiet_from = len(fake.chat_requests)
    time.sleep(0.5)
    assert len(fake.chat_requests) == quiet_from
    assert comparable(experiment.results()) == comparable(partial)
    from assay.platform.server.storage import models

    with live.app.state.assay.transaction() as session:
        job = session.scalar(select(models.Job).where(models.Job.experiment_id == experiment.id))
        assert job.status == "cancelled"

    # resume: the same experiment goes on; run() waits for it again
    resumed_at = time.monotonic()
    assert experiment.resume()["status"] == "queued"
    resumed = experiment.run(poll_interval=0.05)
    assert resumed["status"] == "completed" and resumed["id"] == partial["id"]
    assert resumed["progress"]["pending"] == 0 and len(resumed["rows"]) == 40
    # nothing twice, except a call that was in flight (unanswered) when the cancel came
    requests = [r for r in fake.chat_requests if "model" in r.body]
    seen = collections.Counter(_request_key(r) for r in requests)
    in_flight = {
        _request_key(r)
        for r in requests
        if r.time <= resumed_at and (r.done is None or r.done >= cancelled_at - 0.05)
    }
    repeated = {k for k, count in seen.items() if count > 1}
    assert repeated <= in_flight, repeated - in_flight
    assert len({_request_key(r) for r in requests if r.body["model"].startswith("gen")}) == 40
    # and the results of an uninterrupted run of the same experiment
    again = Experiment(name="uninterrupted", **spec).run(poll_interval=0.05)
    assert comparable(again) == comparable(resumed)
    json.dumps(resumed, allow_nan=False)


def test_cancel_and_resume_refuse_what_they_cannot_do(sdk, live, fake, one_cohort):
    fake.default = behaviour()
    quick = one_cohort("quick")
    with pytest.raises(PlatformError, match="has not been submitted"):
        quick.cancel()
    assert quick.run(poll_interval=0.05)["status"] == "completed"
    with pytest.raises(Conflict, match=f"experiment {quick.id} is already completed"):
        quick.cancel()
    with pytest.raises(Conflict, match="cannot be resumed: it has completed"):
        quick.resume()

    # a slow one: cancel it, cancel again (409), resume, resume again (409)
    fake.default = behaviour(latency=2.0)
    slow = one_cohort("slow")
    slow.run_async().result(timeout=30)
    assert slow.cancel()["status"] == "cancelled"
    with pytest.raises(Conflict, match=r"already cancelled.*resume it"):
        slow.cancel()
    assert slow.resume()["status"] == "queued"
    with pytest.raises(Conflict, match=r"cannot be resumed: it is (queued|running)"):
        slow.resume()
    assert slow.cancel()["status"] == "cancelled"  # leave the worker free
    # ... once the cancelled run's calls in flight (2 s each) have landed while the fake is up:
    # cut off by the fake's teardown, they would keep the server's experiment worker retrying a closed
    # port, and later tests' jobs would wait
    time.sleep(2.5)

    # another project's key: 404; a read-only key: 403; an unknown id: 404
    other = live.client(live.key())
    reader = live.client(live.key(live.projects[-2], scopes=("read",)))
    mine = live.client(_key_of(sdk))
    with other, reader, mine:
        for action in ("cancel", "resume"):
            answer = other.post(f"/experiments/{slow.id}/{action}")
            assert answer.status_code == 404, answer.text
            assert (
                answer.json()["error"]["message"]
                == f"no experiment with id {slow.id} in this project"
            )
            assert reader.post(f"/experiments/{slow.id}/{action}").status_code == 403
            assert mine.post(f"/experiments/2147483647/{action}").status_code == 404
            assert mine.post(f"/experiments/0/{action}").status_code == 422
        assert mine.get(f"/experiments/{slow.id}").json()["status"] == "cancelled"


def _fresh_database(request) -> str:
    """A database of its own in the test PostgreSQL, so no other test's worker takes the job."""
    import psycopg

    url = request.getfixturevalue("pg_url")
    name = f"stop_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(
        url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True
    ) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{url.rsplit('/', 1)[0]}/{name}"


def _stuck_experiment(one_cohort, fake) -> Experiment:
    """Its generator holds every answer for two minutes (past the job's 60 s attempt timeout; a
    refused connection would end the job at once: the gate of jobs/calls.py)."""
    fake.default = hang(120.0)
    experiment = one_cohort("stuck")
    experiment.run_async().result(timeout=30)
    return experiment


def _wait_running(base: str, key: str, experiment_id: int) -> None:
    deadline = time.monotonic() + 30
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=f"{base}/api/v1", headers=headers) as api:
        while api.get(f"/experiments/{experiment_id}").json()["status"] != "running":
            assert time.monotonic() < deadline, "the worker never claimed the experiment"
            time.sleep(0.05)
    time.sleep(0.5)  # inside the generation's retries


def _job_and_rows(db: str, experiment_id: int) -> tuple[tuple, list]:
    from assay.platform.server.storage import models
    from assay.platform.server.storage.db import make_engine

    engine = make_engine(db)
    try:
        with engine.connect() as connection:
            job = connection.execute(
                select(models.Job.status, models.Job.claimed_by).where(
                    models.Job.experiment_id == experiment_id
                )
            ).one()
            rows = [
                table.__tablename__
                for table in (models.Trace, models.Score)
                if connection.execute(
                    select(table.id).where(table.experiment_id == experiment_id)
                ).first()
                is not None
            ]
    finally:
        engine.dispose()
    return tuple(job), rows


def test_stopping_a_busy_server_is_prompt_and_requeues_its_job(tmp_path, one_cohort, fake):
    """In process, on SQLite: the app's shutdown stops the worker mid-generation."""
    from .conftest import start_server, stop_server

    db = f"sqlite:///{tmp_path / 'stop.sqlite'}"
    live = start_server("sqlite", db)
    try:
        key = live.key()
        ragmetrics.login(key, base_url=live.base_url)
        experiment = _stuck_experiment(one_cohort, fake)
        _wait_running(live.base_url, key, experiment.id)
    finally:
        asked = time.monotonic()
        stop_server(live)
        took = time.monotonic() - asked
    assert took < 8.0, f"the server took {took:.1f} s to stop"
    assert live._thread is not None and not live._thread.is_alive()
    job, rows = _job_and_rows(db, experiment.id)
    assert job == ("queued", None) and rows == []  # handed back; no half-made row


def test_sigterm_stops_a_busy_assay_serve_promptly_and_requeues_its_job(
    tmp_path, one_cohort, fake, request
):
    """`assay serve` on PostgreSQL, as CI saw it: SIGTERM must not wait for the stuck chunk
    (it waited for the worker's 30 s join before)."""
    from assay.platform.server.auth.admin import create_key

    db = _fresh_database(request)
    key = create_key(db, project="stop")
    env = {**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache")}
    server, base = start(db, env)
    try:
        ragmetrics.login(key, base_url=base)
        experiment = _stuck_experiment(one_cohort, fake)
        _wait_running(base, key, experiment.id)
        asked = time.monotonic()
        server.send_signal(signal.SIGTERM)
        code = server.wait(20)
        took = time.monotonic() - asked
        assert took < 8.0, f"assay serve took {took:.1f} s to stop after SIGTERM"
        assert code in (0, -signal.SIGTERM), server.stderr.read().decode()[-2000:]
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(10)
    job, rows = _job_and_rows(db, experiment.id)
    assert job == ("queued", None) and rows == []  # the next worker resumes it at once


@dataclass
class Held(Behaviour):
    """Answers as `then` does, but only once the test sets `released` (or after two minutes): an
    experiment that waits on it is still running whatever the machine's load, so a cancel never
    meets one that already finished (it did with 2 s answers on a loaded machine)."""

    released: threading.Event
    then: Behaviour

    def respond(self, request: RecordedRequest) -> Reply:
        self.released.wait(120)
        return self.then.respond(request)


def _wait_status(api: httpx.Client, experiment_id: int, wanted: set[str]) -> None:
    deadline = time.monotonic() + 60
    while (status := api.get(f"/experiments/{experiment_id}").json()["status"]) not in wanted:
        assert time.monotonic() < deadline, f"experiment {experiment_id} stayed {status}"
        time.sleep(0.05)


def test_the_experiment_page_cancels_and_resumes(live, fake, one_cohort, monkeypatch):
    from tests.platform.ui.conftest import csrf_in, make_user, sign_in

    worker = live.app.state.worker
    told: list[int] = []  # the page's cancel stops this server's worker at once, as the API's
    tell = worker.cancelled
    monkeypatch.setattr(worker, "cancelled", lambda ident: (told.append(ident), tell(ident)))
    user = make_user(live)
    ragmetrics.login(user.key, base_url=live.base_url)
    released = threading.Event()
    fake.default = Held(released, behaviour())
    try:
        experiment = one_cohort("from the page")
        experiment.run_async().result(timeout=30)
        browser = sign_in(user)
        page_url = f"{user.base}/experiments/{experiment.id}"
        page = browser.get(page_url)
        assert page.status_code == 200 and 'id="cancel"' in page.text
        assert 'id="resume"' not in page.text
        refused = browser.post(f"{page_url}/cancel", data={"csrf_token": "wrong"})
        assert refused.status_code == 403
        assert user.api().get(f"/experiments/{experiment.id}").json()["status"] != "cancelled"
        done = browser.post(f"{page_url}/cancel", data={"csrf_token": csrf_in(page.text)})
        assert done.status_code == 303 and done.headers["location"] == page_url
        assert told == [experiment.id]
        page = browser.get(page_url)
        assert 'data-status="cancelled"' in page.text and 'id="resume"' in page.text
        assert 'id="cancel"' not in page.text
        again = browser.post(f"{page_url}/cancel", data={"csrf_token": csrf_in(page.text)})
        assert again.status_code == 409 and "already cancelled" in again.text
        resumed = browser.post(f"{page_url}/resume", data={"csrf_token": csrf_in(page.text)})
        assert resumed.status_code == 303
        api = user.api()
        assert api.get(f"/experiments/{experiment.id}").json()["status"] in ("queued", "running")

        # the answers come: the resumed experiment completes; a cancel from a page that still
        # showed it running (the click came just after it finished) is a 409 naming why, with
        # the way back to the experiment, and the page says completed
        released.set()
        _wait_status(api, experiment.id, {"completed"})
        late = browser.post(f"{page_url}/cancel", data={"csrf_token": csrf_in(page.text)})
        assert late.status_code == 409, late.text
        assert f"experiment {experiment.id} is already completed" in late.text
        assert f'href="{page_url}"' in late.text
        page = browser.get(page_url)
        assert 'data-status="completed"' in page.text
        assert 'id="cancel"' not in page.text and 'id="resume"' not in page.text
    finally:
        released.set()  # the fake's held answers end while it is up
