"""A job's models that do not answer: the worker is not held, the cells are left for a resume,
and a cancel stops the calls in flight within about a second.

Against the live server (SQLite and PostgreSQL) and loopback fakes: one answers, one answers
503 (down) or holds its answers (hanging). The worker's call policy is set short for these
tests (`Worker.call_policy`, what `ASSAY_JOB_RETRY_*` set in production).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select

from assay.errors import ModelConnectionError, ProviderError, RateLimited
from assay.platform import Cohort, Experiment
from assay.platform.server.jobs.calls import CallPolicy, EndpointDown, Gate
from assay.platform.server.jobs.run import chunks
from tests.models.fake_openai import FakeOpenAI, hang, server_error
from tests.platform.test_experiments import behaviour, seed_objects

SHORT = CallPolicy(attempts=2, initial_wait=0.05, max_wait=0.1, timeout=0.5)


@pytest.fixture
def short_calls(live: Any) -> Iterator[None]:
    worker = live.app.state.worker
    saved = worker.call_policy
    worker.call_policy = SHORT
    try:
        yield
    finally:
        worker.call_policy = saved


@pytest.fixture
def other() -> Iterator[FakeOpenAI]:
    """A second fake model server: the one that goes down."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


def _wait(experiment: Experiment, statuses: tuple[str, ...], seconds: float) -> dict[str, Any]:
    """The experiment's results once its status is one of `statuses` (its progress is polled)."""
    from assay.platform.sdk.client import current

    deadline = time.monotonic() + seconds
    while True:
        progress = current().request("GET", f"/experiments/{experiment.id}/progress")
        if progress["status"] in statuses:
            return experiment.results()
        assert time.monotonic() < deadline, progress
        time.sleep(0.05)


@pytest.mark.slow  # about 5 s a backend
def test_a_generator_that_is_down_does_not_hold_the_worker(sdk, fake, other, short_calls):
    fake.default = behaviour()
    other.default = server_error(503)
    tag = uuid.uuid4().hex[:8]
    dataset, task, criteria = seed_objects(fake, f"-{tag}")
    stuck = Experiment(
        name=f"down-{tag}",
        dataset=dataset,
        task=task,
        cohorts=[
            Cohort(name="Down", generator_model=other.model_string(f"gen-{tag}-down")),
            Cohort(name="Up", generator_model=fake.model_string(f"gen-{tag}-up")),
        ],
        criteria=criteria,
        judge_model=fake.model_string(f"judge-{tag}"),
    )
    behind = Experiment(
        name=f"behind-{tag}",
        dataset=dataset,
        task=task,
        cohorts=[Cohort(name="c", generator_model=fake.model_string(f"gen-{tag}-behind"))],
        criteria=criteria[2:],
        judge_model="",
    )
    started = time.monotonic()
    stuck.run_async().result(timeout=30)
    behind.run_async().result(timeout=30)
    failed = _wait(stuck, ("failed",), 30)
    assert _wait(behind, ("completed",), 30)["progress"]["pending"] == 0
    assert time.monotonic() - started < 20
    # one line naming the model and what to do; the Up cohort is done, the Down one left undone
    assert "did not answer" in failed["error"] and f"gen-{tag}-down" in failed["error"]
    assert "resume" in failed["error"] and "ProviderError" in failed["error"]
    rows = failed["rows"]
    assert {r["cohort"] for r in rows} == {"Up"} and len(rows) == 4
    assert failed["progress"] == {**failed["progress"], "completed": 12, "pending": 12}

    # the model is back: resume does what was left, asking nothing twice
    other.default = behaviour()
    up_calls = len([r for r in fake.chat_requests if r.body.get("model") == f"gen-{tag}-up"])
    stuck.resume()
    done = stuck.run(poll_interval=0.05)
    assert done["status"] == "completed" and done["progress"]["pending"] == 0
    assert len(done["rows"]) == 8
    assert len([r for r in fake.chat_requests if r.body.get("model") == f"gen-{tag}-up"]) == (
        up_calls
    )


