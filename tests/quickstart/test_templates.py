"""Each quickstart template is generated and its evals.py run end to end against a loopback
OpenAI-compatible server (never the offline judge): the run finishes and writes its results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay.quickstart import TEMPLATES
from tests.quickstart.loopback_llm import LoopbackLLM

# template -> (dataset rows, score columns every finished row must have)
EXPECTED = {
    "rag_eval": (5, ["correctness", "faithfulness"]),
    "prompt_evals": (6, ["accuracy"]),
    "agent_evals": (5, ["correctness", "tool_call_f1"]),
    "workflow_eval": (5, ["response_quality"]),
}


def assay(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def run_evals(
    project: Path, server: LoopbackLLM, tmp_path: Path, *args: str
) -> subprocess.CompletedProcess:
    env = {
        key: value for key, value in os.environ.items() if not key.startswith(("ASSAY_", "OPENAI_"))
    }
    env.update(ASSAY_LLM=server.model_string, ASSAY_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "evals.py", *args],
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        timeout=240,
    )


def results_of(project: Path) -> list[Path]:
    return sorted((project / "evals" / "experiments").glob("*.jsonl"))


def test_every_template_is_covered():
    assert set(EXPECTED) == set(TEMPLATES)


@pytest.mark.parametrize("template", sorted(EXPECTED))
def test_template_runs_against_a_loopback_model(template, tmp_path):
    created = assay("quickstart", template, "project", cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    project = tmp_path / "project"
    assert (project / "evals.py").is_file() and (project / "README.md").is_file()
    assert list((project / "evals" / "datasets").iterdir())

    with LoopbackLLM() as server:
        done = run_evals(project, server, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert server.requests, "evals.py made no model call to the configured endpoint"
    assert {request.body["model"] for request in server.chat_requests} == {"test"}

    [results] = results_of(project)
    records = [json.loads(line) for line in results.read_text().splitlines()]
    rows, scores = EXPECTED[template]
    assert sorted(record["index"] for record in records) == list(range(rows))
    assert [r for r in records if r["status"] != "ok"] == []
    for record in records:
        for name in scores:
            assert "value" in record["result"][name], (name, record["result"])
    meta = json.loads(results.with_name(f"{results.stem}.meta.json").read_text())
    assert meta["status"] == "finished" and meta["n_rows"] == rows

    report = project / "evals" / "reports" / f"{results.stem}.html"
    html = report.read_text()
    assert all(f"<h3>{name}</h3>" in html for name in scores)
    assert str(results) in done.stdout and "report:" in done.stdout


def test_prompt_versions_compare_in_a_report(tmp_path):
    assert assay("quickstart", "prompt_evals", "p", cwd=tmp_path).returncode == 0
    project = tmp_path / "p"
    with LoopbackLLM() as server:
        for version in ("v1", "v2"):
            done = run_evals(project, server, tmp_path, "--prompt", version)
            assert done.returncode == 0, done.stdout + done.stderr
    first, second = results_of(project)
    assert first.stem.endswith("-v1") and second.stem.endswith("-v2")
    made = assay("report", str(first), str(second), "-o", "compare.html", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    html = (tmp_path / "compare.html").read_text()
    assert f"{first.stem} vs {second.stem}" in html and "mean difference" in html


def test_refuses_a_non_empty_directory(tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    done = assay("quickstart", "rag_eval", "busy", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: busy already exists and is not empty; choose a new directory"
    ]
    assert (tmp_path / "busy" / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in (tmp_path / "busy").iterdir()) == ["notes.txt"]


def test_an_empty_directory_is_fine_and_the_default_is_the_template_name(tmp_path):
    (tmp_path / "empty").mkdir()
    assert assay("quickstart", "agent_evals", "empty", cwd=tmp_path).returncode == 0
    assert (tmp_path / "empty" / "agent.py").is_file()
    assert assay("quickstart", "workflow_eval", cwd=tmp_path).returncode == 0
    assert (tmp_path / "workflow_eval" / "workflow.py").is_file()


def test_unknown_template_and_listing(tmp_path):
    done = assay("quickstart", "nope", cwd=tmp_path)
    assert (
        done.returncode == 2 and "rag_eval, prompt_evals, agent_evals, workflow_eval" in done.stderr
    )
    listed = assay("quickstart", cwd=tmp_path)
    assert listed.returncode == 0 and all(name in listed.stdout for name in TEMPLATES)
