"""`assay evaluate DATA --ray ADDRESS --workers N --output DIR [--resume]`, joining the session's
cluster by its address from a process of its own."""

from __future__ import annotations

import json

import pytest

from tests.engine.ray.test_errors import ROWS, assay_cli

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
