"""Step efficiency: exact repeats, loops, the shortest successful trajectory, and the score."""

from __future__ import annotations

import pytest

from assay import evaluate
from assay.errors import UsageError
from assay.metrics.agent import StepEfficiency
from assay.metrics.agent.step_efficiency import (
    Loop,
    find_loops,
    first_seen,
    step_efficiency_score,
    wasted_steps,
)
from assay.metrics.registry import create_metric
from assay.metrics.typical import TYPICAL_MULTI_TURN
from assay.schema import MultiTurnSample
from assay.schema.messages import AIMessage, HumanMessage, ToolCall
from tests.metrics.agent.trajectories import LOOPS, SHORTEST, scripted_run


def test_pure_maths():
    assert first_seen(list("ABACB")) == [None, None, 0, None, 1]
    assert step_efficiency_score(4, 1) == 0.75
    assert wasted_steps(5, 1, shortest=2) == 3 and step_efficiency_score(5, 1, shortest=2) == 0.4
    # shorter than the reference is not waste (doing too little is scored elsewhere)
    assert step_efficiency_score(1, 0, shortest=3) == 1.0
    # repeats beyond the excess still count
    assert step_efficiency_score(3, 2, shortest=3) == pytest.approx(1 / 3)
    with pytest.raises(ValueError):
        step_efficiency_score(0, 0)


def test_loops_are_found_left_to_right_with_the_block_covering_most():
    assert find_loops(list("AAAB")) == [Loop(0, 1, 3)]
    assert find_loops(list("XABABABY")) == [Loop(1, 2, 3)]
    assert find_loops(list("ABCABCD")) == [Loop(0, 3, 2)]
    assert find_loops(list("AABB")) == [Loop(0, 1, 2), Loop(2, 1, 2)]
    assert find_loops(list("ABCD")) == []
    assert find_loops(list("ABCABC"), max_block=2) == []  # a block longer than the limit
    assert Loop(1, 2, 3).end == 7


def test_the_scripted_agents():
    metric = StepEfficiency()
    success = metric.score(user_input=scripted_run("succeeds"), reference_tool_calls=SHORTEST)
    assert success.value == 1.0 and success.details["loops"] == []
    assert success.reason == (
        "2 call(s), 0 exact repeat(s); the shortest successful trajectory has 2"
    )
    looped = metric.score(user_input=scripted_run("loops"), reference_tool_calls=SHORTEST)
    assert looped.value == pytest.approx(1 / LOOPS)  # LOOPS searches, LOOPS - 1 of them repeats
    assert looped.details["loops"] == [{"start": 0, "block": 1, "times": LOOPS}]
    assert [s["repeats_step"] for s in looped.details["steps"]] == [None] + [0] * (LOOPS - 1)
    assert all(s["loop"] == 0 for s in looped.details["steps"])
    assert f"loop(s): search_restaurants x{LOOPS} from step 0" in looped.reason
    # without the reference: the repeats alone
    assert metric.score(user_input=scripted_run("loops")).value == pytest.approx(1 / LOOPS)


def test_excess_over_the_shortest_trajectory_without_repeats():
    calls = [ToolCall(name="lookup", args={"page": n}) for n in range(5)]
    conversation = [HumanMessage(content="find it"), AIMessage(tool_calls=calls)]
    result = StepEfficiency().score(user_input=conversation, reference_tool_calls=calls[:2])
    assert result.value == pytest.approx(2 / 5)
    assert result.details["repeats"] == 0 and result.details["wasted"] == 3
    assert result.details["shortest"] == 2


def test_no_calls_and_bad_settings():
    chat = [HumanMessage(content="hi"), AIMessage(content="hello")]
    rows = [
        MultiTurnSample(user_input=chat, reference_tool_calls=[]),
        MultiTurnSample(user_input=chat, reference_tool_calls=list(SHORTEST)),
        MultiTurnSample(user_input=chat),
    ]
    result = evaluate(rows, [StepEfficiency()], show_progress=False)
    assert result.outcome(0, "step_efficiency").value == 1.0
    assert result.outcome(1, "step_efficiency").status == "skipped"
    assert "no tool call" in result.outcome(2, "step_efficiency").reason
    with pytest.raises(UsageError, match="max_loop_block must be a positive integer"):
        create_metric("step_efficiency", max_loop_block=0)
    assert StepEfficiency().estimate(TYPICAL_MULTI_TURN).requests == 0


def test_repeatable_tools_are_not_waste():
    draw = ToolCall(name="random.normalvariate", args={"mu": 5, "sigma": 2})
    conversation = [HumanMessage(content="two draws"), AIMessage(tool_calls=[draw, draw])]
    assert StepEfficiency().score(user_input=conversation).value == 0.5
    kept = StepEfficiency(repeatable_tools=("random.normalvariate",)).score(user_input=conversation)
    assert kept.value == 1.0 and kept.details["loops"] == []
    assert [s["repeats_step"] for s in kept.details["steps"]] == [None, None]
