"""AG-UI event streams -> assay messages, with the real `ag_ui.core` event types."""

from __future__ import annotations

import pytest
from ag_ui.core import (
    AssistantMessage,
    FunctionCall,
    MessagesSnapshotEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateSnapshotEvent,
    StepStartedEvent,
    SystemMessage,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallChunkEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    UserMessage,
)
from ag_ui.core import ToolCall as AGUIToolCall
from ag_ui.core import ToolMessage as AGUIToolMessage

from assay import AIMessage, DataError, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
from assay.integrations.ag_ui import (
    AgentRunFailed,
    AGUIEventCollector,
    convert_messages_snapshot,
    convert_messages_to_ag_ui,
    convert_to_ragas_messages,
    extract_contexts,
    extract_response,
    extract_tool_calls,
)


def weather_events() -> list:
    return [
        RunStartedEvent(thread_id="th-1", run_id="run-1"),
        StepStartedEvent(step_name="agent"),
        TextMessageStartEvent(message_id="m1", role="assistant"),
        TextMessageContentEvent(message_id="m1", delta="Hello!"),
        TextMessageEndEvent(message_id="m1"),
        ToolCallStartEvent(tool_call_id="c1", tool_call_name="get_weather", parent_message_id="m1"),
        ToolCallArgsEvent(tool_call_id="c1", delta='{"loca'),
        ToolCallArgsEvent(tool_call_id="c1", delta='tion": "SF"}'),
        ToolCallEndEvent(tool_call_id="c1"),
        ToolCallResultEvent(
            message_id="t1", tool_call_id="c1", content="Sunny, 72F in San Francisco"
        ),
        StateSnapshotEvent(snapshot={"city": "SF"}),
        TextMessageStartEvent(message_id="m2", role="assistant"),
        TextMessageContentEvent(message_id="m2", delta="The weather "),
        TextMessageContentEvent(message_id="m2", delta="is sunny."),
        TextMessageEndEvent(message_id="m2"),
        RunFinishedEvent(thread_id="th-1", run_id="run-1"),
    ]


WEATHER = [
    AIMessage(content="Hello!", tool_calls=[ToolCall(name="get_weather", args={"location": "SF"})]),
    ToolMessage(content="Sunny, 72F in San Francisco"),
    AIMessage(content="The weather is sunny."),
]


def test_a_streamed_run_converts_and_the_extractors_read_it():
    messages = convert_to_ragas_messages(weather_events())
    assert messages == WEATHER
    assert extract_response(messages) == "Hello! The weather is sunny."
    assert extract_tool_calls(messages) == [ToolCall(name="get_weather", args={"location": "SF"})]
    assert extract_contexts(messages) == ["Sunny, 72F in San Francisco"]
    MultiTurnSample(user_input=[HumanMessage(content="Weather in SF?"), *messages])


def test_wire_json_dicts_convert_like_the_event_objects():
    wire = [event.model_dump(mode="json", by_alias=True) for event in weather_events()]
    assert wire[5]["toolCallId"] == "c1"  # camelCase, as on the wire
    assert convert_to_ragas_messages(wire) == WEATHER


def test_metadata_keeps_run_thread_message_and_call_ids():
    messages = convert_to_ragas_messages(weather_events(), metadata=True)
    assert messages[0].metadata == {
        "message_id": "m1",
        "run_id": "run-1",
        "thread_id": "th-1",
        "tool_call_ids": ["c1"],
    }
    assert messages[1].metadata == {
        "message_id": "t1",
        "run_id": "run-1",
        "thread_id": "th-1",
        "tool_call_id": "c1",
    }


