"""Agent goal accuracy with and without a reference (the spec's Golden Dragon booking → 1.0)."""

from __future__ import annotations

import json

import pytest

from assay import evaluate
from assay.errors import OutputParseError, UsageError
from assay.metrics.agent import (
    AgentGoalAccuracy,
    AgentGoalAccuracyWithoutReference,
    AgentGoalAccuracyWithReference,
)
from assay.metrics.classic import ToolCallAccuracy, ToolCallF1
from assay.schema import MultiTurnSample
from assay.schema.messages import ToolCall
from tests.metrics.agent.conversations import GOLDEN_DRAGON, GOLDEN_DRAGON_REFERENCE
from tests.metrics.rag.scripted import judge


def goal(
    achieved: int,
    goal_text: str = "Book a table at the best nearby Chinese restaurant for 8 pm.",
    end: str = "A table at Golden Dragon is booked for 8:00pm.",
) -> str:
    return json.dumps({"user_goal": goal_text, "end_state": end, "achieved": achieved})


def test_with_reference_golden_dragon_is_one():
    llm, provider = judge("yes")
    result = AgentGoalAccuracyWithReference(llm=llm).score(
        user_input=GOLDEN_DRAGON, reference=GOLDEN_DRAGON_REFERENCE
    )
    assert result.value == 1.0
    assert result.reason == "goal achieved: yes"
    body = provider.requests[0].messages[-1].content
    assert f"<reference>\n{GOLDEN_DRAGON_REFERENCE}\n</reference>" in body
    # the judge sees the whole workflow, tool calls and tool outputs included
    assert 'AI: [tool call] restaurant_book({"name": "Golden Dragon", "time": "8:00pm"})' in body
    assert "ToolOutput: Table booked at Golden Dragon for 8:00pm." in body
    assert body.index("Human: Hey, book a table") < body.index(
        "Human: Let's go with Golden Dragon."
    )
    assert (
        "yes" in provider.requests[0].messages[0].content.split("Answer with exactly one word:")[1]
    )


def test_with_reference_not_achieved_is_zero():
    llm, _ = judge("no")
    result = AgentGoalAccuracy(llm=llm).score(
        user_input=GOLDEN_DRAGON[:4], reference=GOLDEN_DRAGON_REFERENCE
    )
    assert result.value == 0.0 and result.reason == "goal achieved: no"
    assert AgentGoalAccuracy is AgentGoalAccuracyWithReference


def test_without_reference_golden_dragon_is_one_and_reason_explains():
    llm, provider = judge(goal(1))
    result = AgentGoalAccuracyWithoutReference(llm=llm).score(user_input=GOLDEN_DRAGON)
    assert result.value == 1.0
    assert "Book a table at the best nearby Chinese restaurant" in result.reason
    assert "Golden Dragon is booked for 8:00pm" in result.reason
    assert result.details["achieved"] == 1
    assert "<conversation>" in provider.requests[0].messages[-1].content
    assert "<reference>" not in provider.requests[0].messages[-1].content


def test_without_reference_not_achieved():
    llm, _ = judge(goal(0, end="The assistant only listed restaurants."))
    result = AgentGoalAccuracyWithoutReference(llm=llm).score(user_input=GOLDEN_DRAGON[:4])
    assert result.value == 0.0
    assert "only listed restaurants" in result.reason


def test_without_reference_out_of_range_is_repaired_then_an_error():
    llm, provider = judge(goal(2), goal(1))
    assert AgentGoalAccuracyWithoutReference(llm=llm).score(user_input=GOLDEN_DRAGON).value == 1.0
    assert len(provider.requests) == 2  # one repair turn, no clamping of 2 to 1
    llm, provider = judge(goal(2), goal(3))
    with pytest.raises(OutputParseError):
        AgentGoalAccuracyWithoutReference(llm=llm).score(user_input=GOLDEN_DRAGON)
    assert len(provider.requests) == 2


def test_goal_accuracy_and_tool_call_metrics_share_the_message_model():
    expected = [
        ToolCall(name="restaurant_search", args={"cuisine": "Chinese", "time": "8:00pm"}),
        ToolCall(name="restaurant_book", args={"name": "Golden Dragon", "time": "8:00pm"}),
    ]
    sample = MultiTurnSample(
        user_input=GOLDEN_DRAGON, reference=GOLDEN_DRAGON_REFERENCE, reference_tool_calls=expected
    )
    bare = MultiTurnSample(user_input=GOLDEN_DRAGON)

    def answer(request):
        return goal(1) if request.output is not None else "yes"

    llm, _ = judge(answer, repeat_last=True)
    result = evaluate(
        [sample, bare],
        [
            AgentGoalAccuracyWithReference(),
            AgentGoalAccuracyWithoutReference(),
            ToolCallAccuracy(),
            ToolCallF1(),
        ],
        llm=llm,
        show_progress=False,
    )
    assert result.outcome(0, "agent_goal_accuracy").value == 1.0
    assert result.outcome(0, "agent_goal_accuracy_without_reference").value == 1.0
    assert result.outcome(0, "tool_call_accuracy").value == 1.0
    assert result.outcome(0, "tool_call_f1").value == 1.0
    # the second conversation has no reference: skipped, not guessed
    assert result.outcome(1, "agent_goal_accuracy").status == "skipped"
    assert result.outcome(1, "agent_goal_accuracy_without_reference").value == 1.0
    with pytest.raises(UsageError):
        evaluate(
            [{"user_input": "q", "reference": "r"}],
            [AgentGoalAccuracyWithReference()],
            llm=llm,
            show_progress=False,
        )


def test_unusable_verdict_is_an_error_outcome():
    llm, _ = judge("probably")
    outcome = evaluate(
        [MultiTurnSample(user_input=GOLDEN_DRAGON, reference=GOLDEN_DRAGON_REFERENCE)],
        [AgentGoalAccuracyWithReference()],
        llm=llm,
        show_progress=False,
    ).outcome(0, "agent_goal_accuracy")
    assert outcome.status == "error" and outcome.error_type == "OutputParseError"
    assert outcome.raw == "probably"
