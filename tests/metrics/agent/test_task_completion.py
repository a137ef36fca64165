"""Task completion and plan adherence with scripted verdicts through the real judge path: the
checklist each asks for, the verdicts, the score and the steps reported behind it."""

from __future__ import annotations

import json

import pytest

from assay import evaluate
from assay.errors import OutputParseError, UsageError
from assay.metrics.agent import PlanAdherence, TaskCompletion
from assay.metrics.agent._checklist import checklist_score
from assay.metrics.agent.plan_adherence import plan_adherence_score, recorded_plan
from assay.metrics.agent.task_completion import task_completion_score
from assay.metrics.typical import TYPICAL_MULTI_TURN
from assay.schema import MultiTurnSample
from assay.schema.messages import AIMessage
from tests.metrics.agent.trajectories import PLAN, PLAN_STEPS, TASKS, scripted_run
from tests.metrics.rag.scripted import judge, verdict_lines, verdicts_with_probabilities


def tasks(*items: str) -> str:
    return json.dumps({"tasks": list(items)})


def plan(*steps: str) -> str:
    return json.dumps({"plan": list(steps)})


def test_pure_scores_leave_out_what_the_judge_skipped():
    assert task_completion_score([True, False, None]) == 0.5
    assert plan_adherence_score([True, True, False]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        checklist_score([None, None])


def test_task_completion_judges_each_task_the_user_asked_for():
    llm, provider = judge(tasks(*TASKS), verdict_lines("yes", "no"))
    result = TaskCompletion(llm=llm).score(user_input=scripted_run("fails"))
    assert result.value == 0.5
    assert result.reason == "1 of 2 task(s) done; not done: book a table for two at 8 pm"
    assert result.details["tasks"] == [
        {"task": TASKS[0], "passed": True, "probability": 1.0},
        {"task": TASKS[1], "passed": False, "probability": 0.0},
    ]
    listing, verdicts = provider.requests
    assert listing.output is not None and listing.output.name == "TaskList"
    body = str(verdicts.messages[-1].content)
    # the judge sees the whole run, tool outputs included, and the tasks as a numbered list
    assert 'ToolOutput: {"error": "no table free at 20:00"}' in body
    assert f"<items>\n1. {TASKS[0]}\n2. {TASKS[1]}\n</items>" in body
    assert len(provider.requests) == TaskCompletion().estimate(TYPICAL_MULTI_TURN).requests


def test_task_completion_with_probabilities_skips_and_nothing_asked():
    llm, _ = judge(tasks(*TASKS), verdicts_with_probabilities(0.9, 0.7))
    result = TaskCompletion(llm=llm).score(user_input=scripted_run("succeeds"))
    assert result.value == 1.0
    assert [t["probability"] for t in result.details["tasks"]] == pytest.approx([0.9, 0.7])
    llm, _ = judge(tasks("a", "b", "c"), "1. yes\n3. no")
    skipped = TaskCompletion(llm=llm).score(user_input=scripted_run("succeeds"))
    assert skipped.value == 0.5 and skipped.reason.endswith("; not judged (left out): b")
    assert skipped.details["tasks"][1]["passed"] is None
    llm, _ = judge(tasks())
    outcome = evaluate(
        [MultiTurnSample(user_input=scripted_run("succeeds"))],
        [TaskCompletion(llm=llm)],
        show_progress=False,
    ).outcome(0, "task_completion")
    assert outcome.status == "skipped" and "no task" in outcome.reason


def test_an_unreadable_verdict_is_a_typed_error_outcome():
    llm, _ = judge(tasks(*TASKS), "it depends")
    outcome = evaluate(
        [MultiTurnSample(user_input=scripted_run("succeeds"))],
        [TaskCompletion(llm=llm)],
        show_progress=False,
    ).outcome(0, "task_completion")
    assert outcome.status == "error" and outcome.error_type == "OutputParseError"
    assert outcome.raw == "it depends"
    llm, _ = judge("not json at all", "still not json")
    with pytest.raises(OutputParseError):
        PlanAdherence(llm=llm).score(user_input=scripted_run("succeeds"))


def test_plan_adherence_finds_the_stated_plan_then_judges_each_step():
    llm, provider = judge(plan(*PLAN_STEPS), verdict_lines("yes", "no", "no"))
    result = PlanAdherence(llm=llm).score(user_input=scripted_run("loops"))
    assert result.value == pytest.approx(1 / 3)
    assert result.details["plan_source"] == "stated"
    assert [s["step"] for s in result.details["steps"]] == PLAN_STEPS
    assert result.reason.startswith("1 of 3 planned step(s) followed; not followed: book a table")
    assert f"AI: {PLAN}" in str(provider.requests[0].messages[-1].content)
    assert len(provider.requests) == 2


def test_a_recorded_plan_costs_no_listing_call():
    conversation = scripted_run("succeeds")
    planner = conversation[1].model_copy(update={"metadata": {"plan": PLAN_STEPS}})
    conversation = [conversation[0], planner, *conversation[2:]]
    llm, provider = judge(verdict_lines("yes", "yes", "yes"))
    result = PlanAdherence(llm=llm).score(user_input=conversation)
    assert result.value == 1.0 and result.details["plan_source"] == "recorded"
    assert len(provider.requests) == 1
    sample = MultiTurnSample(user_input=conversation)
    assert PlanAdherence().estimate(sample).requests == 1
    assert (
        PlanAdherence().estimate(MultiTurnSample(user_input=scripted_run("succeeds"))).requests == 2
    )
    assert recorded_plan(scripted_run("succeeds")) is None
    broken = [conversation[0], AIMessage(content="ok", metadata={"plan": "search, book"})]
    with pytest.raises(UsageError, match=r"user_input\[1\]\.metadata\['plan'\] must be a list"):
        recorded_plan(broken)


def test_no_plan_is_skipped_not_scored():
    llm, _ = judge(plan())
    outcome = evaluate(
        [MultiTurnSample(user_input=scripted_run("succeeds"))],
        [PlanAdherence(llm=llm)],
        show_progress=False,
    ).outcome(0, "plan_adherence")
    assert outcome.status == "skipped" and outcome.reason == "the agent stated no plan to adhere to"
