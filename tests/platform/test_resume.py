"""`kill -9` of the server mid-experiment, then a restart: the experiment resumes, nothing is
generated or judged twice (stored rows are skipped, the response cache answers the rest), and the
results equal an uninterrupted run's."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

import assay.platform as ragmetrics
from assay.platform import Experiment
from tests.platform.test_experiments import behaviour

from .conftest import free_port

LATENCY = 0.1


def start(db: str, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "serve", "--port", str(port), "--db", db],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{base}/api/v1/health", timeout=2).status_code == 200:
                return process, base
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(
                f"assay serve did not start: {process.stderr.read().decode()[-2000:]}"
            )
        time.sleep(0.1)


def comparable(results: dict) -> dict:
    return {
        "status": results["status"],
        "summary": results["summary"],
        "rows": [
            {
                k: row[k]
                for k in ("cohort", "question", "answer", "contexts", "generation_error", "scores")
            }
            for row in results["rows"]
        ],
    }


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_kill_9_mid_experiment_then_restart_resumes_exactly(
    backend, tmp_path, fake, many_capitals, request
):
    from assay.platform.server.auth.admin import create_key

    db = (
        f"sqlite:///{tmp_path / 'resume.sqlite'}"
        if backend == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    env = {
        **os.environ,
        "ASSAY_WORKER_HEARTBEAT": "0.2",
        "ASSAY_WORKER_STALE_AFTER": "1.5",
        "ASSAY_CACHE_DIR": str(tmp_path / "cache"),
    }
    key = create_key(db, project=f"resume-{tmp_path.name}")
    fake.default = behaviour(latency=LATENCY)
    server, base = start(db, env)
    try:
        ragmetrics.login(key, base_url=base)
        spec = many_capitals()
        experiment = Experiment(name="resumed", **spec)
        experiment.run_async().result(timeout=30)
        client = httpx.Client(base_url=f"{base}/api/v1", headers={"Authorization": f"Bearer {key}"})
        deadline = time.monotonic() + 60
        while True:
            progress = client.get(f"/experiments/{experiment.id}/progress").json()
            done = progress["completed"] + progress["failed"]
            if 0 < done < progress["total"] * 0.6:
                break
            assert done < progress["total"] and time.monotonic() < deadline, progress
            time.sleep(0.02)
        server.send_signal(signal.SIGKILL)
        server.wait(10)
        killed_at = time.monotonic()
        assert done < progress["total"]
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(10)
    before = len(fake.chat_requests)
    server, base = start(db, env)
    try:
        ragmetrics.login(key, base_url=base)
        resumed = experiment.results(wait=True, poll_interval=0.1)
        assert resumed["status"] == "completed", resumed["error"]
        assert len(fake.chat_requests) > before  # the restarted worker did the rest
        # nothing twice: a repeated request is one that was in flight, unanswered, at the kill
        # (a request whose body the kill cut off mid-send never reached the model: it is left out)
        requests = [r for r in fake.chat_requests if "model" in r.body]
        seen = collections.Counter()
        for record in requests:
            seen[(record.body["model"], json.dumps(record.messages, sort_keys=True))] += 1
        in_flight = {
            (r.body["model"], json.dumps(r.messages, sort_keys=True))
            for r in requests
            if killed_at - LATENCY - 2.0 <= r.time <= killed_at
        }
        repeated = {k for k, count in seen.items() if count > 1}
        assert repeated <= in_flight, repeated - in_flight
        generations = [r for r in requests if r.body["model"].startswith("gen")]
        assert len({json.dumps(r.messages) for r in generations}) == 40
        # and the same results as an uninterrupted run of the same experiment
        again = Experiment(name="uninterrupted", **spec).run(poll_interval=0.1)
        assert comparable(again) == comparable(resumed)
        assert len(resumed["rows"]) == 40 and resumed["progress"]["total"] == 120
        json.dumps(resumed, allow_nan=False)
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:  # a slow graceful stop is not what this test checks
            server.kill()
            server.wait(10)
