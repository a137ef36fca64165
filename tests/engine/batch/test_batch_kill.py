"""kill -9 while a batch is in flight, then the same command again: it polls the batch it had
submitted (found in the run directory's batches.jsonl) and submits nothing twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine.batch import scenario
from tests.engine.batch.fake_batches import FakeBatches, serve


@pytest.fixture
def server() -> Iterator[FakeBatches]:
    yield from serve()


@pytest.mark.slow
def test_kill_9_during_a_batch_then_resume_submits_no_second_batch(server, tmp_path: Path):
    server.answer = scenario.judge()
    server.delay = 120.0  # wave 1 stays in flight until the test says otherwise
    data, output, run_dir = tmp_path / "data.jsonl", tmp_path / "out.jsonl", tmp_path / "run"
    data.write_text("".join(json.dumps(row) + "\n" for row in scenario.rows()))
    command = [
        sys.executable,
        "-m",
        "assay",
        "evaluate",
        str(data),
        "-m",
        "faithfulness(statements=claims,statements_per_call=None)",
        "--llm",
        "openai/gpt-4o-mini",
        "--base-url",
        server.url,
        "--no-cache",
        "--no-progress",
        "--batch",
        "--run-dir",
        str(run_dir),
        "--output",
        str(output),
    ]
    env = {**os.environ, "ASSAY_BATCH_POLL_SECONDS": "0.05", "OPENAI_API_KEY": "test-key"}
    journal = run_dir / "batches.jsonl"

    first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not (journal.exists() and '"submitted"' in journal.read_text()):
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the first run never recorded its batch"
        time.sleep(0.05)
    while not any(batch.polls for batch in server.created()):  # it is polling the batch
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    assert len(server.created()) == 1 and not output.exists()

    server.delay = 0.0
    second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)

    assert second.returncode == 0, second.stderr
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    values = [row["metrics"]["faithfulness"]["value"] for row in rows]
    assert values == pytest.approx(scenario.EXPECTED)
    made = server.created()
    assert len(made) == 2  # the claim splits' batch (polled again) and the verdicts' batch
    sent = server.sent_custom_ids()
    assert len(sent) == len(set(sent)) == 2 * scenario.N_ROWS  # no request paid for twice
    assert made[0].polls > 1  # the resumed run polled the batch the killed one submitted
