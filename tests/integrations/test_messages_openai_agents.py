"""OpenAI Agents SDK runs -> assay messages, from real runs of the SDK's Runner driven by the
SDK's own scripted model (no network, no OpenAI key)."""

from __future__ import annotations

import asyncio

import pytest
from agents import Agent, Runner, function_tool, handoff, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from assay import AIMessage, DataError, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
from assay.integrations.openai_agents import convert_to_ragas_messages

set_tracing_disabled(True)  # the SDK would otherwise try to upload traces


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}"


def run(agent: Agent, question: str):
    return asyncio.run(Runner.run(agent, question))


def weather_run():
    model = ScriptedModel(
        [
            [
                function_call("get_weather", {"city": "Paris"}, call_id="c1"),
                function_call("get_weather", {"city": "Rome"}, call_id="c2"),
            ],
            [assistant_message("Both are sunny.")],
        ]
    )
    return run(Agent(name="weather", model=model, tools=[get_weather]), "Paris and Rome?")


EXPECTED = [
    HumanMessage(content="Paris and Rome?"),
    AIMessage(
        content="",
        tool_calls=[
            ToolCall(name="get_weather", args={"city": "Paris"}),
            ToolCall(name="get_weather", args={"city": "Rome"}),
        ],
    ),
    ToolMessage(content="Sunny in Paris"),
    ToolMessage(content="Sunny in Rome"),
    AIMessage(content="Both are sunny."),
]


def test_a_run_result_its_input_list_and_its_items_convert_alike():
    result = weather_run()
    assert convert_to_ragas_messages(result) == EXPECTED
    assert convert_to_ragas_messages(result.to_input_list()) == EXPECTED
    assert convert_to_ragas_messages(result.new_items) == EXPECTED[1:]  # items hold no input
    MultiTurnSample(user_input=convert_to_ragas_messages(result))


def test_metadata_names_the_agent_and_the_call_ids():
    messages = convert_to_ragas_messages(weather_run().new_items, metadata=True)
    assert messages[0].metadata == {"agent": "weather", "call_ids": ["c1", "c2"]}
    assert messages[1].metadata == {"call_id": "c1", "agent": "weather"}
    assert messages[3].metadata["id"] == "scripted-message"


def test_a_handoff_is_a_tool_call_and_both_agents_speak():
    tracker = Agent(
        name="tracker",
        model=ScriptedModel([[assistant_message("Order 3000 has shipped.", item_id="m2")]]),
    )
    triage = Agent(
        name="triage",
        model=ScriptedModel(
            [
                [
                    assistant_message("Let me hand you over.", item_id="m1"),
                    function_call("transfer_to_tracker", {}, call_id="h1"),
                ]
            ]
        ),
        handoffs=[handoff(tracker)],
    )
    result = run(triage, "Where is order 3000?")
    messages = convert_to_ragas_messages(result.new_items, metadata=True)
    assert [type(m).__name__ for m in messages] == ["AIMessage", "ToolMessage", "AIMessage"]
    assert messages[0].content == "Let me hand you over."
    assert messages[0].tool_calls == [ToolCall(name="transfer_to_tracker", args={})]
    assert messages[2].content == "Order 3000 has shipped."
    assert messages[2].metadata["agent"] == "tracker"


def test_input_items_as_dicts_with_refusals_parts_and_skipped_items():
    items = [
        {"role": "system", "content": "be brief"},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Hi "},
                {"type": "input_text", "text": "there"},
            ],
        },
        {"type": "reasoning", "id": "r1", "summary": []},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "refusal", "refusal": "I can't help with that."}],
        },
    ]
    assert convert_to_ragas_messages(items) == [
        HumanMessage(content="Hi there"),
        AIMessage(content="I can't help with that."),
    ]


def test_mcp_calls_give_the_call_and_its_output():
    items = [
        {"role": "user", "content": "list files"},
        {
            "type": "mcp_call",
            "id": "m1",
            "name": "ls",
            "arguments": '{"path": "/"}',
            "server_label": "fs",
            "output": "a b",
        },
    ]
    assert convert_to_ragas_messages(items)[1:] == [
        AIMessage(content="", tool_calls=[ToolCall(name="ls", args={"path": "/"})]),
        ToolMessage(content="a b"),
    ]


def test_bad_items_name_their_index_and_field():
    good = weather_run().to_input_list()
    broken = [dict(item) for item in good]
    broken[2]["arguments"] = '{"city": '
    with pytest.raises(DataError) as caught:
        convert_to_ragas_messages(broken)
    assert (caught.value.row, caught.value.field) == (2, "arguments")
    with pytest.raises(DataError, match=r"index 1: .*'web_search_call', which is not supported"):
        convert_to_ragas_messages(
            [good[0], {"type": "web_search_call", "id": "w", "status": "completed"}]
        )
    orphan = [good[0], {"type": "function_call_output", "call_id": "zz", "output": "x"}]
    with pytest.raises(DataError, match=r"index 1: .*'call_id' is 'zz'"):
        convert_to_ragas_messages(orphan)
    image = [{"role": "user", "content": [{"type": "input_image", "image_url": "data:,"}]}]
    with pytest.raises(DataError, match=r"content\[0\]' is a 'input_image' part"):
        convert_to_ragas_messages(image)
