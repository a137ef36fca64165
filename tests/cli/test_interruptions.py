"""`assay evaluate` ends soon after its work is over or abandoned (issue #45, items 5 and 7).

Ctrl-C at the default concurrency (a hundred or more calls in flight) threw the answers on their
way away, and the resumed run asked for them again; now they land and are saved first. A cell that
times out abandons its computation: the process must not then wait for it at exit.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_cli import assay
from tests.models.fake_openai import FakeOpenAI, ok, serve

ROWS = 317  # the run


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    yield from serve()


def _saved(run_dir: Path) -> int:
    cells = run_dir / "cells.jsonl"
    return len(cells.read_bytes().splitlines()) if cells.exists() else 0


def _start(server: FakeOpenAI, tmp_path: Path, rows: int) -> tuple[list[str], dict[str, str]]:
    data = tmp_path / "data.jsonl"
    data.write_text(
        "".join(
            json.dumps({"user_input": f"q{n}", "response": f"a{n}"}) + "\n" for n in range(rows)
        )
    )
    command = [sys.executable, "-m", "assay", "evaluate", str(data), "-m", "coherence"]
    command += ["--llm", server.model_string(), "--no-cache", "--no-progress"]
    command += ["--run-dir", str(tmp_path / "run")]
    return command, {**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache")}


def _interrupt_after(run: subprocess.Popen[str], run_dir: Path, cells: int) -> None:
    deadline = time.monotonic() + 90
    while _saved(run_dir) < cells:
        assert run.poll() is None, run.communicate()
        assert time.monotonic() < deadline, "no cells were saved"
        time.sleep(0.02)
    run.send_signal(signal.SIGINT)


@pytest.mark.slow  # two runs of 317 rows against a judge answering in a second: ~15 s
@pytest.mark.timeout(240)
def test_ctrl_c_saves_the_answers_in_flight_and_the_resume_repeats_almost_nothing(
    server, tmp_path: Path
):
    server.default = ok("no", latency=1.0)
    command, env = _start(server, tmp_path, ROWS)
    run_dir = tmp_path / "run"
    first = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        _interrupt_after(first, run_dir, 40)
        _, err = first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 130, err
    said = " ".join(err.split())
    assert "saving the answers of the cells in flight" in said
    assert f"finished cells are saved in {run_dir}: run the same command to resume" in said
    sent_first, saved_first = server.count, _saved(run_dir)
    assert saved_first < ROWS  # it was interrupted mid-run

    resumed = subprocess.run(command, capture_output=True, text=True, env=env, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{ROWS}/{ROWS}" in resumed.stdout
    repeated = server.count - ROWS
    # Before, every call in flight at Ctrl-C was lost and asked again: 51 of 317 on this test,
    # 77 to 154 in the runs. Now the answers on their way are saved, and calls that had
    # not been sent are not sent.
    assert repeated <= 5, (sent_first, saved_first, server.count)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_second_ctrl_c_stops_at_once(server, tmp_path: Path):
    server.default = ok("no", latency=30.0)  # nothing would land within the grace period
    command, env = _start(server, tmp_path, 40)
    run = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        deadline = time.monotonic() + 60
        while server.count < 10:  # the run is under way: calls are in flight
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.02)
        run.send_signal(signal.SIGINT)
        time.sleep(0.5)
        assert run.poll() is None  # the first Ctrl-C waits for the calls in flight
        began = time.monotonic()
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=30)
        stopped = time.monotonic() - began
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 130, err
    assert "Traceback" not in err
    assert stopped < 3, f"{stopped:.1f} s after the second Ctrl-C"


def _words(seed: int, characters: int) -> str:
    """About `characters` characters of words drawn from a few thousand (BLEU's n-gram counting
    on it takes tens of seconds)."""
    rng = random.Random(seed)
    vocabulary = [
        "".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 8))) for _ in range(5000)
    ]
    return " ".join(rng.choices(vocabulary, k=characters // 6))


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_timed_out_cell_on_a_5_mb_text_does_not_hold_the_process(tmp_path: Path):
    data = tmp_path / "big.jsonl"
    row = {"user_input": "q", "response": _words(1, 5_000_000), "reference": _words(2, 5_000_000)}
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    began = time.monotonic()
    done = assay("evaluate", str(data), "-m", "bleu_score", "--timeout", "1", "--no-progress")
    elapsed = time.monotonic() - began
    assert done.returncode == 1, done.stderr  # nothing scored: the one cell timed out
    assert "Timeout: no result within 1 s" in done.stdout
    # Start-up, reading 10 MB and the 1 s timeout take a few seconds; the abandoned BLEU
    # computation took 20 s more, and the process waited for it before exiting.
    assert elapsed < 8, f"the process took {elapsed:.1f} s to exit"
