"""A simulation against a loopback OpenAI-compatible server playing the user and the judge: its
dataset scored by `evaluate`, the `assay simulate` command in a subprocess, and a run killed
mid-way that resumes without replaying any finished conversation."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay import evaluate
from assay.metrics.agent.goal_accuracy import AgentGoalAccuracyWithReference
from assay.models.factory import llm_factory
from assay.schema.dataset import EvaluationDataset
from assay.simulation import Scenario, SimulationResult, simulate
from tests.models.fake_openai import Behaviour, FakeOpenAI, RecordedRequest, dynamic, ok, serve
from tests.simulation.scripted import say, verdict

ROOT = Path(__file__).resolve().parents[2]


def _fenced(request: RecordedRequest, name: str) -> str:
    found = re.findall(rf"<{name}>\n(.*?)\n</{name}>", request.last_user_text, re.S)
    return found[-1] if found else ""


def _role(request: RecordedRequest) -> str:
    system = str(request.messages[0].get("content", ""))
    if "You play a user" in system:
        return "user"
    if '"goal_met"' in system:
        return "goal"
    return "metric"


def world(latency: float = 0.0) -> Behaviour:
    """The user says the scenario's goal; the judge finds it met when the agent said "Done";
    goal accuracy says yes when the conversation mentions the reference's last word."""

    def answer(request: RecordedRequest) -> Behaviour:
        role = _role(request)
        if role == "user":
            return ok(say(_fenced(request, "goal")), latency=latency)
        if role == "goal":
            return ok(verdict("AI: Done" in _fenced(request, "conversation")), latency=latency)
        reference = _fenced(request, "reference").split()[-1]
        return ok("yes" if reference in _fenced(request, "conversation") else "no")

    return dynamic(answer)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    yield from serve()


AGENT = """
import os

def agent(messages):
    goal = messages[0].content
    with open(os.environ["AGENT_LOG"], "a", encoding="utf-8") as log:
        log.write(goal + "\\n")
    if goal.startswith("crash"):
        raise RuntimeError("agent crashed on " + goal)
    return "Done: " + goal
"""


def test_the_dataset_feeds_evaluate_with_goal_accuracy(fake):
    fake.default = world()
    llm = llm_factory(fake.model_string(), cache=False)
    result = simulate(
        lambda messages: f"Done: {messages[0].content}",
        [
            Scenario(
                persona="p", goal="Order a pizza", reference_outcome="A pizza is ordered: pizza"
            ),
            Scenario(
                persona="p", goal="Order a salad", reference_outcome="A soup is ordered: soup"
            ),
        ],
        user_llm=llm,
        show_progress=False,
    )
    assert isinstance(result, SimulationResult) and result.counts()["goal_met"] == 2
    scored = evaluate(
        result.dataset, metrics=[AgentGoalAccuracyWithReference()], llm=llm, show_progress=False
    )
    values = [scored.outcome(row, "agent_goal_accuracy").value for row in range(2)]
    assert values == [1.0, 0.0]  # the salad conversation never reaches the soup reference


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        ASSAY_LOCAL_MODEL=str(tmp_path / "no-such-model.gguf"),  # never the embedded judge
        AGENT_LOG=str(tmp_path / "agent.log"),
        PYTHONPATH=str(ROOT),
    )
    return env


def _scenarios(tmp_path: Path, goals: list[str]) -> Path:
    path = tmp_path / "scenarios.jsonl"
    rows = [{"persona": "a customer", "goal": goal, "name": goal} for goal in goals]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    (tmp_path / "shop_agent.py").write_text(AGENT, encoding="utf-8")
    return path


def _command(tmp_path: Path, fake: FakeOpenAI, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "assay", "simulate", str(tmp_path / "scenarios.jsonl"),
        "--agent", "shop_agent:agent", "--user-llm", fake.model_string(), "--no-cache",
        "--no-progress", *extra,
    ]  # fmt: skip


