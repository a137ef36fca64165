"""ToolCallAccuracy, with the Ragas documentation scenarios."""

from __future__ import annotations

import json

import pytest
from rapidfuzz.distance import Levenshtein

from assay import AIMessage, HumanMessage, MultiTurnSample, ToolCall, ToolMessage, UsageError
from assay.metrics.classic import ExactMatch, NonLLMStringSimilarity, ToolCallAccuracy


def conversation(*calls: ToolCall) -> list:
    """A user turn, then one assistant turn per call (as agents usually produce them)."""
    messages: list = [HumanMessage(content="Please help.")]
    for call in calls:
        messages += [
            AIMessage(content="Calling a tool.", tool_calls=[call]),
            ToolMessage(content="ok"),
        ]
    return messages


def test_doc_basic_usage_is_one():
    user_input = [
        HumanMessage(content="What's the weather like in New York right now?"),
        AIMessage(
            content="The current temperature in New York is 75°F and it's partly cloudy.",
            tool_calls=[ToolCall(name="weather_check", args={"location": "New York"})],
        ),
        HumanMessage(content="Can you translate that to Celsius?"),
        AIMessage(
            content="Let me convert that to Celsius for you.",
            tool_calls=[
                ToolCall(name="temperature_conversion", args={"temperature_fahrenheit": 75})
            ],
        ),
    ]
    reference = [
        ToolCall(name="weather_check", args={"location": "New York"}),
        ToolCall(name="temperature_conversion", args={"temperature_fahrenheit": 75}),
    ]
    result = ToolCallAccuracy().score(user_input=user_input, reference_tool_calls=reference)
    assert result.value == 1.0
    assert result.details["argument_scores"] == [1.0, 1.0]


def test_doc_partial_argument_match_is_two_thirds():
    made = ToolCall(name="search", args={"query": "python", "limit": 10, "sort": "relevance"})
    expected = ToolCall(name="search", args={"query": "python", "limit": 10, "sort": "date"})
    result = ToolCallAccuracy().score(
        user_input=conversation(made), reference_tool_calls=[expected]
    )
    assert result.value == pytest.approx(2 / 3, abs=1e-12)
    assert int(result.value * 100) == 66  # the docs print 0.66
    assert "2 of 3" in result.reason


def test_doc_wrong_order_in_strict_mode_is_zero_and_flexible_mode_accepts_it():
    search = ToolCall(name="search", args={"query": "python"})
    filter_ = ToolCall(name="filter", args={"field": "year"})
    strict = ToolCallAccuracy().score(
        user_input=conversation(filter_, search), reference_tool_calls=[search, filter_]
    )
    assert strict.value == 0.0
    assert strict.details["aligned"] is False
    assert "sequence" in strict.reason
    flexible = ToolCallAccuracy(strict_order=False).score(
        user_input=conversation(filter_, search), reference_tool_calls=[search, filter_]
    )
    assert flexible.value == 1.0


def test_doc_flexible_order_parallel_calls_is_one():
    user_input = [
        HumanMessage(content="Get weather for Paris and London"),
        AIMessage(
            content="Fetching weather data...",
            tool_calls=[
                ToolCall(name="weather_check", args={"location": "London"}),
                ToolCall(name="weather_check", args={"location": "Paris"}),
            ],
        ),
    ]
    reference = [
        ToolCall(name="weather_check", args={"location": "Paris"}),
        ToolCall(name="weather_check", args={"location": "London"}),
    ]
    assert (
        ToolCallAccuracy(strict_order=False)
        .score(user_input=user_input, reference_tool_calls=reference)
        .value
        == 1.0
    )
    # In strict order the names still line up, but each call has the other city: 0 of 1 args.
    assert (
        ToolCallAccuracy().score(user_input=user_input, reference_tool_calls=reference).value == 0.0
    )


def test_missing_or_extra_calls_misalign_the_sequence():
    a, b = ToolCall(name="a", args={}), ToolCall(name="b", args={})
    assert (
        ToolCallAccuracy().score(user_input=conversation(a), reference_tool_calls=[a, b]).value
        == 0.0
    )
    assert (
        ToolCallAccuracy()
        .score(user_input=conversation(a, b, b), reference_tool_calls=[a, b])
        .value
        == 0.0
    )
    assert (
        ToolCallAccuracy().score(user_input=conversation(a, b), reference_tool_calls=[a, b]).value
        == 1.0
    )


