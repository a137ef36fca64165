"""Ragas' schema names (issue #15, surface): `Message` is the base of the message types, `BaseSample`
the base of the samples, `RagasDataset` the dataset type."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from assay import (
    AIMessage,
    BaseSample,
    EvaluationDataset,
    HumanMessage,
    Message,
    MultiTurnSample,
    RagasDataset,
    SingleTurnSample,
    ToolCall,
    ToolMessage,
)


def test_message_is_the_base_of_the_message_types():
    messages = [
        HumanMessage(content="hi"),
        AIMessage(content="", tool_calls=[ToolCall(name="f")]),
        ToolMessage(content="out"),
    ]
    assert all(isinstance(message, Message) for message in messages)
    plain = Message(content="text", metadata={"k": 1})
    assert plain.content == "text" and not isinstance(plain, HumanMessage)


def test_a_dict_validated_as_a_message_becomes_its_type():
    adapter = TypeAdapter(Message)
    ai = adapter.validate_python(
        {"type": "ai", "content": "", "tool_calls": [{"name": "f", "args": {"x": 1}}]}
    )
    assert isinstance(ai, AIMessage) and ai.tool_calls[0].args == {"x": 1}
    assert isinstance(adapter.validate_python({"type": "tool", "content": "o"}), ToolMessage)
    with pytest.raises(ValidationError, match="human, ai or tool"):
        adapter.validate_python({"type": "system", "content": "x"})


def test_conversations_keep_their_message_types_through_json():
    sample = MultiTurnSample(
        user_input=[
            {"type": "human", "content": "weather?"},
            {
                "type": "ai",
                "content": "",
                "tool_calls": [{"name": "weather", "args": {"city": "Paris"}}],
            },
            {"type": "tool", "content": "14 C"},
        ]
    )
    assert [type(m).__name__ for m in sample.user_input] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
    ]
    again = MultiTurnSample.model_validate_json(sample.model_dump_json())
    assert again == sample and again.user_input[1].tool_calls[0].name == "weather"
    with pytest.raises(ValidationError):
        MultiTurnSample(user_input=[{"content": "no type"}])


def test_base_sample_and_ragas_dataset():
    single = SingleTurnSample(user_input="q", response="r")
    assert isinstance(single, BaseSample) and isinstance(MultiTurnSample(user_input=[]), BaseSample)
    assert single.to_dict() == {"user_input": "q", "response": "r"} and single.get_features() == [
        "user_input",
        "response",
    ]
    assert single.to_string() == "\nuser_input:\n\tq\n\nresponse:\n\tr\n"
    assert RagasDataset is EvaluationDataset
    dataset = RagasDataset.from_list([{"user_input": "q"}])
    assert isinstance(dataset, RagasDataset) and dataset.to_list() == [{"user_input": "q"}]