def test_interleaved_tool_calls_keep_start_order_and_results_follow_their_turn():
    events = [
        ToolCallStartEvent(tool_call_id="a", tool_call_name="search"),
        ToolCallStartEvent(tool_call_id="b", tool_call_name="lookup"),
        ToolCallArgsEvent(tool_call_id="b", delta='{"id": 7}'),
        ToolCallArgsEvent(tool_call_id="a", delta='{"q": "x"}'),
        ToolCallEndEvent(tool_call_id="b"),
        ToolCallEndEvent(tool_call_id="a"),
        TextMessageStartEvent(message_id="m", role="assistant"),
        TextMessageContentEvent(message_id="m", delta="Working on it."),
        TextMessageEndEvent(message_id="m"),
        ToolCallResultEvent(message_id="r1", tool_call_id="b", content="seven"),
        ToolCallResultEvent(message_id="r2", tool_call_id="a", content="ex"),
    ]
    assert convert_to_ragas_messages(events) == [
        AIMessage(
            content="",
            tool_calls=[
                ToolCall(name="search", args={"q": "x"}),
                ToolCall(name="lookup", args={"id": 7}),
            ],
        ),
        ToolMessage(content="seven"),
        ToolMessage(content="ex"),
        AIMessage(content="Working on it."),
    ]


def test_chunk_events_build_messages_and_calls():
    events = [
        TextMessageChunkEvent(message_id="m1", role="assistant", delta="Hel"),
        TextMessageChunkEvent(delta="lo"),
        ToolCallChunkEvent(
            tool_call_id="c1", tool_call_name="add", parent_message_id="m1", delta='{"a":'
        ),
        ToolCallChunkEvent(tool_call_id="c1", delta=" 1}"),
        ToolCallResultEvent(message_id="r", tool_call_id="c1", content="2"),
        TextMessageChunkEvent(message_id="m2", delta="Done"),
    ]
    assert convert_to_ragas_messages(events) == [
        AIMessage(content="Hello", tool_calls=[ToolCall(name="add", args={"a": 1})]),
        ToolMessage(content="2"),
        AIMessage(content="Done"),
    ]
    collector = AGUIEventCollector()  # reading mid-stream leaves a chunked message open
    for event in events[:2]:
        collector.process_event(event)
    assert collector.get_messages() == [AIMessage(content="Hello")]
    for event in events[2:]:
        collector.process_event(event)
    assert collector.get_messages()[0].tool_calls == [ToolCall(name="add", args={"a": 1})]


def test_a_run_error_is_a_typed_failure_naming_the_run():
    events = [
        RunStartedEvent(thread_id="th", run_id="run-9"),
        TextMessageStartEvent(message_id="m", role="assistant"),
        RunErrorEvent(message="model quota exceeded", code="quota"),
    ]
    with pytest.raises(AgentRunFailed) as caught:
        convert_to_ragas_messages(events)
    assert (caught.value.run, caught.value.code, caught.value.index) == ("run-9", "quota", 2)
    assert "run run-9 failed (event 2) [quota]: model quota exceeded" in str(caught.value)


def test_arguments_that_are_not_json_name_the_start_event():
    events = [
        TextMessageStartEvent(message_id="m", role="assistant"),
        TextMessageEndEvent(message_id="m"),
        ToolCallStartEvent(tool_call_id="c1", tool_call_name="f"),
        ToolCallArgsEvent(tool_call_id="c1", delta="{'single': 'quotes'}"),
        ToolCallEndEvent(tool_call_id="c1"),
    ]
    with pytest.raises(DataError) as caught:
        convert_to_ragas_messages(events)
    assert caught.value.row == 2 and caught.value.field == "arguments of 'c1'"
    assert "is not valid JSON" in str(caught.value)


