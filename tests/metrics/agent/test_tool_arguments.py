"""Tool-argument correctness: schema problems and reference values per call, the pairing of calls
with reference calls, the score, and what it refuses."""

from __future__ import annotations

import sys

import pytest

from assay import evaluate
from assay.errors import MissingDependency, UsageError
from assay.metrics.agent import ToolArgumentCorrectness
from assay.metrics.agent.tool_arguments import (
    pair_with_reference,
    same_value,
    tool_argument_score,
    tool_schemas,
)
from assay.metrics.registry import create_metric
from assay.metrics.typical import TYPICAL_MULTI_TURN
from assay.schema import MultiTurnSample
from assay.schema.messages import AIMessage, HumanMessage, ToolCall
from tests.metrics.agent.trajectories import BOOK, SEARCH, SHORTEST, TOOLS, scripted_run


def conversation(*calls: ToolCall) -> list:
    return [
        HumanMessage(content="Book Da Gino for two at 8 pm."),
        AIMessage(tool_calls=list(calls)),
    ]


def test_pure_score_and_value_comparison():
    assert tool_argument_score([True, False, True, True]) == 0.75
    with pytest.raises(ValueError):
        tool_argument_score([])
    assert (
        same_value(5, 5.0)
        and same_value(75, "75")
        and same_value({"a": 1, "b": 2}, {"b": 2, "a": 1})
    )
    assert not same_value(True, 1)  # a boolean is not the number 1
    assert not same_value("20:00", "8 pm")


def test_parallel_calls_pair_with_the_calls_they_match_not_by_position():
    made = [
        ToolCall(name="weather", args={"city": "Oslo"}),
        ToolCall(name="weather", args={"city": "Rome"}),
    ]
    reference = [
        ToolCall(name="weather", args={"city": "Rome"}),
        ToolCall(name="weather", args={"city": "Oslo"}),
    ]
    assert pair_with_reference(made, reference) == [1, 0]
    # a call matching none exactly still pairs with the unused call of its tool sharing most values
    made = [
        ToolCall(name="book_table", args={"restaurant": "Da Gino", "people": 3, "time": "20:00"})
    ]
    assert pair_with_reference(made, [SEARCH, BOOK]) == [1]
    assert pair_with_reference([SEARCH, SEARCH], [SEARCH]) == [0, None]


def test_a_right_trajectory_scores_one_with_every_step_reported():
    metric = ToolArgumentCorrectness(tools=TOOLS)
    result = metric.score(user_input=scripted_run("succeeds"), reference_tool_calls=SHORTEST)
    assert result.value == 1.0
    assert [s["tool"] for s in result.details["steps"]] == ["search_restaurants", "book_table"]
    assert all(s["correct"] and s["problems"] == [] for s in result.details["steps"])
    assert result.details["checked_against"] == ["schema", "reference"]
    assert result.reason == "2 of 2 call(s) with correct arguments"


def test_schema_problems_name_the_argument_and_the_rule():
    bad = ToolCall(
        name="book_table",
        args={"restaurant": "Da Gino", "people": "two", "time": "8pm", "vip": True},
    )
    result = ToolArgumentCorrectness(tools=TOOLS).score(user_input=conversation(SEARCH, bad))
    assert result.value == 0.5
    step = result.details["steps"][1]
    assert step["correct"] is False and step["reference_step"] is None
    problems = " | ".join(step["problems"])
    assert "people: 'two' is not of type 'integer'" in problems
    assert "time: '8pm' does not match" in problems
    assert "'vip' was unexpected" in problems
    assert result.reason.startswith("1 of 2 call(s) with correct arguments; step 1 (book_table):")
    missing = ToolCall(name="book_table", args={"restaurant": "Da Gino"})
    result = ToolArgumentCorrectness(tools=TOOLS).score(user_input=conversation(missing))
    assert "'people' is a required property" in result.details["steps"][0]["problems"]
    unknown = ToolArgumentCorrectness(tools=TOOLS).score(
        user_input=conversation(ToolCall(name="cancel_table", args={}))
    )
    assert unknown.value == 0.0
    assert unknown.details["steps"][0]["problems"] == [
        "unknown tool 'cancel_table': no schema for it"
    ]


