"""The server's job workers as a pool (jobs/workers.py), against the real server on SQLite and
PostgreSQL with the loopback fake OpenAI server: an online evaluator scores a trace while an
experiment holds its worker (the experiment still `running` when the score appears); with
`experiment_workers=2` two experiments run at the same moment, and a cancel from the API and one
from the web UI each reach the worker running that experiment (with heartbeats and cancel checks
30 s apart, only the cancel itself frees the worker in time for the next queued experiment); on
SQLite, a write that finds the database locked hands the job back to be resumed, not failed.

The experiments' generator answers are held until the test lets them go, so an experiment is
running for as long as the test needs, however loaded the machine."""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

import assay.platform as ragmetrics
from assay.errors import UsageError
from assay.platform import Cohort, Experiment
from assay.platform.server.jobs.workers import Workers, experiment_workers, parse_kinds
from tests.models.fake_openai import RecordedRequest, dynamic, ok
from tests.platform.test_experiments import seed_objects
from tests.platform.test_online_evaluators import CORRECT, evaluator, stored_scores, trace


def held_generation(released: threading.Event) -> Any:
    """Generator calls (`gen…` models) answer once `released` is set (at most after 60 s);
    judge calls at once: yes when the judged response names Paris."""

    def choose(request: RecordedRequest) -> Any:
        if (request.body.get("model") or "").startswith("gen"):
            released.wait(60)
            return ok("The capital is Paris.")
        judged = re.search(r"<response>(.*?)</response>", request.last_user_text, re.S)
        return ok("yes" if judged and "Paris" in judged.group(1) else "no")

    return dynamic(choose)


@pytest.fixture
def released(fake: Any) -> Iterator[threading.Event]:
    """The event that lets the held generations answer; set at the end, while the fake is up."""
    event = threading.Event()
    fake.default = held_generation(event)
    try:
        yield event
    finally:
        event.set()


def submit(fake: Any, name: str, objects: list[Any]) -> Experiment:
    """An experiment over the 4 seed examples (made at the first call, in the logged-in project),
    judged by the function criterion only, with a generator model of its own; submitted."""
    if not objects:
        objects.extend(seed_objects(fake, f"-{uuid.uuid4().hex[:8]}"))
    dataset, task, criteria = objects
    experiment = Experiment(
        name=name,
        dataset=dataset,
        task=task,
        cohorts=[Cohort(name="c", generator_model=fake.model_string(f"gen-{uuid.uuid4().hex}"))],
        criteria=criteria[2:],
        judge_model="",
    )
    experiment.run_async().result(timeout=30)
    return experiment


def statuses(api: httpx.Client, *experiments: Experiment) -> list[str]:
    return [api.get(f"/experiments/{e.id}").json()["status"] for e in experiments]


def wait_until(what: str, check: Any, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_an_online_evaluator_scores_traces_while_an_experiment_runs(live, fake, released):
    key = live.key()
    assert ragmetrics.login(key, base_url=live.base_url)
    with live.client(key) as api:
        experiment = submit(fake, "long", [])
        wait_until("the experiment never ran", lambda: statuses(api, experiment) == ["running"])
        assert api.post("/criteria", json=CORRECT).status_code == 201
        assert api.post("/evaluators", json=evaluator(fake)).status_code == 201
        arrived = trace("Paris.")
        assert api.post("/traces", json={"traces": [arrived]}).status_code == 202
        wait_until("the trace was never scored", lambda: stored_scores(live, [arrived["id"]]))
        # scored while the experiment holds its worker, not after it
        assert statuses(api, experiment) == ["running"]
        (score,) = stored_scores(live, [arrived["id"]])
        assert score.source == "evaluator:Prod@v1"
        released.set()
        wait_until("the experiment never ended", lambda: statuses(api, experiment) != ["running"])
        assert statuses(api, experiment) == ["completed"]


# a server of its own costs ~2 s: SQLite in the default run, PostgreSQL with the slow tests
@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def two_workers(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Any]:
    """A server of its own (its own database) with two experiment workers whose heartbeats and
    cancel checks are 30 s apart: within the test, only a cancel told to the pool stops a run."""
    from tests.platform.conftest import start_server, stop_server
    from tests.platform.test_experiment_cancel import _fresh_database

    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'workers.sqlite'}"
    else:
        url = _fresh_database(request)
    server = start_server(
        request.param,
        url,
        experiment_workers=2,
        worker_options={
            "poll_interval": 0.05,
            "heartbeat_interval": 30.0,
            "cancel_check_interval": 30.0,
            "stale_after": 120.0,
        },
    )
    try:
        yield server
    finally:
        stop_server(server)