@pytest.mark.parametrize(
    ("events", "index", "expected"),
    [
        (
            [TextMessageContentEvent(message_id="nope", delta="x")],
            0,
            "'nope', which was never started",
        ),
        (
            [
                ToolCallStartEvent(tool_call_id="c", tool_call_name="f"),
                ToolCallEndEvent(tool_call_id="c"),
                ToolCallArgsEvent(tool_call_id="c", delta="{}"),
            ],
            2,
            "'c', which has ended",
        ),
        (
            [ToolCallResultEvent(message_id="r", tool_call_id="ghost", content="x")],
            0,
            "answers no tool call",
        ),
        ([{"type": "TEXT_MESSAGE_START", "role": "assistant"}], 0, "field 'messageId' is missing"),
        ([{"type": "TELEPORT"}], 0, "'TELEPORT', not an AG-UI event type"),
        ([{"delta": "x"}], 0, "field 'type' is missing"),
        (
            [TextMessageStartEvent(message_id="m"), TextMessageStartEvent(message_id="m")],
            1,
            "which was already started",
        ),
    ],
)
def test_malformed_streams_name_the_event_index_and_field(events, index, expected):
    with pytest.raises(DataError) as caught:
        convert_to_ragas_messages(events)
    assert caught.value.row == index and expected in str(caught.value)


def test_a_cut_stream_leaves_a_call_that_never_ended():
    collector = AGUIEventCollector()
    for event in weather_events()[:7]:  # cut inside the tool call's arguments
        collector.process_event(event)
    assert collector.run_id == "run-1" and not collector.finished
    with pytest.raises(DataError, match=r"index 5: .*'c1', which never ended"):
        collector.get_messages()
    for event in weather_events()[7:]:
        collector.process_event(event)
    assert collector.get_messages() == WEATHER and collector.finished


def test_empty_and_system_text_messages():
    events = [
        TextMessageStartEvent(message_id="s", role="system"),
        TextMessageContentEvent(message_id="s", delta="You are terse."),
        TextMessageEndEvent(message_id="s"),
        TextMessageStartEvent(message_id="m", role="assistant"),
        TextMessageEndEvent(message_id="m"),
    ]
    messages = convert_to_ragas_messages(events)
    assert messages == [AIMessage(content="")]
    assert extract_response(messages) is None
    assert convert_to_ragas_messages([]) == []


def snapshot_messages() -> list:
    return [
        SystemMessage(id="s0", content="You help with weather."),
        UserMessage(id="u1", content="Weather in SF?"),
        AssistantMessage(
            id="a1",
            content="Checking.",
            tool_calls=[
                AGUIToolCall(
                    id="c1",
                    function=FunctionCall(name="get_weather", arguments='{"location": "SF"}'),
                )
            ],
        ),
        AGUIToolMessage(id="t1", tool_call_id="c1", content="Sunny"),
        AssistantMessage(id="a2", content="It is sunny."),
    ]


SNAPSHOT = [
    HumanMessage(content="Weather in SF?"),
    AIMessage(
        content="Checking.", tool_calls=[ToolCall(name="get_weather", args={"location": "SF"})]
    ),
    ToolMessage(content="Sunny"),
    AIMessage(content="It is sunny."),
]


def test_a_snapshot_converts_and_replaces_what_was_streamed():
    event = MessagesSnapshotEvent(messages=snapshot_messages())
    assert convert_messages_snapshot(event) == SNAPSHOT
    assert convert_messages_snapshot(snapshot_messages()) == SNAPSHOT
    streamed_then_snapshot = [
        *weather_events()[:-1],
        event,
        RunFinishedEvent(thread_id="th-1", run_id="run-1"),
    ]
    assert convert_to_ragas_messages(streamed_then_snapshot) == SNAPSHOT


def test_messages_round_trip_through_ag_ui_types():
    converted = convert_messages_to_ag_ui(SNAPSHOT)
    assert [type(m).__name__ for m in converted] == [
        "UserMessage",
        "AssistantMessage",
        "ToolMessage",
        "AssistantMessage",
    ]
    assert converted[2].tool_call_id == converted[1].tool_calls[0].id
    assert convert_messages_snapshot(MessagesSnapshotEvent(messages=converted)) == SNAPSHOT
    # with metadata the ids survive the trip
    with_ids = convert_messages_snapshot(
        MessagesSnapshotEvent(messages=snapshot_messages()), metadata=True
    )
    again = convert_messages_to_ag_ui(with_ids)
    assert [m.id for m in again] == ["u1", "a1", "t1", "a2"]
    assert again[1].tool_calls[0].id == "c1" and again[2].tool_call_id == "c1"