def test_no_calls():
    call = ToolCall(name="a", args={"x": 1})
    no_calls = [HumanMessage(content="hi"), AIMessage(content="hello")]
    assert ToolCallAccuracy().score(user_input=no_calls, reference_tool_calls=[call]).value == 0.0
    assert (
        ToolCallAccuracy().score(user_input=conversation(call), reference_tool_calls=[]).value
        == 0.0
    )
    both_empty = ToolCallAccuracy().score(user_input=no_calls, reference_tool_calls=[])
    assert both_empty.value == 1.0


def test_argument_rules():
    expected = ToolCall(name="convert", args={"amount": 75, "unit": "F"})
    metric = ToolCallAccuracy()
    # Values compare as text, so 75 and "75" agree; extra arguments are not penalised.
    loose = ToolCall(name="convert", args={"amount": "75", "unit": "F", "precision": 2})
    assert (
        metric.score(user_input=conversation(loose), reference_tool_calls=[expected]).value == 1.0
    )
    # A missing argument contributes nothing.
    partial = ToolCall(name="convert", args={"amount": 75})
    assert (
        metric.score(user_input=conversation(partial), reference_tool_calls=[expected]).value == 0.5
    )
    # A call expected without arguments must be made without arguments.
    bare = ToolCall(name="ping", args={})
    with_args = ToolCall(name="ping", args={"host": "x"})
    assert (
        metric.score(user_input=conversation(with_args), reference_tool_calls=[bare]).value == 0.0
    )
    # Nested values compare regardless of dict key order.
    nested = ToolCall(name="q", args={"filter": {"a": 1, "b": 2}})
    reordered = ToolCall(name="q", args={"filter": {"b": 2, "a": 1}})
    assert (
        metric.score(user_input=conversation(reordered), reference_tool_calls=[nested]).value == 1.0
    )


def test_custom_argument_comparison_metric():
    made = ToolCall(name="search", args={"query": "python", "limit": 10, "sort": "relevance"})
    expected = ToolCall(name="search", args={"query": "python", "limit": 10, "sort": "date"})
    metric = ToolCallAccuracy(arg_comparison_metric=NonLLMStringSimilarity())
    result = metric.score(user_input=conversation(made), reference_tool_calls=[expected])
    partial = 1 - Levenshtein.distance("relevance", "date") / len("relevance")
    assert result.value == pytest.approx((1 + 1 + partial) / 3, abs=1e-12)
    assert 2 / 3 < result.value < 1
    spec = json.loads(json.dumps(metric.spec()))
    assert spec["params"]["arg_comparison_metric"]["name"] == "non_llm_string_similarity"
    # ExactMatch as the comparison reproduces the default behaviour.
    exact = ToolCallAccuracy(arg_comparison_metric=ExactMatch())
    assert exact.score(
        user_input=conversation(made), reference_tool_calls=[expected]
    ).value == pytest.approx(2 / 3, abs=1e-12)


def test_invalid_comparison_metric_is_rejected():
    with pytest.raises(UsageError, match="arg_comparison_metric"):
        ToolCallAccuracy(arg_comparison_metric="exact")


def test_dict_inputs_are_accepted():
    user_input = [
        {"type": "human", "content": "weather?"},
        {
            "type": "ai",
            "content": "",
            "tool_calls": [{"name": "weather_check", "args": {"location": "Paris"}}],
        },
    ]
    reference = [{"name": "weather_check", "args": {"location": "Paris"}}]
    assert (
        ToolCallAccuracy().score(user_input=user_input, reference_tool_calls=reference).value == 1.0
    )


@pytest.mark.anyio
async def test_scores_a_multi_turn_sample():
    made = ToolCall(name="search", args={"query": "python", "limit": 10, "sort": "relevance"})
    sample = MultiTurnSample(
        user_input=conversation(made),
        reference_tool_calls=[
            ToolCall(name="search", args={"query": "python", "limit": 10, "sort": "date"})
        ],
    )
    metric = ToolCallAccuracy()
    assert metric.sample_kind == "multi_turn" and metric.accepts(sample)
    assert (await metric.ascore_sample(sample)).value == pytest.approx(2 / 3, abs=1e-12)
    assert await metric.multi_turn_ascore(sample) == pytest.approx(2 / 3, abs=1e-12)