def test_a_hanging_judge_ends_the_job_and_leaves_its_cells_for_a_resume(
    sdk, fake, other, short_calls, caplog
):
    fake.default = behaviour()
    other.default = hang(5.0)  # longer than the policy's 0.5 s attempt timeout
    tag = uuid.uuid4().hex[:8]
    dataset, task, criteria = seed_objects(fake, f"-{tag}")
    experiment = Experiment(
        name=f"hanging-judge-{tag}",
        dataset=dataset,
        task=task,
        cohorts=[Cohort(name="c", generator_model=fake.model_string(f"gen-{tag}"))],
        criteria=criteria,
        judge_model=other.model_string(f"judge-{tag}"),
    )
    started = time.monotonic()
    experiment.run_async().result(timeout=30)
    failed = _wait(experiment, ("failed",), 30)
    assert time.monotonic() - started < 15
    assert f"judge-{tag}" in failed["error"] and "ModelTimeout" in failed["error"]
    # the answers and the function criterion are stored; no judged cell holds a timeout
    assert len(failed["rows"]) == 4
    for row in failed["rows"]:
        assert row["answer"] and set(row["scores"]) == {"Names a capital"}
    assert failed["progress"]["completed"] == 4 and failed["progress"]["pending"] == 8
    # the calls cut off left no HTTP session open (aiohttp would log "Unclosed client session")
    import gc

    gc.collect()
    unclosed = [r for r in caplog.records if "Unclosed" in r.getMessage()]
    assert unclosed == []


def test_a_pipeline_that_does_not_answer_is_down_for_the_run(sdk, fake, short_calls):
    """A registered RAG pipeline on a closed port: no cell of its cohort is stored as an error
    (each is left for a resume), the model cohort is done, and the job fails naming it."""
    from assay.platform import RagPipeline

    from .conftest import free_port

    fake.default = behaviour()
    tag = uuid.uuid4().hex[:8]
    RagPipeline(name=f"gone-{tag}", url=f"http://127.0.0.1:{free_port()}/rag", timeout_s=2).save()
    dataset, task, criteria = seed_objects(fake, f"-{tag}")
    experiment = Experiment(
        name=f"pipeline-down-{tag}",
        dataset=dataset,
        task=task,
        cohorts=[
            Cohort(name="Pipeline", rag_pipeline=f"gone-{tag}"),
            Cohort(name="Model", generator_model=fake.model_string(f"gen-{tag}")),
        ],
        criteria=criteria[2:],
        judge_model="",
    )
    experiment.run_async().result(timeout=30)
    failed = _wait(experiment, ("failed",), 30)
    assert f"'pipeline:gone-{tag}'" in failed["error"] and "could not reach" in failed["error"]
    assert {r["cohort"] for r in failed["rows"]} == {"Model"}
    assert failed["progress"]["completed"] == 4 and failed["progress"]["pending"] == 4


@pytest.mark.slow  # its own server: 3 s
@pytest.mark.parametrize("live", ["sqlite"], indirect=True)
def test_a_cancel_made_elsewhere_stops_the_calls_in_flight_within_seconds(live, fake, tmp_path):
    """The web UI's cancel (and another server's) only writes the database: the worker sees it
    between heartbeats (its own heartbeat here is 30 s) and drops its calls in flight."""
    import assay.platform as ragmetrics
    from assay.platform.server.jobs.worker import Worker
    from assay.platform.server.storage import models
    from assay.platform.server.storage.experiments import ExperimentRepo

    from .conftest import start_server, stop_server

    server = start_server("sqlite", f"sqlite:///{tmp_path / 'cancel.sqlite'}")
    server.app.state.worker.stop()  # this test's worker instead, with a slow heartbeat
    worker = Worker(
        server.app.state.assay,
        poll_interval=0.05,
        heartbeat_interval=30.0,
        call_policy=CallPolicy(attempts=8, timeout=60.0),
    ).start()
    try:
        key = server.key()
        assert ragmetrics.login(key, base_url=server.base_url)
        fake.default = hang(8.0)
        tag = uuid.uuid4().hex[:8]
        dataset, task, criteria = seed_objects(fake, f"-{tag}")
        experiment = Experiment(
            name=f"cancelled-{tag}",
            dataset=dataset,
            task=task,
            cohorts=[Cohort(name="c", generator_model=fake.model_string(f"gen-{tag}"))],
            criteria=criteria[2:],
            judge_model="",
        )
        experiment.run_async().result(timeout=30)
        deadline = time.monotonic() + 20
        while len(fake.chat_requests) < 4:  # the chunk's four calls are in flight
            assert time.monotonic() < deadline
            time.sleep(0.02)
        state = server.app.state.assay
        with state.transaction() as session:
            project = session.scalar(select(models.Experiment.project_id))
            ExperimentRepo(session, project).cancel(experiment.id)
        cancelled = time.monotonic()
        while worker._claim is not None:
            assert time.monotonic() - cancelled < 3, "the worker still runs the cancelled job"
            time.sleep(0.02)
        asked = len(fake.chat_requests)
        time.sleep(0.5)
        assert len(fake.chat_requests) == asked == 4  # nothing retried, nothing new
        with state.transaction() as session:
            job = session.scalar(
                select(models.Job).where(models.Job.experiment_id == experiment.id)
            )
            assert job.status == "cancelled"
            stored = session.scalar(
                select(models.Trace.id).where(models.Trace.experiment_id == experiment.id)
            )
            assert stored is None
    finally:
        worker.stop()
        stop_server(server)


