"""Each quickstart template is generated and its evals.py run end to end against a loopback
OpenAI-compatible server (never the offline judge): the run finishes and writes its results."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from assay import DiscreteMetric
from assay.quickstart import TEMPLATES, create_project
from tests.quickstart.loopback_llm import TEXT2SQL_QUERY, LoopbackLLM

# template -> (dataset rows, score columns every finished row must have), for templates of one run
EXPECTED = {
    "rag_eval": (5, ["correctness", "faithfulness"]),
    "prompt_evals": (6, ["accuracy"]),
    "agent_evals": (5, ["correctness", "tool_call_f1"]),
    "workflow_eval": (5, ["response_quality"]),
    "text2sql": (6, ["execution_accuracy", "sql_equivalence"]),
    "llamaIndex_agent_evals": (6, ["tool_call_accuracy", "goal_accuracy"]),
}
# templates that compare (two runs, or a judge before and after), each tested on its own below
COMPARING = {"judge_alignment", "improve_rag", "benchmark_llm"}
SIMULATING = {"agent_simulation"}  # no experiment: a simulation, then evaluate (tested below)
NEW = {
    "judge_alignment",
    "llamaIndex_agent_evals",
    "text2sql",
    "improve_rag",
    "benchmark_llm",
    "agent_simulation",
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


def records_of(results: Path) -> list[dict]:
    return [json.loads(line) for line in results.read_text().splitlines()]


def check_text2sql(records: list[dict], stdout: str) -> None:
    """The loopback always writes TEXT2SQL_QUERY: run on shop.db, it returns the expected rows for
    the one question it answers and the wrong rows (or columns) for the others."""
    execution = {r["result"]["id"]: r["result"]["execution_accuracy"] for r in records}
    assert all(r["result"]["predicted_sql"] == TEXT2SQL_QUERY for r in records)
    assert execution.pop("count-customers")["value"] == 1.0
    assert {name: score["value"] for name, score in execution.items()} == dict.fromkeys(
        execution, 0.0
    )
    assert execution["orders-per-customer"]["reason"] == "returns 1 column(s), expected 2"
    assert "execution_accuracy: 1/6 queries return the expected rows" in stdout


def check_llama_index_agent(records: list[dict], stdout: str) -> None:
    """The loopback calls the first tool (add_item) with a placeholder, then answers: the
    LlamaIndex agent really ran the tool on the row's own list, and the trace shows the call."""
    for record in records:
        row = record["result"]
        assert row["items_after"] == [*row["items"], "a test answer"]
        assert [m["type"] for m in row["trace"]] == ["human", "ai", "tool", "ai"]
        assert row["trace"][1]["tool_calls"] == [
            {"name": "add_item", "args": {"item": "a test answer"}}
        ]
        assert row["trace"][2]["content"] == "added a test answer"
        assert row["response"] == row["trace"][3]["content"] == "Done."
        assert row["tool_call_accuracy"]["value"] == 0.0  # never the expected calls
        assert row["goal_accuracy"]["value"] == 1.0  # the loopback judge says "yes"
    reasons = {r["result"]["id"]: r["result"]["tool_call_accuracy"]["reason"] for r in records}
    assert "expected ['list_items'], called ['add_item']" in reasons["whats-on-it"]
    assert "tool_call_accuracy: mean 0.000 over 6/6 requests" in stdout


CHECKS = {"text2sql": check_text2sql, "llamaIndex_agent_evals": check_llama_index_agent}


def test_every_template_is_covered():
    assert set(EXPECTED) | COMPARING | SIMULATING == set(TEMPLATES)
    assert not set(EXPECTED) & COMPARING and not (set(EXPECTED) | COMPARING) & SIMULATING


@pytest.mark.parametrize("template", sorted(NEW))
def test_new_templates_carry_a_project_file_and_a_readme(template, tmp_path):
    project = create_project(template, tmp_path / template)
    # read by hand: tomllib is not in Python 3.10's standard library
    text = (project / "pyproject.toml").read_text()
    assert text.startswith("[project]\n")
    assert re.search(r'^name = "[a-z0-9-]+"$', text, re.MULTILINE)
    assert re.search(
        r'^dependencies = \["assay(\[[a-z,]+\])?"(, "[a-z-]+>=[0-9.]+")*\]$', text, re.MULTILINE
    )
    assert "python evals.py" in (project / "README.md").read_text()


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
    records = records_of(results)
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
    if template in CHECKS:
        CHECKS[template](records, done.stdout)


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


