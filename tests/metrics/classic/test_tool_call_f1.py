"""ToolCallF1, with the Ragas documentation scenarios."""

from __future__ import annotations

import pytest

from assay import AIMessage, HumanMessage, MultiTurnSample, ToolCall
from assay.metrics.classic import ToolCallF1

WEATHER = ToolCall(name="weather_check", args={"location": "Paris"})
UV = ToolCall(name="uv_index_lookup", args={"location": "Paris"})
AIR = ToolCall(name="air_quality", args={"location": "Paris"})


def turns(*batches: list[ToolCall]) -> list:
    messages: list = [HumanMessage(content="What's the weather like in Paris today?")]
    for batch in batches:
        messages.append(AIMessage(content="Let me check.", tool_calls=batch))
    return messages


def test_doc_perfect_match_is_one():
    result = ToolCallF1().score(
        user_input=turns([WEATHER], [UV]), reference_tool_calls=[WEATHER, UV]
    )
    assert result.value == 1.0
    assert (result.details["tp"], result.details["fp"], result.details["fn"]) == (2, 0, 0)


def test_doc_extra_call():
    result = ToolCallF1().score(
        user_input=turns([WEATHER], [UV, AIR]), reference_tool_calls=[WEATHER, UV]
    )
    # TP=2, FP=1, FN=0: precision 2/3 (the "0.67" the docs print), recall 1, so
    # F1 = 2 * (2/3) * 1 / (2/3 + 1) = 4/5. The docs' "F1 = 0.67" repeats the precision.
    assert result.details["precision"] == pytest.approx(2 / 3, abs=1e-12)
    assert round(result.details["precision"], 2) == 0.67
    assert result.details["recall"] == 1.0
    assert result.value == pytest.approx(0.8, abs=1e-12)
    assert result.details["unexpected"] == ["air_quality"]


def test_doc_missing_call_is_two_thirds():
    result = ToolCallF1().score(user_input=turns([WEATHER]), reference_tool_calls=[WEATHER, UV])
    # TP=1, FP=0, FN=1: precision 1, recall 1/2, F1 = 2/3.
    assert result.value == pytest.approx(2 / 3, abs=1e-12)
    assert round(result.value, 2) == 0.67
    assert result.details["missing"] == ["uv_index_lookup"]


def test_doc_wrong_argument_is_zero():
    london = ToolCall(name="weather_check", args={"location": "London"})
    result = ToolCallF1().score(user_input=turns([london]), reference_tool_calls=[WEATHER])
    assert result.value == 0.0
    assert (result.details["tp"], result.details["fp"], result.details["fn"]) == (0, 1, 1)


def test_order_does_not_matter():
    assert (
        ToolCallF1()
        .score(user_input=turns([UV], [WEATHER]), reference_tool_calls=[WEATHER, UV])
        .value
        == 1.0
    )


def test_repeated_calls_count_as_extras():
    result = ToolCallF1().score(
        user_input=turns([WEATHER], [WEATHER]), reference_tool_calls=[WEATHER]
    )
    assert (result.details["tp"], result.details["fp"]) == (1, 1)
    assert result.value == pytest.approx(2 * 0.5 * 1 / 1.5, abs=1e-12)


def test_argument_key_order_is_irrelevant_but_values_must_be_equal():
    a = ToolCall(name="f", args={"x": 1, "y": 2})
    b = ToolCall(name="f", args={"y": 2, "x": 1})
    c = ToolCall(name="f", args={"x": 1, "y": 3})
    assert ToolCallF1().score(user_input=turns([b]), reference_tool_calls=[a]).value == 1.0
    assert ToolCallF1().score(user_input=turns([c]), reference_tool_calls=[a]).value == 0.0


def test_empty_sides():
    no_calls = [HumanMessage(content="hi"), AIMessage(content="hello")]
    assert ToolCallF1().score(user_input=no_calls, reference_tool_calls=[WEATHER]).value == 0.0
    assert ToolCallF1().score(user_input=turns([WEATHER]), reference_tool_calls=[]).value == 0.0
    assert ToolCallF1().score(user_input=no_calls, reference_tool_calls=[]).value == 1.0


@pytest.mark.anyio
async def test_scores_a_multi_turn_sample():
    sample = MultiTurnSample(user_input=turns([WEATHER]), reference_tool_calls=[WEATHER, UV])
    assert (await ToolCallF1().ascore_sample(sample)).value == pytest.approx(2 / 3, abs=1e-12)


def test_expecting_no_call_is_scored_not_skipped_in_evaluate():
    from assay import evaluate

    rows = [
        {
            "user_input": [
                {"type": "human", "content": "Just say hi."},
                {"type": "ai", "content": "Hi!"},
            ],
            "reference_tool_calls": [],
        }
    ]
    result = evaluate(rows, ["tool_call_f1", "tool_call_accuracy"], show_progress=False)
    assert result.outcome(0, "tool_call_f1").status == "ok"
    assert result["tool_call_f1"] == [1.0]
    assert result.outcome(0, "tool_call_accuracy").status == "ok"