# -- the gate and the chunks, without a server -------------------------------------------------
def test_the_gate_trips_after_failures_in_a_row_and_cuts_off_what_is_in_flight():
    async def scenario() -> None:
        gate = Gate(CallPolicy(attempts=3, timeout=5.0))

        async def refused() -> None:
            raise ModelConnectionError("refused")

        async def slow() -> str:
            await asyncio.sleep(5)
            return "late"

        async def answer() -> str:
            return "ok"

        in_flight = asyncio.ensure_future(gate.attempt("m", slow, None))
        for _ in range(2):
            with pytest.raises(ModelConnectionError):
                await gate.attempt("m", refused, None)
        assert await gate.attempt("m", answer, None) == "ok"  # a success resets the count
        assert not gate.is_down("m")
        with pytest.raises(ProviderError):  # not transient: does not count
            await gate.attempt("m", _raises(ProviderError("bad request", status=400)), None)
        for busy in (
            RateLimited("slow down", retry_after=1.0),
            ProviderError("overloaded", status=503, retry_after=2.0),
        ):
            for _ in range(5):  # a busy server is alive: never down, however many
                with pytest.raises(ProviderError):
                    await gate.attempt("m", _raises(busy), None)
        assert not gate.is_down("m")
        for _ in range(3):
            with pytest.raises(ModelConnectionError):
                await gate.attempt("m", refused, None)
        assert gate.is_down("m") and not gate.is_down("other")
        began = time.monotonic()
        with pytest.raises(EndpointDown, match="'m' does not answer: ModelConnectionError"):
            await in_flight  # ended at once when the model went down
        assert time.monotonic() - began < 0.5
        with pytest.raises(EndpointDown):
            await gate.attempt("m", answer, None)  # later calls are not sent
        assert await gate.attempt("other", answer, None) == "ok"
        assert "'m' (ModelConnectionError: refused)" in gate.summary()

    asyncio.run(scenario())


def _raises(exc: Exception) -> Any:
    async def call() -> None:
        raise exc

    return call


def test_chunks_keep_every_cohort_of_an_example_together():
    cohorts, examples = ["a", "b", "c"], list(range(11))
    parts = chunks(cohorts, examples)  # type: ignore[arg-type]  # plain values stand in
    assert [u.example for part in parts for u in part][:6] == [0, 0, 0, 1, 1, 1]
    for part in parts:
        assert len(part) <= 16 and len(part) % 3 == 0
        for example in {u.example for u in part}:
            assert [u.cohort for u in part if u.example == example] == cohorts
    assert sorted((u.cohort, u.example) for p in parts for u in p) == sorted(
        (c, e) for c in cohorts for e in examples
    )


def test_the_policy_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("ASSAY_JOB_RETRY_ATTEMPTS", "3")
    monkeypatch.setenv("ASSAY_JOB_CALL_TIMEOUT", "7.5")
    policy = CallPolicy.from_env()
    assert (policy.attempts, policy.timeout, policy.max_wait) == (3, 7.5, 15.0)
    assert policy.retry().max_attempts == 3
    monkeypatch.setenv("ASSAY_JOB_RETRY_ATTEMPTS", "many")
    with pytest.raises(ValueError, match="ASSAY_JOB_RETRY_ATTEMPTS must be a number, got 'many'"):
        CallPolicy.from_env()


def test_every_job_model_gets_the_bounded_retries(monkeypatch):
    """Review queues' judge and online evaluators build their judge with `build_llm` too."""
    from assay.platform.server.jobs.calls import Gate, build_llm, guard

    monkeypatch.setenv("ASSAY_JOB_RETRY_ATTEMPTS", "2")
    monkeypatch.setenv("ASSAY_JOB_CALL_TIMEOUT", "3")
    llm = build_llm("vllm/judge@http://127.0.0.1:9/v1")
    assert (llm.retry.max_attempts, llm.attempt_timeout) == (2, 3.0)
    guarded = guard(llm, Gate(SHORT), "judge")  # an experiment's run: its gate's policy
    assert llm.retry.max_attempts == 2 and llm.attempt_timeout is None
    assert guarded.provider._timeout == 0.5 and guarded.provider.model == "judge"
