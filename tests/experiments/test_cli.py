"""`assay experiments list|compare` on the command line; errors are one line with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import write_experiment


def assay(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, text=True, cwd=cwd, timeout=60
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = [0.2, 0.4, 0.5, 0.1, 0.9, 0.3, 0.6, 0.7]
    write_experiment(
        tmp_path,
        "baseline",
        [{"id": f"q{i}", "score": s, "answer": "a"} for i, s in enumerate(base)],
        params={"args": [], "kwargs": {"model": "small"}},
    )
    write_experiment(
        tmp_path,
        "bigger_model",
        [{"id": f"q{i}", "score": s + 0.2} for i, s in enumerate(base)],
        errors={3: "judge down"},
        params={"args": ["v2"], "kwargs": {"model": "große"}},
        order=[7, 6, 5, 4, 3, 2, 1, 0],
    )
    write_experiment(tmp_path, "rerun", [{"id": f"q{i}", "score": s} for i, s in enumerate(base)])
    return tmp_path


def test_list_shows_every_run_with_rows_errors_and_params(root):
    done = assay("experiments", "list", "--root-dir", str(root))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["name", "created", "status", "rows", "errors", "params"]
    assert [line.split()[0] for line in lines[1:]] == ["baseline", "bigger_model", "rerun"]
    bigger = lines[2].split(maxsplit=5)
    assert bigger[2:] == ["finished", "8", "1", '"v2", model="große"']
    assert lines[1].split()[3:] == ["8", "0", 'model="small"']


def test_list_of_an_empty_directory_says_so(tmp_path):
    done = assay("experiments", "list", cwd=tmp_path)
    assert done.returncode == 0 and "no experiments in experiments" in done.stdout


def test_compare_reports_means_coverage_and_whether_the_interval_excludes_zero(root):
    done = assay(
        "experiments", "compare", "baseline", "bigger_model", "rerun", "--root-dir", str(root)
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "baseline: baseline; rows matched by id" in out
    assert "score   baseline        0.4625  (8/8)" in out
    assert "score   bigger_model    0.7143  (7/8)" in out  # the failed row q3 has no score
    assert (
        "delta +0.2000  CI [+0.2000, +0.2000]  pairs 7  better/worse/same 7/0/0  -> bigger_model higher: CI excludes 0"
        in out
    )
    assert "rerun" in out and "CI includes 0: no clear difference" in out
    assert "largest changes in score, bigger_model vs baseline:" in out
    assert "answer" not in out  # text columns are not metrics


def test_compare_json_is_complete_and_reproducible(root):
    args = (
        "experiments",
        "compare",
        "baseline",
        str(root / "experiments" / "bigger_model.jsonl"),
        "--root-dir",
        str(root),
        "--metric",
        "score",
        "--json",
        "--seed",
        "3",
        "--resamples",
        "500",
    )
    first, second = assay(*args), assay(*args)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    data = json.loads(first.stdout)
    assert data["seed"] == 3 and data["metrics"] == ["score"]
    (diff,) = data["differences"]
    assert diff["includes_zero"] is False and len(diff["rows"]) == 7


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["compare", "baseline", "missing"], "no experiment 'missing'"),
        (["compare", "baseline"], "at least two experiments"),
        (["compare", "baseline", "rerun", "--metric", "answer"], "no numeric column 'answer'"),
        (["list", "--root-dir", "/no/such/place"], "no such directory"),
    ],
)
def test_errors_are_one_line_with_exit_code_2(root, args, message):
    if "--root-dir" not in args:
        args = [*args, "--root-dir", str(root)]
    done = assay("experiments", *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
