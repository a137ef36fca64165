"""Messages, tool calls and the order rules of a conversation."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from assay.schema import AIMessage, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
from assay.schema.messages import check_message_order


def ai_calling(*names: str, content: str = "") -> AIMessage:
    return AIMessage(
        content=content,
        tool_calls=[ToolCall(name=name, args={"n": i}) for i, name in enumerate(names)],
    )


# -- ToolCall and message models -------------------------------------------------------


def test_tool_call_requires_a_name_and_defaults_args_to_empty():
    assert ToolCall(name="search").args == {}
    with pytest.raises(ValidationError):
        ToolCall(args={"q": "x"})


def test_tool_call_rejects_unknown_keys_and_non_dict_args():
    with pytest.raises(ValidationError):
        ToolCall(name="f", arguments={})
    with pytest.raises(ValidationError):
        ToolCall(name="f", args=["x"])


@pytest.mark.parametrize(
    ("cls", "kind"), [(HumanMessage, "human"), (AIMessage, "ai"), (ToolMessage, "tool")]
)
def test_message_types_and_defaults(cls, kind):
    message = cls(content="x")
    assert message.type == kind
    assert message.metadata is None
    assert cls().content == ""


def test_message_type_cannot_be_overridden():
    with pytest.raises(ValidationError):
        HumanMessage(content="x", type="ai")


def test_messages_reject_unknown_keys():
    with pytest.raises(ValidationError):
        HumanMessage(content="x", role="user")
    with pytest.raises(ValidationError):
        ToolMessage(content="x", tool_calls=[])


def test_message_content_must_be_text():
    with pytest.raises(ValidationError):
        HumanMessage(content=42)


# -- order rules ---------------------------------------------------------------------------


def test_tool_message_first_is_rejected():
    with pytest.raises(ValidationError, match="preceded by an AIMessage"):
        MultiTurnSample(user_input=[ToolMessage(content="42")])


def test_tool_message_after_human_first_is_rejected():
    with pytest.raises(ValidationError, match="preceded by an AIMessage"):
        MultiTurnSample(user_input=[HumanMessage(content="hi"), ToolMessage(content="42")])


def test_tool_message_after_ai_without_tool_calls_is_rejected():
    with pytest.raises(ValidationError, match="AIMessage that called tools"):
        MultiTurnSample(
            user_input=[
                HumanMessage(content="hi"),
                AIMessage(content="hello"),
                ToolMessage(content="42"),
            ]
        )


def test_tool_message_after_ai_with_empty_tool_call_list_is_rejected():
    with pytest.raises(ValidationError, match="AIMessage that called tools"):
        MultiTurnSample(
            user_input=[AIMessage(content="x", tool_calls=[]), ToolMessage(content="42")]
        )


def test_tool_message_after_human_message_is_rejected_even_after_earlier_tool_call():
    with pytest.raises(ValidationError, match="must follow an AIMessage or another ToolMessage"):
        MultiTurnSample(
            user_input=[
                HumanMessage(content="hi"),
                ai_calling("lookup"),
                ToolMessage(content="found"),
                HumanMessage(content="and?"),
                ToolMessage(content="late output"),
            ]
        )


def test_consecutive_tool_messages_after_a_tool_calling_ai_are_fine():
    conversation = [
        HumanMessage(content="weather and time in Paris?"),
        ai_calling("weather", "clock"),
        ToolMessage(content="sunny"),
        ToolMessage(content="14:00"),
        AIMessage(content="Sunny, 2pm."),
        HumanMessage(content="and Rome?"),
        ai_calling("weather"),
        ToolMessage(content="rainy"),
    ]
    sample = MultiTurnSample(user_input=conversation)
    assert sample.user_input == conversation
    assert [call.name for call in sample.tool_calls()] == ["weather", "clock", "weather"]


def test_check_message_order_raises_value_error_naming_the_message_index():
    with pytest.raises(ValueError, match="message 2"):
        check_message_order(
            [HumanMessage(content="a"), AIMessage(content="b"), ToolMessage(content="c")]
        )
    check_message_order([])  # an empty conversation is fine
    check_message_order([HumanMessage(content="a")])


# -- dict input --------------------------------------------------------------------------------


def test_messages_given_as_dicts_with_type_are_parsed():
    sample = MultiTurnSample(
        user_input=[
            {"type": "human", "content": "track order 3000"},
            {
                "type": "ai",
                "content": "",
                "tool_calls": [{"name": "track_order", "args": {"order_id": "3000"}}],
            },
            {"type": "tool", "content": "shipped", "metadata": {"latency_ms": 12}},
            {"type": "ai", "content": "It has shipped."},
        ],
        reference_tool_calls=[{"name": "track_order", "args": {"order_id": "3000"}}],
    )
    kinds = [type(message) for message in sample.user_input]
    assert kinds == [HumanMessage, AIMessage, ToolMessage, AIMessage]
    assert sample.user_input[1].tool_calls == [
        ToolCall(name="track_order", args={"order_id": "3000"})
    ]
    assert sample.user_input[2].metadata == {"latency_ms": 12}
    assert sample.reference_tool_calls[0].args == {"order_id": "3000"}


def test_dict_messages_are_checked_for_order_too():
    with pytest.raises(ValidationError, match="ToolMessage"):
        MultiTurnSample(user_input=[{"type": "tool", "content": "x"}])


@pytest.mark.parametrize("bad", [{"type": "robot", "content": "x"}, {"content": "no type"}])
def test_dict_messages_need_a_known_type(bad):
    with pytest.raises(ValidationError):
        MultiTurnSample(user_input=[bad])


def test_to_messages_dumps_every_message_with_its_type():
    sample = MultiTurnSample(user_input=[HumanMessage(content="hi"), ai_calling("f", content="ok")])
    assert sample.to_messages() == [
        {"content": "hi", "metadata": None, "type": "human"},
        {
            "content": "ok",
            "metadata": None,
            "type": "ai",
            "tool_calls": [{"name": "f", "args": {"n": 0}}],
        },
    ]


# -- pretty_repr -----------------------------------------------------------------------------


def test_pretty_repr_of_each_message_kind():
    assert HumanMessage(content="Hello").pretty_repr() == "Human: Hello"
    assert ToolMessage(content="42").pretty_repr() == "ToolOutput: 42"
    assert AIMessage(content="Hi there").pretty_repr() == "AI: Hi there"
    assert (
        AIMessage(
            content="Checking", tool_calls=[ToolCall(name="track_order", args={"order_id": "3000"})]
        ).pretty_repr()
        == "AI: Checking\nTools:\n  track_order: {'order_id': '3000'}"
    )


def test_pretty_repr_of_ai_message_without_content_omits_the_ai_line():
    message = AIMessage(
        content="", tool_calls=[ToolCall(name="a", args={}), ToolCall(name="b", args={"x": 1})]
    )
    assert message.pretty_repr() == "Tools:\n  a: {}\n  b: {'x': 1}"


def test_pretty_repr_of_a_conversation_joins_messages_with_newlines():
    sample = MultiTurnSample(
        user_input=[
            HumanMessage(content="Where is order 3000?"),
            AIMessage(
                content="", tool_calls=[ToolCall(name="track_order", args={"order_id": "3000"})]
            ),
            ToolMessage(content="shipped"),
            AIMessage(content="It has shipped."),
        ]
    )
    assert sample.pretty_repr() == (
        "Human: Where is order 3000?\n"
        "Tools:\n"
        "  track_order: {'order_id': '3000'}\n"
        "ToolOutput: shipped\n"
        "AI: It has shipped."
    )
