"""Trace JSON to trajectories (#43 §2), shape by shape: a traced-function agent with no LLM call,
Anthropic's content blocks, the Responses API's items, the legacy indexed GenAI attributes,
history the application trimmed, sessions and export files; bad input named by field and row.
(The real SDK and a real server are in tests/platform/test_trajectory_*.py.)"""

from __future__ import annotations

import json

import pytest

from assay import ToolCallAccuracy, evaluate
from assay.errors import DataError, UsageError
from assay.integrations.trajectory import (
    group_sessions,
    load_traces,
    session_id_of,
    to_conversation,
    trace_to_sample,
    traces_to_dataset,
)
from assay.schema.messages import AIMessage, HumanMessage, ToolCall, ToolMessage


def span(ident, kind, *, parent=None, start=0, name="s", input=None, output=None, **extra):
    return {
        "id": ident,
        "parent_id": parent,
        "name": name,
        "kind": kind,
        "started_at": f"2026-01-01T00:00:{start:02d}+00:00",
        "ended_at": f"2026-01-01T00:00:{start + 1:02d}+00:00",
        "input": input,
        "output": output,
        "error": extra.pop("error", None),
        "attributes": extra.pop("attributes", {}),
    }


def trace(*spans, ident="t1", input=None, output=None, metadata=None, created=0):
    return {
        "id": ident,
        "created_at": f"2026-01-01T00:{created:02d}:00+00:00",
        "input": input,
        "output": output,
        "metadata": metadata or {},
        "spans": list(spans),
    }


def kinds(sample):
    return [type(m).__name__[0] for m in sample.user_input]  # H, A, T


def test_a_traced_function_agent_without_llm_calls_is_input_tools_output():
    got = trace_to_sample(
        trace(
            span("r", "function", name="agent", input={"question": "Ship order 7"}, output="Done."),
            span("a", "function", parent="r", start=1, name="Shop.lookup",
                 input={"self": "<Shop>", "order": 7}, output={"status": "paid"}),
            span("h", "function", parent="a", start=2, name="helper", input={"x": 1}, output=2),
            span("b", "function", parent="r", start=3, name="ship", input={"order": 7},
                 error="TimeoutError: carrier down"),
            input="Ship order 7",
            output="Done.",
        )
    )  # fmt: skip
    assert kinds(got) == ["H", "A", "T", "A", "T", "A"]
    assert got.tool_calls() == [
        ToolCall(name="lookup", args={"order": 7}),  # `self` left out; the helper is the tool's
        ToolCall(name="ship", args={"order": 7}),
    ]
    assert got.user_input[2].content == '{"status": "paid"}'
    assert got.user_input[4].content == "error: TimeoutError: carrier down"
    assert got.user_input[4].metadata == {"error": "TimeoutError: carrier down"}
    assert got.user_input[5].content == "Done."


def test_anthropic_blocks_give_calls_and_outputs():
    sent = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Oslo"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "snow"}]},
        ]},
    ]  # fmt: skip
    got = trace_to_sample(trace(span("l", "llm", input=sent, output="Snow in Oslo.")))
    assert kinds(got) == ["H", "A", "T", "A"]
    assert got.user_input[1] == AIMessage(
        content="Checking.", tool_calls=[ToolCall(name="weather", args={"city": "Oslo"})]
    )
    assert got.user_input[2] == ToolMessage(content="snow")


def test_responses_api_items_are_read_by_the_openai_agents_converter():
    sent = [
        {"role": "user", "content": "Add 2 and 3"},
        {"type": "function_call", "call_id": "c", "name": "add", "arguments": '{"a": 2, "b": 3}'},
        {"type": "function_call_output", "call_id": "c", "output": "5"},
    ]
    got = trace_to_sample(trace(span("l", "llm", input=sent, output="5.")))
    assert kinds(got) == ["H", "A", "T", "A"] and got.user_input[3].content == "5."
    assert got.tool_calls() == [ToolCall(name="add", args={"a": 2, "b": 3})]


def test_legacy_indexed_genai_attributes():
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "Price of AAPL?",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.tool_calls.0.name": "quote",
        "gen_ai.completion.0.tool_calls.0.arguments": '{"symbol": "AAPL"}',
    }
    got = trace_to_sample(trace(span("l", "llm", attributes=attributes)))
    assert kinds(got) == ["H", "A"]
    assert got.user_input[1].tool_calls == [ToolCall(name="quote", args={"symbol": "AAPL"})]


def test_trimmed_history_adds_only_what_is_new_and_orphan_outputs_are_dropped():
    first = [{"role": "user", "content": "Hi"}]
    second = [  # the application kept only the last answer and a tool output of an older call
        {"role": "tool", "content": "stale output"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "Bye"},
    ]
    got = trace_to_sample(
        trace(span("a", "llm", input=first, output="Hello!"),
              span("b", "llm", start=2, input=second, output="Goodbye!"))
    )  # fmt: skip
    assert [m.content for m in got.user_input] == ["Hi", "Hello!", "Bye", "Goodbye!"]


