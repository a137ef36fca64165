"""The four agent metrics on simulated conversations whose outcome is set by construction, judged
over the real model path by a loopback OpenAI-compatible server.

The agents are scripted (tests/metrics/agent/trajectories.py) to succeed, to fail (the booking
tool refuses), to loop (search after search, never booking) and to raise; `assay.simulation`
runs them with a scripted user. The server plays a judge that reads the evidence correctly (a
task is done when a tool output shows it), so each score is known in advance, and the test pins
what went over the wire: the prompts, the requests against `estimate()`, the inputs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from assay import evaluate
from assay.metrics.agent import (
    PlanAdherence,
    StepEfficiency,
    TaskCompletion,
    ToolArgumentCorrectness,
)
from assay.models import llm_factory
from assay.prompts.prompt import load_prompt
from tests.metrics.agent.trajectories import (
    GOAL,
    LOOPS,
    PLAN_STEPS,
    TASKS,
    TOOLS,
    simulated,
    with_shortest,
)
from tests.metrics.loopback import FAST_RETRY
from tests.models.fake_openai import FakeOpenAI, RecordedRequest, dynamic, ok, serve
from tests.simulation.scripted import say, scripted_judge, scripted_user

PROMPTS = ("completion_tasks", "task_completed", "plan_steps", "plan_step_followed")


def prompt_of(request: RecordedRequest) -> str:
    system = str(request.messages[0].get("content", ""))
    found = [p for p in PROMPTS if system.startswith(load_prompt(p).instruction.strip())]
    assert len(found) == 1, system[:200]
    return found[0]


def fenced(request: RecordedRequest, name: str) -> str:
    match = re.search(rf"<{name}>\n(.*?)\n</{name}>", request.last_user_text, re.S)
    assert match, f"no <{name}> input"
    return match.group(1)


def lines(*passed: bool) -> str:
    return "\n".join(f"{i}. {'yes' if p else 'no'}" for i, p in enumerate(passed, start=1))


def evidence_judge(request: RecordedRequest):
    """A judge that reads the run right: searched when a search returned results, booked when a
    tool output says so, confirmed when the agent then said it was booked; the plan's booking
    step was followed when the agent called the booking tool."""
    conversation = fenced(request, "conversation")
    searched = '"results"' in conversation
    booked = '"status": "booked"' in conversation
    confirmed = booked and "AI: Booked:" in conversation
    prompt = prompt_of(request)
    if prompt == "completion_tasks":
        return ok(json.dumps({"tasks": TASKS}))
    if prompt == "plan_steps":
        return ok(json.dumps({"plan": PLAN_STEPS if "AI: Plan:" in conversation else []}))
    items = fenced(request, "items")
    if prompt == "task_completed":
        assert items == f"1. {TASKS[0]}\n2. {TASKS[1]}"
        return ok(lines(searched, booked))
    assert items == "\n".join(f"{i}. {s}" for i, s in enumerate(PLAN_STEPS, start=1))
    # following a plan is doing its steps: an attempted booking that the tool refused was done
    return ok(lines(searched, "book_table(" in conversation, confirmed))


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    yield from serve()


def simulate_all(count: int = 1):
    """Conversations of every scripted agent; the user says the goal, the simulation's judge
    finds it met once a booking is confirmed."""
    user, _ = scripted_user({GOAL: [say(GOAL)]})
    goal_judge, _ = scripted_judge(lambda goal, conversation: '"status": "booked"' in conversation)
    return {
        outcome: simulated(outcome, user, goal_judge, count=count)
        for outcome in ("succeeds", "fails", "loops", "raises")
    }


def test_scores_follow_the_scripted_outcomes(server):
    server.default = dynamic(evidence_judge)
    runs = simulate_all()
    assert runs["succeeds"].counts()["goal_met"] == 1
    assert runs["fails"].counts()["max_turns"] == 1 and runs["loops"].counts()["max_turns"] == 1
    # the agent that raises is its conversation's typed error, and leaves nothing to score
    failed = runs["raises"].errors()
    assert [c.error.error_type for c in failed] == ["AgentError"] and len(
        runs["raises"].dataset
    ) == 0

    order = ("succeeds", "fails", "loops")
    rows = [with_shortest(runs[outcome].dataset[0]) for outcome in order]
    llm = llm_factory(server.model_string("judge"), cache=False, retry=FAST_RETRY)
    metrics = [
        TaskCompletion(),
        PlanAdherence(),
        ToolArgumentCorrectness(tools=TOOLS),
        StepEfficiency(),
    ]
    result = evaluate(rows, metrics, llm=llm, show_progress=False)

    def values(name: str) -> list[float]:
        return [result.outcome(row, name).value for row in range(len(order))]

    assert values("task_completion") == [1.0, 0.5, 0.5]
    assert values("plan_adherence") == pytest.approx([1.0, 2 / 3, 1 / 3])
    assert values("tool_argument_correctness") == pytest.approx([1.0, 1.0, 1 / LOOPS])
    assert values("step_efficiency") == pytest.approx([1.0, 1.0, 1 / LOOPS])
    # the steps behind each number
    failed_tasks = result.outcome(1, "task_completion").details["tasks"]
    assert [t["passed"] for t in failed_tasks] == [True, False]
    looped_plan = result.outcome(2, "plan_adherence").details["steps"]
    assert [s["passed"] for s in looped_plan] == [True, False, False]
    assert result.outcome(2, "step_efficiency").details["loops"] == [
        {"start": 0, "block": 1, "times": LOOPS}
    ]
    # requests: two per row for each judged metric, as their estimates say; nothing unscripted
    prompts = [prompt_of(r) for r in server.chat_requests]
    assert {p: prompts.count(p) for p in PROMPTS} == {p: 3 for p in PROMPTS}
    for metric in metrics[:2]:
        assert result.usage(metric.name).requests == sum(
            metric.estimate(row).requests for row in rows
        )
    assert all(r.status == 200 for r in server.chat_requests)


def test_a_judge_that_fails_is_a_typed_error_outcome(server):
    def broken(request: RecordedRequest):
        if prompt_of(request) == "task_completed":
            return ok("I cannot tell.")
        return evidence_judge(request)

    server.default = dynamic(broken)
    row = with_shortest(simulate_all()["succeeds"].dataset[0])
    llm = llm_factory(server.model_string("judge"), cache=False, retry=FAST_RETRY)
    result = evaluate([row], [TaskCompletion(), PlanAdherence()], llm=llm, show_progress=False)
    outcome = result.outcome(0, "task_completion")
    assert outcome.status == "error" and outcome.error_type == "OutputParseError"
    assert outcome.raw == "I cannot tell."
    assert result.outcome(0, "plan_adherence").value == 1.0  # the other metric is unaffected