def test_bad_snapshots_and_conversions_are_refused():
    bad = MessagesSnapshotEvent(
        messages=[
            UserMessage(id="u", content="q"),
            AssistantMessage(
                id="a",
                tool_calls=[
                    AGUIToolCall(id="c", function=FunctionCall(name="f", arguments="not json"))
                ],
            ),
        ]
    )
    with pytest.raises(DataError, match=r"messages\[1\]\.toolCalls\[0\]\.function\.arguments"):
        convert_messages_snapshot(bad)
    orphan = MessagesSnapshotEvent(
        messages=[AGUIToolMessage(id="t", tool_call_id="zz", content="x")]
    )
    with pytest.raises(DataError, match=r"messages\[0\]\.toolCallId"):
        convert_messages_snapshot(orphan)
    with pytest.raises(DataError, match="answers no tool call"):
        convert_messages_to_ag_ui([HumanMessage(content="q"), ToolMessage(content="x")])


def test_converting_needs_no_framework_package_and_the_endpoint_names_its_extra(monkeypatch):
    import subprocess
    import sys

    code = (
        "import sys\n"
        "for name in ('ag_ui', 'agents', 'langchain_core', 'httpx_sse', 'boto3', 'swarm'):\n"
        "    sys.modules[name] = None  # importing any of them now fails\n"
        "from assay.integrations import ag_ui, amazon_bedrock, langgraph, openai_agents, swarm\n"
        "events = [{'type': 'TEXT_MESSAGE_START', 'messageId': 'm', 'role': 'assistant'},\n"
        "          {'type': 'TEXT_MESSAGE_CONTENT', 'messageId': 'm', 'delta': 'hi'},\n"
        "          {'type': 'TEXT_MESSAGE_END', 'messageId': 'm'}]\n"
        "print(ag_ui.convert_to_ragas_messages(events)[0].content)\n"
        "print(swarm.convert_to_ragas_messages([{'role': 'user', 'content': 'q'}])[0].type)\n"
        "print(openai_agents.convert_to_ragas_messages([{'role': 'user', 'content': 'q'}])[0].type)\n"
        "print(langgraph.convert_to_ragas_messages([{'type': 'human', 'content': 'q'}])[0].type)\n"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["hi", "human", "human", "human"]

    from assay.errors import MissingDependency

    monkeypatch.setitem(sys.modules, "ag_ui.core", None)
    with pytest.raises(MissingDependency, match=r"ag-ui-protocol.*pip install 'assay\[ag-ui\]'"):
        convert_messages_to_ag_ui([HumanMessage(content="q")])


def test_ragas_integration_names_are_where_ragas_users_import_them():
    import importlib

    expected = {
        "ag_ui": [
            "convert_to_ragas_messages",
            "convert_messages_snapshot",
            "convert_messages_to_ag_ui",
            "extract_response",
            "extract_tool_calls",
            "extract_contexts",
            "call_ag_ui_endpoint",
            "run_ag_ui_row",
            "AGUIEventCollector",
        ],
        "langgraph": ["convert_to_ragas_messages"],
        "swarm": ["convert_to_ragas_messages"],
        "amazon_bedrock": ["convert_to_ragas_messages", "extract_kb_trace"],
        "openai_agents": ["convert_to_ragas_messages"],
    }
    for module_name, names in expected.items():
        module = importlib.import_module(f"assay.integrations.{module_name}")
        assert [n for n in names if not callable(getattr(module, n, None))] == [], module_name
        assert set(names) <= set(module.__all__), module_name
