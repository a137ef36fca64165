"""LangChain/LangGraph messages -> assay messages, with real langchain_core message objects."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage as LCAIMessage
from langchain_core.messages import AIMessageChunk, ChatMessage, FunctionMessage
from langchain_core.messages import HumanMessage as LCHumanMessage
from langchain_core.messages import SystemMessage as LCSystemMessage
from langchain_core.messages import ToolMessage as LCToolMessage

from assay import AIMessage, DataError, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
from assay.integrations.langgraph import convert_to_ragas_messages


def metal_price_conversation() -> list:
    return [
        LCSystemMessage(content="You are a metals price assistant."),
        LCHumanMessage(content="What is the price of copper?", id="h1"),
        LCAIMessage(
            content="",
            id="a1",
            tool_calls=[{"name": "get_metal_price", "args": {"metal_name": "copper"}, "id": "c1"}],
            usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
        ),
        LCToolMessage(content="0.0098", tool_call_id="c1", name="get_metal_price"),
        LCAIMessage(content="Copper costs $0.0098 per gram.", id="a2"),
    ]


def test_a_tool_using_conversation_converts_and_the_system_message_is_left_out():
    messages = convert_to_ragas_messages(metal_price_conversation())
    assert messages == [
        HumanMessage(content="What is the price of copper?"),
        AIMessage(
            content="", tool_calls=[ToolCall(name="get_metal_price", args={"metal_name": "copper"})]
        ),
        ToolMessage(content="0.0098"),
        AIMessage(content="Copper costs $0.0098 per gram."),
    ]
    sample = MultiTurnSample(
        user_input=messages,
        reference_tool_calls=[ToolCall(name="get_metal_price", args={"metal_name": "copper"})],
    )
    assert sample.user_input[1].tool_calls[0].name == "get_metal_price"


def test_metadata_keeps_ids_tool_call_ids_and_usage():
    messages = convert_to_ragas_messages(metal_price_conversation(), metadata=True)
    assert messages[0].metadata == {"id": "h1"}
    assert messages[1].metadata["tool_call_ids"] == ["c1"]
    assert messages[1].metadata["usage"]["total_tokens"] == 15
    assert messages[2].metadata == {"name": "get_metal_price", "tool_call_id": "c1"}
    assert convert_to_ragas_messages(metal_price_conversation())[0].metadata is None


def test_a_graph_state_dict_and_langgraph_server_dicts_are_accepted():
    state = {"messages": metal_price_conversation()}
    assert len(convert_to_ragas_messages(state)) == 4
    as_dicts = [
        {"type": "human", "content": "hi"},
        {"type": "ai", "content": "", "tool_calls": [{"name": "f", "args": {}, "id": "x"}]},
        {"type": "tool", "content": "done", "tool_call_id": "x"},
    ]
    assert [m.type for m in convert_to_ragas_messages(as_dicts)] == ["human", "ai", "tool"]


def test_arguments_that_are_not_json_name_the_message_and_field():
    broken = LCAIMessage(
        content="",
        additional_kwargs={
            "tool_calls": [
                {
                    "id": "c9",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": "{oops"},
                }
            ]
        },
    )
    assert broken.invalid_tool_calls  # langchain itself could not parse them
    with pytest.raises(DataError) as caught:
        convert_to_ragas_messages([LCHumanMessage(content="q"), broken])
    error = caught.value
    assert error.row == 1 and error.field == "invalid_tool_calls[0]"
    assert "lookup" in str(error) and "{oops" in str(error) and "index 1" in str(error)


def test_content_blocks_are_joined_and_tool_use_blocks_left_to_tool_calls():
    anthropic_style = LCAIMessage(
        content=[
            {"type": "text", "text": "Let me look. "},
            {"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "x"}},
            {"type": "text", "text": "Searching."},
        ],
        tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "t1"}],
    )
    (message,) = convert_to_ragas_messages([anthropic_style])
    assert message.content == "Let me look. Searching."
    assert message.tool_calls == [ToolCall(name="search", args={"q": "x"})]


def test_an_image_part_is_refused_with_its_position():
    image = LCHumanMessage(
        content=[
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ]
    )
    with pytest.raises(DataError, match=r"index 0: .*content\[1\]"):
        convert_to_ragas_messages([image])


def test_chunks_merged_by_langchain_convert_like_messages():
    merged = AIMessageChunk(
        content="Par", tool_call_chunks=[{"name": "f", "args": '{"x":', "id": "1", "index": 0}]
    ) + AIMessageChunk(
        content="is", tool_call_chunks=[{"name": None, "args": "2}", "id": None, "index": 0}]
    )
    (message,) = convert_to_ragas_messages([merged])
    assert message == AIMessage(content="Paris", tool_calls=[ToolCall(name="f", args={"x": 2})])


def test_chat_messages_follow_their_role_and_unknown_types_are_refused():
    converted = convert_to_ragas_messages(
        [ChatMessage(role="user", content="hello"), ChatMessage(role="system", content="be nice")]
    )
    assert converted == [HumanMessage(content="hello")]
    with pytest.raises(DataError, match="'function', not a supported message type"):
        convert_to_ragas_messages([FunctionMessage(name="f", content="1")])
    with pytest.raises(DataError, match="role"):
        convert_to_ragas_messages([ChatMessage(role="critic", content="meh")])


def test_empty_content_stays_empty_and_a_plain_ai_message_has_no_tool_calls():
    messages = convert_to_ragas_messages([LCHumanMessage(content=""), LCAIMessage(content="")])
    assert messages == [HumanMessage(content=""), AIMessage(content="", tool_calls=None)]
    assert convert_to_ragas_messages([]) == []


def test_a_tool_output_without_a_call_is_refused():
    with pytest.raises(DataError, match="out of order"):
        convert_to_ragas_messages(
            [LCHumanMessage(content="q"), LCToolMessage(content="x", tool_call_id="z")]
        )
    with pytest.raises(DataError, match="must be a list"):
        convert_to_ragas_messages("hello")
