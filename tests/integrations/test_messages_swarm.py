"""Swarm (OpenAI Chat Completions) message dicts -> assay messages."""

from __future__ import annotations

import json

import pytest

from assay import AIMessage, DataError, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
from assay.integrations.swarm import convert_to_ragas_messages


def tracker_conversation() -> list[dict]:
    """The shape of `client.run(...).messages` in Swarm's order-tracking example."""
    return [
        {"role": "user", "content": "Where is my order #3000?"},
        {
            "role": "assistant",
            "content": None,
            "sender": "Triage Agent",
            "refusal": None,
            "function_call": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "transfer_to_tracker_agent", "arguments": "{}"},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "tool_name": "transfer_to_tracker_agent",
            "content": json.dumps({"assistant": "Tracker Agent"}),
        },
        {
            "role": "assistant",
            "content": "",
            "sender": "Tracker Agent",
            "tool_calls": [
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "track_order", "arguments": '{"order_id": "3000"}'},
                },
                {
                    "id": "call_3",
                    "type": "function",
                    "function": {"name": "case_resolved", "arguments": ""},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_3", "tool_name": "case_resolved", "content": "ok"},
        {
            "role": "tool",
            "tool_call_id": "call_2",
            "tool_name": "track_order",
            "content": "shipped",
        },
        {
            "role": "assistant",
            "content": "Your order has shipped.",
            "sender": "Tracker Agent",
            "tool_calls": None,
        },
    ]


def test_swarm_history_converts_with_ragas_conventions():
    messages = convert_to_ragas_messages(messages=tracker_conversation())
    assert messages == [
        HumanMessage(content="Where is my order #3000?"),
        AIMessage(content="", tool_calls=[ToolCall(name="transfer_to_tracker_agent", args={})]),
        ToolMessage(content='{"assistant": "Tracker Agent"}'),
        AIMessage(
            content="",
            tool_calls=[
                ToolCall(name="track_order", args={"order_id": "3000"}),
                ToolCall(name="case_resolved", args={}),
            ],
        ),
        ToolMessage(content="ok"),
        ToolMessage(content="shipped"),
        AIMessage(content="Your order has shipped.", tool_calls=[]),  # Ragas: [] when no calls
    ]
    reference = [
        ToolCall(name="transfer_to_tracker_agent", args={}),
        ToolCall(name="track_order", args={"order_id": "3000"}),
        ToolCall(name="case_resolved", args={}),
    ]
    MultiTurnSample(user_input=messages, reference_tool_calls=reference)  # a valid sample


def test_metadata_keeps_sender_and_tool_call_ids():
    messages = convert_to_ragas_messages(tracker_conversation(), metadata=True)
    assert messages[1].metadata == {"sender": "Triage Agent", "tool_call_ids": ["call_1"]}
    assert messages[2].metadata == {
        "tool_call_id": "call_1",
        "tool_name": "transfer_to_tracker_agent",
    }
    assert messages[0].metadata is None


class SwarmResponse:
    """What `Swarm.run` returns: an object with the new messages."""

    def __init__(self, messages: list[dict]) -> None:
        self.messages = messages
        self.agent = None
        self.context_variables: dict = {}


def test_a_response_object_and_system_messages():
    history = [{"role": "system", "content": "You triage."}, *tracker_conversation()]
    assert convert_to_ragas_messages(SwarmResponse(history)) == convert_to_ragas_messages(
        tracker_conversation()
    )


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "must decode to a JSON object, got list"),
        (42, "must be a JSON object string, got int"),
    ],
)
def test_arguments_that_are_not_a_json_object_name_index_and_field(arguments, expected):
    history = tracker_conversation()
    history[3]["tool_calls"][1]["function"]["arguments"] = arguments
    with pytest.raises(DataError) as caught:
        convert_to_ragas_messages(history)
    assert caught.value.row == 3
    assert caught.value.field == "tool_calls[1].function.arguments"
    assert expected in str(caught.value) and str(caught.value).startswith("index 3: ")


def test_a_tool_result_for_an_unknown_call_and_a_bad_role_are_refused():
    history = tracker_conversation()
    history[5]["tool_call_id"] = "call_99"
    with pytest.raises(
        DataError, match=r"index 5: .*'tool_call_id' is 'call_99', which answers no"
    ):
        convert_to_ragas_messages(history)
    with pytest.raises(DataError, match="field 'role' is 'function'"):
        convert_to_ragas_messages([{"role": "function", "content": "x"}])
    with pytest.raises(DataError, match="field 'role' is missing"):
        convert_to_ragas_messages([{"content": "x"}])
    with pytest.raises(DataError, match=r"tool_calls\[0\]\.function\.name"):
        convert_to_ragas_messages(
            [{"role": "assistant", "tool_calls": [{"id": "a", "function": {"arguments": "{}"}}]}]
        )