def test_two_experiment_workers_run_two_at_once_and_a_cancel_reaches_either(
    two_workers, fake, released
):
    from tests.platform.ui.conftest import csrf_in, make_user, sign_in

    pool = two_workers.app.state.worker
    assert [w.kinds for w in pool.workers] == [
        ("experiment",),
        ("experiment",),
        ("review_judge", "online_eval"),
    ]
    user = make_user(two_workers)
    assert ragmetrics.login(user.key, base_url=two_workers.base_url)
    objects: list[Any] = []
    first, second, third, fourth = (submit(fake, name, objects) for name in "ABCD")
    with user.api() as api:
        wait_until(
            "two experiments never ran at once",
            lambda: statuses(api, first, second) == ["running", "running"],
        )
        assert statuses(api, first, second, third, fourth) == [
            "running",
            "running",
            "queued",
            "queued",
        ]
        # the API's cancel stops the worker running `first` at once: it takes `third`
        assert api.post(f"/experiments/{first.id}/cancel").json()["status"] == "cancelled"
        wait_until(
            "the cancelled experiment's worker never took the next one",
            lambda: statuses(api, third) == ["running"],
            seconds=10,
        )
        assert statuses(api, second, fourth) == ["running", "queued"]
        # the web UI's Cancel button reaches the other worker, running `second`
        browser = sign_in(user)
        page_url = f"{user.base}/experiments/{second.id}"
        page = browser.get(page_url)
        done = browser.post(f"{page_url}/cancel", data={"csrf_token": csrf_in(page.text)})
        assert done.status_code == 303, done.text
        wait_until(
            "the page's cancel never freed its worker",
            lambda: statuses(api, fourth) == ["running"],
            seconds=10,
        )
        released.set()
        wait_until(
            "the last two never completed",
            lambda: statuses(api, third, fourth) == ["completed", "completed"],
        )
        assert statuses(api, first, second) == ["cancelled", "cancelled"]


def test_the_settings_name_what_is_wrong(monkeypatch):
    monkeypatch.delenv("ASSAY_EXPERIMENT_WORKERS", raising=False)
    assert experiment_workers(None) == 1 and experiment_workers(3) == 3
    monkeypatch.setenv("ASSAY_EXPERIMENT_WORKERS", "4")
    assert experiment_workers(None) == 4 and experiment_workers(2) == 2
    monkeypatch.setenv("ASSAY_EXPERIMENT_WORKERS", "many")
    with pytest.raises(UsageError, match="ASSAY_EXPERIMENT_WORKERS must be a whole number"):
        experiment_workers(None)
    with pytest.raises(UsageError, match=r"--experiment-workers must be from 1 to 32.*0"):
        experiment_workers(0)
    assert parse_kinds("scoring") == ("review_judge", "online_eval")
    assert parse_kinds("experiments, online_eval") == ("experiment", "online_eval")
    assert parse_kinds("all,experiment") == ("experiment", "review_judge", "online_eval")
    with pytest.raises(UsageError, match=r"unknown job kind 'judging'.*known: all, experiments"):
        parse_kinds("judging")
    pool = Workers(None, experiment_workers=2, kinds=("experiment",), name="w")
    assert [name for name, _ in pool._plan()] == ["w-experiments-1", "w-experiments-2"]
    assert pool.describe() == "workers: 2 for experiments"
    only_scoring = Workers(None, kinds=("online_eval",), name="s")
    assert only_scoring._plan() == [("s-scoring", ("online_eval",))]
    with pytest.raises(ValueError, match="kinds must be some of"):
        Workers(None, kinds=("experiments",))


