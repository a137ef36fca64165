"""`assay align` in a real process against the loopback fake OpenAI server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay.alignment import load_aligned_metric
from tests.models.fake_openai import FakeOpenAI, dynamic, ok


def rows(prefix: str, n: int) -> list[dict]:
    made = []
    for i in range(n):
        good = i % 2 == 0
        made.append(
            {
                "id": f"{prefix}{i}",
                "response": f"The shop opens at {9 if good else 7} am, item {prefix}{i}.",
                "retrieved_contexts": ["The shop opens at 9 am."],
                "label": "kept" if good else "dropped",  # read through --map kept=1 --map dropped=0
                "doc": f"{prefix}-doc{i // 2}",
            }
        )
    return made


def write(path: Path, items: list[dict]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return path


@pytest.fixture
def server():
    fake = FakeOpenAI().start()
    # The judge says yes to "9 am" rows and no to the others, for the verdict prompt it is sent.
    fake.default = dynamic(
        lambda request: ok(
            "1. yes"
            if "opens at 9 am, item" in json.dumps(request.body["messages"][-1])
            else "1. no"
        )
    )
    yield fake
    fake.stop()


def test_align_writes_the_state_and_reports_held_out_agreement(tmp_path, server):
    train = write(tmp_path / "train.jsonl", rows("a", 12))
    test = write(tmp_path / "test.jsonl", rows("b", 6))
    out = tmp_path / "aligned.json"
    report = tmp_path / "report.json"
    env = {**os.environ, "OPENAI_API_KEY": "test-key"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "align",
            "faithfulness",
            "--train",
            str(train),
            "--test",
            str(test),
            "-o",
            str(out),
            "--group-column",
            "doc",
            "--map",
            "kept=1",
            "--map",
            "dropped=0",
            "--llm",
            "openai/test-model",
            "--base-url",
            server.url,
            "--embeddings",
            "openai/test-embeddings",
            "-k",
            "2",
            "--resamples",
            "100",
            "--report",
            str(report),
            "--html",
            str(tmp_path / "report.html"),
            "--no-cache",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "aligned state written to" in done.stdout and "balanced_accuracy" in done.stdout
    saved = json.loads(out.read_text())
    assert saved["metric"]["class"] == "Faithfulness"
    assert len(saved["alignment"]["examples"]) == 12
    data = json.loads(report.read_text())
    assert data["rows"] == 6 and data["statistics"]["agreement"]["value"] == 1.0
    assert data["before"] is not None and data["differences"] is not None
    assert (tmp_path / "report.html").read_text().count("<section") == 1
    # train 12 calibration calls + test 6 before + 6 after
    assert len(server.chat_requests) == 24
    metric = load_aligned_metric(out)
    assert metric.alignment.threshold == saved["alignment"]["threshold"]
    # the aligned file carries its held-out report, which `assay report --alignment` shows
    assert saved["report"]["statistics"] == data["statistics"]
    page = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "report",
            "--alignment",
            str(out),
            "-o",
            str(tmp_path / "p.html"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert page.returncode == 0, page.stderr
    html = (tmp_path / "p.html").read_text()
    assert 'class="alignment"' in html and "Confusion matrix, after" in html


def test_align_errors_are_one_line_and_exit_2(tmp_path, server):
    bad = tmp_path / "train.jsonl"
    bad.write_text(json.dumps({"response": "x", "retrieved_contexts": ["y"]}) + "\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "align",
            "faithfulness",
            "--train",
            str(bad),
            "-o",
            str(tmp_path / "o.json"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "no label" in done.stderr and "row 1" in done.stderr
    assert not (tmp_path / "o.json").exists()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "align",
            "rouge_score",
            "--train",
            str(bad),
            "-o",
            str(tmp_path / "o.json"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "not an LLM judge" in done.stderr


def test_label_maps_are_read_as_json_where_they_can_be():
    from assay.cli.align import _mapping
    from assay.errors import UsageError

    assert _mapping(["good=1", "bad=0", "0=1", '"yes"=true', "meh=0.5"]) == {
        "good": 1,
        "bad": 0,
        0: 1,
        "yes": True,
        "meh": 0.5,
    }
    for bad in ("good", "=1", "[1]=0"):
        with pytest.raises(UsageError, match="--map"):
            _mapping([bad])
