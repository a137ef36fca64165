"""Checkpointed runs: a run killed with SIGKILL resumes without recomputing finished cells."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from assay import CheckpointMismatch, evaluate
from assay.schema.outcome import Cell
from tests.engine.scripted_metrics import ScriptedMetric

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from dataclasses import dataclass
    from assay import Metric, MetricResult, evaluate

    LOG = sys.argv[3]

    @dataclass(kw_only=True)
    class SlowLength(Metric):
        name: str = "slow_length"
        required_fields = ("response",)

        async def _ascore(self, *, response):
            with open(LOG, "a") as log:
                log.write(response + "\\n")
            await asyncio.sleep(0.05)
            return MetricResult(float(len(response)))

    rows = [{"response": "x" * n} for n in range(1, 61)]
    result = evaluate(rows, [SlowLength()], run_dir=sys.argv[1], max_concurrency=2, show_progress=False)
    with open(sys.argv[2], "w") as out:
        json.dump(result["slow_length"], out)
    """
)


def _count_lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_resume_after_kill_9_finishes_without_recomputing(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    run_dir, out, log = tmp_path / "run", tmp_path / "out.json", tmp_path / "calls.log"
    command = [sys.executable, str(script), str(run_dir), str(out), str(log)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}

    first = subprocess.Popen(command, env=env)
    deadline = time.monotonic() + 60
    while _count_lines(run_dir / "cells.jsonl") < 10:
        assert first.poll() is None, "the run finished before it could be killed"
        assert time.monotonic() < deadline, "no cells were checkpointed"
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    assert first.wait(timeout=30) == -signal.SIGKILL
    assert not out.exists()

    saved = [
        Cell.model_validate_json(line)
        for line in (run_dir / "cells.jsonl").read_text().splitlines()
    ]
    assert 10 <= len(saved) < 60
    calls_before = _count_lines(log)

    second = subprocess.run(command, env=env, timeout=120)
    assert second.returncode == 0
    assert json.loads(out.read_text()) == [float(n) for n in range(1, 61)]

    recomputed = {len(line) for line in log.read_text().splitlines()[calls_before:]}
    finished_first = {cell.row + 1 for cell in saved}
    assert recomputed.isdisjoint(finished_first), "finished cells were computed again"
    assert recomputed | finished_first == set(range(1, 61))


def test_torn_last_line_is_dropped_and_that_cell_recomputed(tmp_path):
    rows = [{"response": str(n)} for n in range(4)]
    evaluate(rows, [ScriptedMetric()], run_dir=tmp_path, show_progress=False)
    cells = tmp_path / "cells.jsonl"
    lines = cells.read_text().splitlines(keepends=True)
    cells.write_text("".join(lines[:2]) + lines[2][:15])  # as if killed mid-write
    result = evaluate(rows, [ScriptedMetric()], run_dir=tmp_path, show_progress=False)
    assert result["test_scripted"] == [0.0, 1.0, 2.0, 3.0]
    reread = [Cell.model_validate_json(line) for line in cells.read_text().splitlines()]
    assert len(reread) == 4


def test_errors_are_retried_on_resume_but_ok_cells_are_kept(tmp_path):
    rows = [{"response": "raise"}, {"response": "0.5"}]
    first = evaluate(rows, [ScriptedMetric()], run_dir=tmp_path, show_progress=False)
    assert first.outcome(0, "test_scripted").status == "error"
    again = evaluate(rows, [ScriptedMetric()], run_dir=tmp_path, show_progress=False)
    lines = (tmp_path / "cells.jsonl").read_text().splitlines()
    assert len(lines) == 3  # the ok cell was not recomputed, the error cell was
    assert again["test_scripted"] == [None, 0.5]


def test_run_dir_of_another_run_is_refused(tmp_path):
    evaluate([{"response": "1"}], [ScriptedMetric()], run_dir=tmp_path, show_progress=False)
    with pytest.raises(CheckpointMismatch, match="different data"):
        evaluate([{"response": "2"}], [ScriptedMetric()], run_dir=tmp_path, show_progress=False)