TEXT2SQL_CASES = """
import asyncio, json, sys
from evals import execution_accuracy
cases = [
    ("SELEC name FROM customers", "SELECT name FROM customers"),
    ("DELETE FROM customers", "SELECT name FROM customers"),
    ("SELECT name AS who FROM customers ORDER BY name DESC", "SELECT name FROM customers"),
    ("SELECT name FROM customers ORDER BY name DESC", "SELECT name FROM customers ORDER BY name"),
    ("SELECT name, city FROM customers", "SELECT name FROM customers"),
    ("SELECT name FROM customers WHERE name < 'C'", "SELECT name FROM customers"),
    ("SELECT COUNT(*) FROM customers", "SELECT COUNT(*) FROM customers"),
]
scores = [asyncio.run(execution_accuracy(p, e)) for p, e in cases]
json.dump([[s.value, s.reason] for s in scores], sys.stdout)
"""


def test_text2sql_execution_accuracy_compares_results_not_spelling(tmp_path):
    project = create_project("text2sql", tmp_path / "project")
    with LoopbackLLM() as server:  # evals.py builds its model on import; nothing is asked here
        env = {**os.environ, "ASSAY_LLM": server.model_string, "NO_COLOR": "1"}
        done = subprocess.run(
            [sys.executable, "-c", TEXT2SQL_CASES],
            capture_output=True,
            text=True,
            cwd=project,
            env=env,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert server.chat_requests == []
    broken, write, alias, reversed_order, extra_column, subset, same = json.loads(done.stdout)
    assert broken[0] == 0.0 and broken[1].startswith("the query does not run: ")
    assert write[0] == 0.0 and "readonly" in write[1]  # the database is opened read-only
    assert alias[0] == 1.0  # another column name and row order: the same rows
    assert reversed_order[0] < 1.0  # ... unless the expected query fixes the order
    assert extra_column == [0.0, "returns 2 column(s), expected 1"]
    assert subset[0] == pytest.approx(2 * 0.4 / 1.4)  # 2 of 5 rows: precision 1, recall 0.4
    assert same[0] == 1.0
    with sqlite3.connect(project / "shop.db") as db:
        assert db.execute("SELECT COUNT(*) FROM customers").fetchone() == (5,)


def test_judge_alignment_reports_agreement_before_and_after(tmp_path):
    project = create_project("judge_alignment", tmp_path / "project")
    with LoopbackLLM() as server:
        done = run_evals(project, server, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    [report_json] = (project / "evals" / "reports").glob("*-alignment.json")
    report = json.loads(report_json.read_text())
    assert report["metric"] == "correctness" and report["label_kind"] == "nominal"
    n = report["rows"]
    assert f"{20 - n} training labels, {n} test labels" in done.stdout
    assert report["rows_scored"] == report["rows_paired"] == n
    # The loopback judge always answers the first choice, "pass": agreement is the share of
    # test rows a person passed, before and after, so the difference is 0.
    passed = sum(row["label"] == "pass" for row in report["per_row"]) / n
    for block in ("before", "statistics"):
        assert report[block]["agreement"]["value"] == pytest.approx(passed)
    assert report["differences"]["agreement"]["value"] == 0
    assert report_json.with_suffix(".html").is_file() and "agreement" in done.stdout

    # One call per test row before and one after; the aligned calls carry four worked examples,
    # all from training rows (no test row is shown to the judge as an example).
    test_ids = {row["id"] for row in report["per_row"]}
    assert len(server.chat_requests) == 2 * n
    aligned = [r for r in server.chat_requests if len(r.messages) == 1 + 2 * 4 + 1]
    assert len(aligned) == n
    [saved] = (project / "evals" / "judges").glob("*-correctness.json")
    judge = DiscreteMetric.load(saved, llm=None)
    state = judge.alignment
    assert state.selection == "fixed" and len(state.fixed_ids) == 4
    assert not set(state.fixed_ids) & test_ids
    assert (
        sorted(e.label for e in state.examples if e.id in state.fixed_ids)
        == ["fail"] * 2 + ["pass"] * 2
    )


def test_improve_rag_compares_two_retrieval_settings(tmp_path):
    project = create_project("improve_rag", tmp_path / "project")
    with LoopbackLLM() as server:
        done = run_evals(project, server, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    top1, top3 = results_of(project)
    assert top1.stem.endswith("-top1") and top3.stem.endswith("-top3")
    recall = {
        run.stem[-4:]: {
            r["result"]["id"]: r["result"]["context_recall"]["value"] for r in records_of(run)
        }
        for run in (top1, top3)
    }
    # Keyword retrieval is deterministic: one article misses half of the two-article questions.
    assert recall["top1"]["winter"] == 0.5 and recall["top3"]["winter"] == 1.0
    assert all(recall["top3"][q] >= recall["top1"][q] for q in recall["top1"])
    assert "context_recall: 0.750 (8/8) -> 0.938 (8/8); difference +0.188" in done.stdout
    assert "top3 higher: CI excludes 0" in done.stdout
    assert "correctness: 1.000 (8/8) -> 1.000 (8/8); difference +0.000" in done.stdout
    [report] = (project / "evals" / "reports").glob("*-compare.html")
    html = report.read_text()
    assert f"{top1.stem} vs {top3.stem}" in html and "mean difference" in html


def test_benchmark_llm_compares_two_models_row_by_row(tmp_path):
    project = create_project("benchmark_llm", tmp_path / "project")
    with LoopbackLLM() as server:
        # Two models behind one server: "low" answers each number's minimum (0%), "high" its
        # maximum (35%); two customers get 0% and four get the 35% cap.
        models = [f"vllm/{name}@{server.url}" for name in ("low", "high")]
        done = run_evals(project, server, tmp_path, "--models", *models)
    assert done.returncode == 0, done.stdout + done.stderr
    first, second = results_of(project)
    assert "-A-vllm_low" in first.stem and "-B-vllm_high" in second.stem
    assert sorted(r.body["model"] for r in server.chat_requests) == ["high"] * 10 + ["low"] * 10
    discounts = (
        {r["result"]["discount"] for r in records_of(first)},
        {r["result"]["discount"] for r in records_of(second)},
    )
    assert discounts == ({0}, {35})
    assert f"A {models[0]}: accuracy 0.200 over 10/10 customers" in done.stdout
    assert f"B {models[1]}: accuracy 0.400 over 10/10 customers" in done.stdout
    assert "B - A: +0.200 [" in done.stdout and "(B better on 4, worse on 2)" in done.stdout
    [report] = (project / "evals" / "reports").glob("*-benchmark.html")
    assert f"{first.stem} vs {second.stem}" in report.read_text()


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
    assert done.returncode == 2 and ", ".join(TEMPLATES) in done.stderr
    listed = assay("quickstart", cwd=tmp_path)
    assert listed.returncode == 0
    lines = listed.stdout.splitlines()
    assert len(TEMPLATES) == 10 and len(lines) == 1 + 10  # agent_simulation is the tenth
    for (name, description), line in zip(TEMPLATES.items(), lines[1:], strict=True):
        assert line.split() == [name, *description.split()]


def test_agent_simulation_simulates_ten_customers_and_scores_them(tmp_path):
    """The loopback plays every customer ("a test answer"), picks the agent's first tool
    (order_status) and finds each goal met: ten conversations, each a tool call and its output,
    each scored. Run again, the run directory answers: no conversation is simulated twice."""
    project = create_project("agent_simulation", tmp_path / "project")
    with LoopbackLLM() as server:
        done = run_evals(project, server, tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        first_calls = len(server.chat_requests)
        again = run_evals(project, server, tmp_path)
        assert again.returncode == 0, again.stdout + again.stderr
        rerun_calls = len(server.chat_requests) - first_calls
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ASSAY_", "OPENAI_"))}
        env.update(ASSAY_LLM=server.model_string, ASSAY_CACHE_DIR=str(tmp_path / "cache"))
        cli = subprocess.run(
            [sys.executable, "-m", "assay", "simulate", "evals/scenarios.jsonl", "--agent",
             "agent:support_agent", "--max-turns", "2", "-o", "cli.jsonl", "--no-progress"],
            capture_output=True, text=True, cwd=project, env=env, timeout=240,
        )  # fmt: skip
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert "10 conversations written to cli.jsonl" in cli.stdout
    assert re.search(r"goal_met\s+│\s+10\s+│", done.stdout), done.stdout
    conversations = [
        json.loads(line) for line in (project / "evals" / "conversations.jsonl").open()
    ]
    assert len(conversations) == 10
    for row in conversations:
        assert [m["type"] for m in row["user_input"]] == ["human", "ai", "tool", "ai"]
        assert row["user_input"][1]["tool_calls"][0]["name"] == "order_status"
        assert row["user_input"][2]["content"] == '{"error": "no order a test answer"}'
        assert row["reference"] and row["metadata"]["ended"] == "goal_met"
    scores = [json.loads(line) for line in (project / "evals" / "scores.jsonl").open()]
    assert [s["metrics"]["agent_goal_accuracy"]["value"] for s in scores] == [1.0] * 10
    # per conversation a user turn and a judge call, then a goal-accuracy call: 30 requests; the
    # agent's step and reply read the same conversation for every customer (the loopback user
    # always says the same), so they are asked once and then answered from the response cache
    assert first_calls == 10 + 10 + 10 + 2
    assert rerun_calls == 0  # the conversations resumed from the run directory, scores cached
    assert "10 conversation(s) resumed" in again.stdout
