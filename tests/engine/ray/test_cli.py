"""`assay evaluate DATA --ray ADDRESS --workers N --output DIR [--resume]`, joining the session's
cluster by its address from a process of its own."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import pytest

from tests.engine.ray.conftest import rows_written, wait_until
from tests.engine.ray.test_errors import ROOT, ROWS, assay_cli

pytestmark = pytest.mark.ray


def test_evaluate_on_ray_writes_rows_and_refuses_to_overwrite_them(gcs_address, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    out = tmp_path / "out"
    command = ["evaluate", str(data), "-m", "exact_match", "--ray", gcs_address, "--workers", "2"]
    command += ["--output", str(out), "--no-progress"]

    first = assay_cli(*command, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "exact_match" in first.stdout and "2/2" in first.stdout  # coverage: both rows
    assert "ray: 2 rows scored, 0 already in" in first.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"][0]["n_ok"] == 2 and summary["metrics"][0]["mean"] == 0.5

    again = assay_cli(*command, cwd=tmp_path)
    assert again.returncode == 2
    assert "already holds rows of this run; pass resume=True (--resume)" in again.stderr

    resumed = assay_cli(*command, "--resume", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "ray: 0 rows scored, 2 already in" in resumed.stdout


def test_resume_and_a_file_output_need_ray_or_a_directory(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    alone = assay_cli("evaluate", str(data), "-m", "exact_match", "--resume", cwd=tmp_path)
    assert alone.returncode == 2 and "--resume goes with --ray" in alone.stderr
    no_dir = assay_cli("evaluate", str(data), "-m", "exact_match", "--ray", "local", cwd=tmp_path)
    assert no_dir.returncode == 2 and "--ray needs --output DIR" in no_dir.stderr


@pytest.mark.slow  # a driver of its own, interrupted, then resumed: ~15 s
def test_ctrl_c_keeps_the_rows_and_resume_finishes(gcs_address, server, tmp_path):
    from tests.models.fake_openai import ok

    server.default = ok("no", latency=0.1)
    data = tmp_path / "data.jsonl"
    rows = [{"user_input": f"q{n}", "response": f"a{n}"} for n in range(300)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "out"
    command = ["evaluate", str(data), "-m", "coherence", "--llm", server.model_string()]
    command += ["--no-cache", "--ray", gcs_address, "--workers", "2", "--concurrency", "4"]
    command += ["--output", str(out), "--no-progress"]
    run = subprocess.Popen(
        [sys.executable, "-m", "assay", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        wait_until(
            lambda: rows_written(out) >= 20 or run.poll() is not None, timeout=90, what="rows"
        )
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 130, err
    said = " ".join(err.split())  # the console wraps long lines
    assert f"finished rows are saved in {out}: run the same command with --resume" in said

    resumed = assay_cli(*command, "--resume", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    scored, kept = map(
        int, re.search(r"ray: (\d+) rows scored, (\d+) already", resumed.stdout).groups()
    )
    assert kept >= 20 and scored + kept == 300
    assert "300/300" in resumed.stdout  # coverage of the whole dataset