def test_the_cli_simulates_prints_and_writes_rows_for_evaluate(fake, tmp_path):
    fake.default = world()
    _scenarios(tmp_path, ["buy socks", "crash please", "buy shoes"])
    output = tmp_path / "conversations.jsonl"
    done = subprocess.run(
        _command(tmp_path, fake, "-o", str(output), "--max-turns", "3"),
        cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # one conversation failed
    assert re.search(r"goal_met\s+│\s+2\s+│\s+1\.0", done.stdout), done.stdout
    assert (
        "error crash please: AgentError: turn 1: the agent raised RuntimeError: agent crashed on "
        "crash please" in " ".join(done.stdout.split())
    )
    assert "2 conversations written to" in done.stdout
    rows = EvaluationDataset.load(output)
    assert [s.metadata["scenario"] for s in rows] == ["buy socks", "buy shoes"]
    assert rows[0].user_input[-1].content == "Done: buy socks"
    estimate = subprocess.run(
        _command(tmp_path, fake, "--estimate", "--max-turns", "3"),
        cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert estimate.returncode == 0, estimate.stderr
    assert "at most 18 model requests for 3 conversations" in estimate.stdout
    bad = subprocess.run(
        [*_command(tmp_path, fake)[:5], "--agent", "shop_agent:missing"],
        cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert bad.returncode == 2
    assert "shop_agent has no attribute 'missing'" in bad.stderr


@pytest.mark.slow
def test_a_killed_run_resumes_without_replaying_a_finished_conversation(fake, tmp_path):
    fake.default = world(latency=0.25)  # a conversation takes about half a second
    goals = [f"goal {n}" for n in range(8)]
    _scenarios(tmp_path, goals)
    run_dir = tmp_path / "run"
    cells = run_dir / "cells.jsonl"
    command = _command(tmp_path, fake, "--run-dir", str(run_dir), "--concurrency", "2")
    process = subprocess.Popen(command, cwd=tmp_path, env=_env(tmp_path))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if cells.exists() and cells.read_text(encoding="utf-8").count("\n") >= 3:
            break
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait(30)
    saved = [json.loads(line) for line in cells.read_text(encoding="utf-8").splitlines()]
    finished = {goals[cell["row"]] for cell in saved}
    assert 3 <= len(finished) < len(goals), "the run was not killed mid-way"
    fake.reset_records()

    output = tmp_path / "out.jsonl"
    rerun = subprocess.run(
        [*command, "-o", str(output)], cwd=tmp_path, env=_env(tmp_path),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr
    assert f"{len(finished)} conversation(s) resumed" in rerun.stdout
    asked_again = {_fenced(r, "goal") for r in fake.chat_requests if _role(r) == "user"}
    assert asked_again == set(goals) - finished  # no finished conversation is replayed
    calls = (tmp_path / "agent.log").read_text(encoding="utf-8").splitlines()
    assert all(calls.count(goal) == 1 for goal in finished), calls
    rows = EvaluationDataset.load(output)
    assert sorted(s.metadata["scenario"] for s in rows) == sorted(goals)
    lines = cells.read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(line)["row"] for line in lines) == list(range(len(goals)))


def test_with_no_model_named_both_roles_are_the_default_judge(fake, monkeypatch):
    fake.default = world()
    monkeypatch.setenv("ASSAY_LLM", fake.model_string())
    result = simulate(
        lambda messages: "Done.", [Scenario(persona="p", goal="say hi")], show_progress=False
    )
    assert result.conversations[0].ended == "goal_met"
    assert sorted(_role(r) for r in fake.chat_requests) == ["goal", "user"]


def test_a_rerun_keeps_finished_conversations_and_retries_failed_ones(tmp_path):
    from assay.errors import CheckpointMismatch
    from tests.simulation.scripted import scripted_judge, scripted_user

    calls: list[str] = []
    broken = {"b"}

    def agent(messages):
        calls.append(messages[0].content)
        if messages[0].content in broken:
            raise RuntimeError("down")
        return "Done."

    scenarios = [Scenario(persona="p", goal=g, name=g) for g in ("a", "b", "c")]
    user, _ = scripted_user({g: [say(g)] for g in "abc"})
    judge, _ = scripted_judge(lambda goal, text: True)
    options = {"user_llm": user, "judge_llm": judge, "run_dir": tmp_path / "run"}
    first = simulate(agent, scenarios, show_progress=False, concurrency=1, **options)
    assert first.counts() == {"goal_met": 2, "gave_up": 0, "max_turns": 0, "error": 1}
    broken.clear()
    calls.clear()
    second = simulate(agent, scenarios, show_progress=False, **options)
    assert calls == ["b"]  # only the failed conversation is simulated again
    assert second.resumed == 2 and second.counts()["goal_met"] == 3
    assert second.conversations[0].messages == first.conversations[0].messages
    assert second.conversations[0].usage == first.conversations[0].usage
    with pytest.raises(CheckpointMismatch, match="different data, metrics or settings"):
        simulate(agent, scenarios, max_turns=4, show_progress=False, **options)