@pytest.mark.slow  # a server of its own and a second of lock: ~3 s
def test_a_busy_database_hands_the_job_back_and_it_completes(tmp_path, fake, released, caplog):
    """SQLite, one writer at a time: another connection holds the write lock past the workers'
    lock wait (made 0.3 s here instead of 30 s) just as the experiment stores its answers. The job
    is handed back and resumed once the lock is gone, not failed."""
    import logging
    import sqlite3

    from sqlalchemy import event, select

    from assay.platform.server.storage import models
    from tests.platform.conftest import start_server, stop_server

    caplog.set_level(logging.WARNING, logger="assay.platform.worker")
    path = tmp_path / "busy.sqlite"
    server = start_server(
        "sqlite",
        f"sqlite:///{path}",
        worker_options={"poll_interval": 0.05, "heartbeat_interval": 0.2, "stale_after": 60.0},
    )
    engine = server.app.state.assay.engine

    @event.listens_for(engine, "connect")
    def _short_wait(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.execute("PRAGMA busy_timeout=300")

    engine.dispose()  # the connections opened so far waited 30 s
    try:
        key = server.key()
        assert ragmetrics.login(key, base_url=server.base_url)
        with server.client(key) as api:
            experiment = submit(fake, "busy", [])
            wait_until("the experiment never ran", lambda: statuses(api, experiment) == ["running"])
            lock = sqlite3.connect(path, isolation_level=None, timeout=30)
            lock.execute("BEGIN IMMEDIATE")
            try:
                released.set()  # the answers come; storing them finds the database locked
                wait_until(  # the run's write met the lock (and the job was ended: how?)
                    "the worker never met the lock",
                    lambda: any(r.getMessage().startswith("job ") for r in caplog.records),
                )
            finally:
                lock.execute("ROLLBACK")
                lock.close()
            wait_until(
                "the experiment never ended",
                lambda: statuses(api, experiment)[0] not in ("queued", "running"),
            )
            assert statuses(api, experiment) == ["completed"]
            assert len(experiment.results()["rows"]) == 4
        assert any("database was busy" in r.getMessage() for r in caplog.records)
        with server.app.state.assay.transaction() as session:
            job = session.execute(
                select(models.Job.status, models.Job.attempts, models.Job.error).where(
                    models.Job.experiment_id == experiment.id
                )
            ).one()
        assert (job.status, job.error) == ("done", None) and job.attempts >= 2
    finally:
        stop_server(server)


def test_only_a_busy_database_is_retried():
    """A lock wait that ran out is tried again; a statement that can never work fails the job."""
    import sqlite3

    from sqlalchemy.exc import OperationalError

    from assay.platform.server.errors import ApiError
    from assay.platform.server.jobs.worker import database_busy

    def wrapped(message: str) -> ApiError:
        try:  # as ServerState.transaction raises it
            try:
                raise OperationalError("UPDATE jobs", {}, sqlite3.OperationalError(message))
            except OperationalError:
                raise ApiError(503, "unavailable", "the database is busy") from None
        except ApiError as exc:
            return exc

    assert database_busy(wrapped("database is locked"))
    assert not database_busy(wrapped("no such table: jobs"))
    assert not database_busy(ApiError(503, "unavailable", "no database error behind it"))
    assert not database_busy(ValueError("a bug"))


def test_bad_worker_settings_are_one_line_before_any_work(tmp_path, monkeypatch, capfd):
    import sys

    from assay.cli.app import main

    db = f"sqlite:///{tmp_path / 'never.sqlite'}"
    for argv, said in [
        (["worker", "--kinds", "judging"], "error: --kinds: unknown job kind 'judging'"),
        (["worker", "--experiment-workers", "0"], "--experiment-workers"),
        (["serve", "--experiment-workers", "33"], "--experiment-workers"),
    ]:
        monkeypatch.setattr(sys, "argv", ["assay", *argv, "--db", db])
        with pytest.raises(SystemExit) as ended:
            main()
        assert ended.value.code == 2
        assert said in capfd.readouterr().err
    monkeypatch.setenv("ASSAY_EXPERIMENT_WORKERS", "many")
    monkeypatch.setattr(sys, "argv", ["assay", "worker", "--db", db])
    with pytest.raises(SystemExit) as ended:
        main()
    assert ended.value.code == 2
    err = capfd.readouterr().err.strip()
    assert err == "error: ASSAY_EXPERIMENT_WORKERS must be a whole number of workers, got 'many'"
    assert not (tmp_path / "never.sqlite").exists()  # refused before the database was made


@pytest.mark.slow  # a process of its own: its imports take seconds
def test_assay_worker_with_kinds_scoring_scores_traces_and_leaves_experiments(
    tmp_path, fake, released
):
    """`assay worker --kinds scoring` beside a server that runs no workers: it scores an online
    evaluator's trace, and an experiment submitted meanwhile stays queued for another worker."""
    import os
    import signal
    import subprocess
    import sys

    from tests.platform.conftest import start_server, stop_server

    url = f"sqlite:///{tmp_path / 'scoring.sqlite'}"
    server = start_server("sqlite", url, worker=False)
    env = {**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "assay", "worker", "--db", url, "--kinds", "scoring"]
    worker = subprocess.Popen(
        [*command, "--poll-interval", "0.1"], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        assert worker.stderr is not None
        banner = worker.stderr.readline()  # printed once its workers run
        assert "running (workers: 1 for review_judge and online_eval)" in banner, banner
        key = server.key()
        assert ragmetrics.login(key, base_url=server.base_url)
        with server.client(key) as api:
            experiment = submit(fake, "left for another worker", [])
            assert api.post("/criteria", json=CORRECT).status_code == 201
            assert api.post("/evaluators", json=evaluator(fake)).status_code == 201
            arrived = trace("Paris.")
            assert api.post("/traces", json={"traces": [arrived]}).status_code == 202
            wait_until("the trace was never scored", lambda: stored_scores(server, [arrived["id"]]))
            assert statuses(api, experiment) == ["queued"]
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(20) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(10)
        stop_server(server)
