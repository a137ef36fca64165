"""A killed run keeps every finished row, and a torn last line never breaks the reader."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from assay.errors import DataError
from assay.experiments import Experiment, list_experiments

SCRIPT = textwrap.dedent("""
    import sys

    import anyio

    from assay import Dataset, experiment

    rows = [{"id": i, "text": "ü€𝄞" * 6000} for i in range(400)]  # ~60 kB lines: several writes each

    @experiment(max_concurrency=4, show_progress=False)
    async def slow(row, factor):
        await anyio.sleep(0.01)
        return {**row, "score": row["id"] * factor}

    slow.run(Dataset("big", backend="inmemory", root_dir=sys.argv[1], data=rows), 0.5, name="killed")
""")


def test_rows_written_before_sigkill_are_intact(tmp_path):
    script = tmp_path / "run_experiment.py"
    script.write_text(SCRIPT, encoding="utf-8")
    results = tmp_path / "experiments" / "killed.jsonl"
    process = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if results.exists() and results.read_bytes().count(b"\n") >= 40:
                break
            if process.poll() is not None:
                pytest.fail(
                    f"the experiment ended before it was killed: {process.stderr.read().decode()}"
                )
            time.sleep(0.005)
        else:
            pytest.fail("no rows appeared within 30 s")
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == -signal.SIGKILL

    finished = Experiment.load("killed", root_dir=tmp_path)
    assert 40 <= len(finished) < 400
    for row in finished:
        assert row["text"] == "ü€𝄞" * 6000
        assert row["score"] == row["id"] * 0.5
    assert len({row["id"] for row in finished}) == len(finished)
    complete_lines = results.read_bytes().count(b"\n")
    assert len(finished) == complete_lines  # every complete line is a row; a torn tail is not
    assert finished.metadata["status"] == "running"  # the run never got to say it ended
    (summary,) = list_experiments(tmp_path)
    assert summary["status"] == "incomplete" and summary["n_rows"] == len(finished)


def _write(path, records, tail=b""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records) + tail)


RECORDS = [
    {"index": i, "status": "ok", "seconds": 0.1, "result": {"id": i, "score": i / 2}}
    for i in range(3)
]


def test_a_torn_last_line_is_ignored(tmp_path):
    path = tmp_path / "experiments" / "torn.jsonl"
    _write(path, RECORDS, tail=b'{"index": 3, "status": "ok", "result": {"id": 3, "text": "\xc3')
    loaded = Experiment.load("torn", root_dir=tmp_path)
    assert [row["id"] for row in loaded] == [0, 1, 2]


def test_a_complete_last_line_without_newline_is_kept(tmp_path):
    path = tmp_path / "experiments" / "no_newline.jsonl"
    _write(path, RECORDS[:2], tail=json.dumps(RECORDS[2]).encode())
    assert len(Experiment.load("no_newline", root_dir=tmp_path)) == 3


def test_garbage_inside_the_file_is_an_error_not_silence(tmp_path):
    path = tmp_path / "experiments" / "garbage.jsonl"
    _write(path, RECORDS[:1], tail=b"{not json\n" + json.dumps(RECORDS[1]).encode() + b"\n")
    with pytest.raises(DataError, match="row 2"):
        Experiment.load("garbage", root_dir=tmp_path)