def test_sessions_join_in_time_order_and_group_by_their_ids():
    t1 = trace(
        span("a", "llm", input=[{"role": "user", "content": "Q1"}], output="A1"),
        ident="t1",
        metadata={"session_id": "s"},
        created=1,
    )
    t2 = trace(
        span(
            "b",
            "llm",
            input=[
                {"role": "user", "content": "Q1"},
                {"role": "assistant", "content": "A1"},
                {"role": "user", "content": "Q2"},
            ],
            output="A2",
        ),
        ident="t2",
        metadata={"session_id": "s"},
        created=2,
    )
    alone = trace(span("c", "llm", input="Q", output="A"), ident="t3", created=3)
    joined = to_conversation([t2, t1])
    assert [m.content for m in joined.user_input] == ["Q1", "A1", "Q2", "A2"]
    assert joined.metadata is not None and joined.metadata["trace_ids"] == ["t1", "t2"]
    assert session_id_of(alone) is None
    assert list(group_sessions([alone, t2, t1])) == ["s", "trace:t3"]
    dataset = traces_to_dataset([t1, t2, alone], by="session")
    assert [len(s.user_input) for s in dataset] == [4, 2]
    with pytest.raises(DataError, match="2 sessions"):
        to_conversation([t1, {**t2, "metadata": {"session_id": "other"}}])


def test_an_export_file_feeds_evaluate(tmp_path):
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "search", "arguments": '{"q": "x"}'}}
    ]}  # fmt: skip
    sent = [{"role": "user", "content": "Find x"}, call, {"role": "tool", "content": "x found"}]
    one = trace(span("l", "llm", input=sent, output="Found."), ident="e1")
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(one) + "\n\n", encoding="utf-8")
    dataset = traces_to_dataset(load_traces(path))
    for sample in dataset:
        sample.reference_tool_calls = [ToolCall(name="search", args={"q": "x"})]
    result = evaluate(dataset, metrics=[ToolCallAccuracy()], show_progress=False)
    assert result["tool_call_accuracy"] == [1.0]
    (tmp_path / "page.json").write_text(json.dumps({"items": [one]}), encoding="utf-8")
    assert load_traces(tmp_path / "page.json")[0]["id"] == "e1"


def test_bad_input_is_named():
    with pytest.raises(DataError, match="must be a dict"):
        trace_to_sample(["not", "a", "trace"])
    with pytest.raises(DataError, match="'spans' must be a list"):
        trace_to_sample({"id": "x", "spans": "nope"})
    with pytest.raises(DataError, match="holds no conversation"):
        trace_to_sample(trace(ident="empty"))
    with pytest.raises(UsageError, match="by must be"):
        traces_to_dataset([], by="turn")  # type: ignore[arg-type]  # the mistake under test
    with pytest.raises(UsageError, match="no traces given"):
        to_conversation([])


def test_bad_export_lines_are_named(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"id": "a", "spans": []}\n{oops\n', encoding="utf-8")
    with pytest.raises(DataError, match="row 2"):
        load_traces(path)
    path.write_text('["a"]', encoding="utf-8")
    path = path.rename(tmp_path / "t.json")
    with pytest.raises(DataError, match="row 1: a trace must be a JSON object"):
        load_traces(path)
    with pytest.raises(UsageError, match="does not exist"):
        load_traces(tmp_path / "missing.jsonl")


def test_an_image_part_is_kept_as_a_placeholder():
    sent = [{"role": "user", "content": [
        {"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": {"url": "u"}},
    ]}]  # fmt: skip
    got = trace_to_sample(trace(span("l", "llm", input=sent, output="A cat.")))
    assert got.user_input[0] == HumanMessage(content="What is this?[image_url part]")


def test_openinference_contents_events_and_a_raw_response_as_output():
    contents = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.contents.0.message_content.type": "text",
        "llm.input_messages.0.message.contents.0.message_content.text": "Hi ",
        "llm.input_messages.0.message.contents.1.message_content.text": "there",
    }
    raw = {"choices": [{"message": {"role": "assistant", "content": "Hello!"}}]}
    events = {
        "gen_ai.operation.name": "chat",
        "otel.events": [
            {"name": "gen_ai.user.message", "attributes": {"content": "Sum 1 and 2"}},
            {
                "name": "gen_ai.choice",
                "attributes": {
                    "message": json.dumps(
                        {
                            "role": "assistant",
                            "tool_calls": [
                                {"function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}
                            ],
                        }
                    )
                },
            },
        ],
    }
    got = trace_to_sample(trace(span("l", "llm", output=raw, attributes=contents)))
    assert [m.content for m in got.user_input] == ["Hi there", "Hello!"]
    got = trace_to_sample(trace(span("l", "llm", attributes=events)))
    assert got.user_input[0] == HumanMessage(content="Sum 1 and 2")
    assert got.tool_calls() == [ToolCall(name="add", args={"a": 1, "b": 2})]


def test_arguments_that_are_not_a_json_object_are_kept_raw():
    call = {"type": "function", "function": {"name": "run", "arguments": "ls -la"}}
    got = trace_to_sample(trace(span("l", "llm", input="List files", output=[call])))
    assert got.tool_calls() == [ToolCall(name="run", args={"_raw": "ls -la"})]
