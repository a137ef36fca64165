"""Ctrl-C in `Experiment.run()` cancels the experiment on the server: `run()` in a real Python
process against the live server (SQLite), SIGINT while it waits; the server shows the experiment
and its job cancelled, the process says so and dies of the KeyboardInterrupt (-SIGINT). When the
server cannot be reached, the interrupt still ends promptly and says the experiment may run on."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest
from sqlalchemy import select

from assay.platform import Cohort, Experiment
from assay.platform.sdk import experiment as experiment_module
from assay.platform.sdk.client import Client
from tests.models.fake_openai import hang
from tests.platform.test_experiments import seed_objects

from .conftest import free_port

SCRIPT = textwrap.dedent(
    """
    import json, os
    import assay.platform as ragmetrics
    from assay.platform import Experiment

    spec = json.loads(os.environ["SPEC"])
    ragmetrics.login()
    Experiment(judge_model="", **spec).run(poll_interval=0.1)
    print("run() returned")
    """
)


def _key_of(sdk) -> str:
    return sdk.login.__globals__["_client"].key


def _stuck_spec(fake, name: str) -> dict:
    """Objects in the logged-in project for an experiment that stays running: its generator holds
    its answers for two minutes (a refused connection would end the job at once: jobs/calls.py)."""
    dataset, task, criteria = seed_objects(fake, f"-{uuid.uuid4().hex[:8]}")
    fake.default = hang(120.0)
    down = fake.model_string(f"gen-stuck-{uuid.uuid4().hex[:8]}")
    return {
        "name": name,
        "dataset": dataset.id,
        "task": task.id,
        "cohorts": [Cohort(name="c", generator_model=down).to_dict()],
        "criteria": [c.id for c in criteria[2:]],  # the function criterion: no judge needed
    }


@pytest.mark.parametrize("live", ["sqlite"], indirect=True)
def test_ctrl_c_in_run_cancels_the_experiment_on_the_server(sdk, live, fake):
    from assay.platform.server.storage import models

    name = f"interrupted-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "SPEC": json.dumps(_stuck_spec(fake, name)),
        "ASSAY_API_KEY": _key_of(sdk),
        "ASSAY_BASE_URL": live.base_url,
    }
    process = subprocess.Popen(
        [sys.executable, "-c", SCRIPT],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with live.client(_key_of(sdk)) as api:
            deadline = time.monotonic() + 60
            while True:
                found = api.get("/experiments", params={"name": name}).json()["items"]
                if found and found[0]["status"] == "running":
                    break
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, f"the experiment never ran: {found}"
                time.sleep(0.05)
            ident = found[0]["id"]
            time.sleep(0.5)  # run() is in its polling loop now
            interrupted = time.monotonic()
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=20)
            took = time.monotonic() - interrupted
            shown = api.get(f"/experiments/{ident}").json()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    assert process.returncode == -signal.SIGINT, (process.returncode, err[-2000:])
    assert "KeyboardInterrupt" in err and "run() returned" not in out
    assert f"cancelled experiment '{name}' (id {ident}) on the server" in err, err[-2000:]
    assert took < 10, f"the interrupted run took {took:.1f} s to end"
    assert shown["status"] == "cancelled"
    with live.app.state.assay.transaction() as session:
        job = session.scalar(select(models.Job).where(models.Job.experiment_id == ident))
        assert job.status == "cancelled"


@pytest.mark.parametrize("live", ["sqlite"], indirect=True)
def test_when_the_cancel_cannot_reach_the_server_the_interrupt_says_so(sdk, monkeypatch, capsys):
    cohort = Cohort(name="c", generator_model="openai/gpt-4o-mini")
    experiment = Experiment("unreachable", 1, 1, [cohort], [1], judge_model="")
    nobody = Client(_key_of(sdk), f"http://127.0.0.1:{free_port()}")
    monkeypatch.setattr(experiment_module, "current", lambda: nobody)
    asked = time.monotonic()
    experiment._cancel_after_interrupt(4242)
    took = time.monotonic() - asked
    said = capsys.readouterr().err
    assert "could not cancel experiment 'unreachable' (id 4242) on the server" in said, said
    assert "may still be running" in said and "ServerUnavailable" in said
    assert took < experiment_module.INTERRUPT_CANCEL_TIMEOUT + 2


def test_ctrl_c_while_watching_is_taken_at_a_safe_point():
    """A first Ctrl-C while `run()` watches sets a flag (raised by `run()` itself once out of the
    progress bar, whose locks a KeyboardInterrupt could leave taken); a second raises at once;
    the previous handler comes back afterwards."""
    from assay.platform.sdk.experiment import _ctrl_c_deferred

    before = signal.getsignal(signal.SIGINT)
    with _ctrl_c_deferred() as interrupted:
        os.kill(os.getpid(), signal.SIGINT)
        assert interrupted.wait(5)  # not raised inside the block
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
    assert signal.getsignal(signal.SIGINT) is before