def test_values_are_compared_with_the_paired_reference_call_and_extra_calls_count_as_wrong():
    wrong_time = ToolCall(
        name="book_table", args={"restaurant": "Da Gino", "people": 2, "time": "21:00"}
    )
    result = ToolArgumentCorrectness().score(
        user_input=conversation(SEARCH, wrong_time, SEARCH), reference_tool_calls=SHORTEST
    )
    assert result.value == pytest.approx(1 / 3)
    steps = result.details["steps"]
    assert steps[1]["problems"] == ['time: "21:00" where the reference has "20:00"']
    assert steps[2]["problems"] == ["no reference call to 'search_restaurants' left to pair with"]
    assert result.details["checked_against"] == ["reference"]
    # a reference call never made is listed, not scored: that is tool selection, not arguments
    only_search = ToolArgumentCorrectness().score(
        user_input=conversation(SEARCH), reference_tool_calls=SHORTEST
    )
    assert only_search.value == 1.0
    assert only_search.details["missing"] == [
        {"reference_step": 1, "tool": "book_table", "args": BOOK.args}
    ]
    assert "1 reference call(s) not made (not scored here)" in only_search.reason
    # arguments the reference leaves out are not compared; a reference argument left out is wrong
    extra = ToolCall(
        name="search_restaurants", args={"city": "Turin", "cuisine": "Italian", "open": True}
    )
    assert (
        ToolArgumentCorrectness()
        .score(user_input=conversation(extra), reference_tool_calls=[SEARCH])
        .value
        == 1.0
    )
    short = ToolCall(name="search_restaurants", args={"city": "Turin"})
    result = ToolArgumentCorrectness().score(
        user_input=conversation(short), reference_tool_calls=[SEARCH]
    )
    assert result.details["steps"][0]["problems"] == [
        'cuisine: missing (the reference has "Italian")'
    ]


def test_tools_as_function_definitions_and_per_row_through_evaluate():
    functions = [
        {"type": "function", "function": {"name": name, "parameters": schema}}
        for name, schema in TOOLS.items()
    ]
    assert tool_schemas(functions) == TOOLS
    assert tool_schemas([{"name": "ping"}]) == {"ping": {"type": "object"}}
    bad = ToolCall(name="book_table", args={"restaurant": "Da Gino", "people": 0, "time": "20:00"})
    rows = [
        MultiTurnSample(user_input=conversation(SEARCH, BOOK), metadata={"tools": functions}),
        MultiTurnSample(user_input=conversation(SEARCH, bad), metadata={"tools": TOOLS}),
        MultiTurnSample(user_input=conversation(SEARCH)),  # nothing to check against
        MultiTurnSample(user_input=[HumanMessage(content="hi")], metadata={"tools": TOOLS}),
        MultiTurnSample(
            user_input=conversation(SEARCH), metadata={"tools": {"search_restaurants": 3}}
        ),
    ]
    result = evaluate(rows, [ToolArgumentCorrectness()], show_progress=False)
    assert result.outcome(0, "tool_argument_correctness").value == 1.0
    second = result.outcome(1, "tool_argument_correctness")
    assert second.value == 0.5
    assert second.details["steps"][1]["problems"] == ["people: 0 is less than the minimum of 1"]
    assert result.outcome(2, "tool_argument_correctness").status == "skipped"
    assert "tool schemas" in result.outcome(2, "tool_argument_correctness").reason
    assert result.outcome(3, "tool_argument_correctness").status == "skipped"
    broken = result.outcome(4, "tool_argument_correctness")
    assert broken.status == "error"
    assert "the row's tools['search_restaurants'] must be a JSON Schema" in broken.message


def test_bad_configuration_is_refused_when_the_metric_is_made():
    with pytest.raises(UsageError, match=r"tools\['book_table'\] is not a valid JSON Schema"):
        ToolArgumentCorrectness(tools={"book_table": {"type": "no-such-type"}})
    with pytest.raises(UsageError, match=r"tools\[1\] must be a function definition"):
        ToolArgumentCorrectness(tools=[{"name": "a"}, {"parameters": {}}])
    with pytest.raises(UsageError, match="tools must be a dict"):
        ToolArgumentCorrectness(tools="search_restaurants")  # type: ignore[arg-type]  # the wrong type on purpose
    with pytest.raises(UsageError, match="tool_argument_correctness"):
        create_metric("tool_argument_correctness", tools={"x": {"type": 5}})


def test_without_jsonschema_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # an import of it now fails
    with pytest.raises(MissingDependency, match=r"pip install 'assay\[agents\]'"):
        ToolArgumentCorrectness(tools=TOOLS)
    # with only a reference it needs no schema library
    result = ToolArgumentCorrectness().score(
        user_input=conversation(SEARCH), reference_tool_calls=[SEARCH]
    )
    assert result.value == 1.0


def test_no_model_calls_and_listed_by_id():
    metric = create_metric("tool_argument_correctness")
    assert metric.estimate(TYPICAL_MULTI_TURN).requests == 0 and not metric.needs_llm
    assert metric.required_fields == ("user_input",)
    assert set(metric.optional_fields) == {"reference_tool_calls", "tools"}
