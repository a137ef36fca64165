"""SingleTurnSample / MultiTurnSample: the fields the spec names, their types, and helpers."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from assay.schema import AIMessage, HumanMessage, MultiTurnSample, SingleTurnSample, ToolCall
from assay.schema.samples import MULTI_TURN_FIELDS, SINGLE_TURN_FIELDS

# (field, a valid value, an invalid value) for every SingleTurnSample field named by the spec.
SINGLE_TURN_SPEC: list[tuple[str, Any, Any]] = [
    ("user_input", "What is the capital of France?", 5),
    ("retrieved_contexts", ["Paris is the capital.", "France is in Europe."], "Paris"),
    ("reference_contexts", ["Paris is the capital."], [1, 2]),
    ("retrieved_context_ids", ["doc-1", 7], [1.5]),
    ("reference_context_ids", [3, "doc-9"], {"id": 3}),
    ("response", "Paris.", ["Paris."]),
    ("multi_responses", ["Paris.", "It is Paris."], "Paris."),
    ("reference", "Paris", 3.0),
    ("rubrics", {"score1_description": "wrong", "score5_description": "right"}, {"a": 1}),
    ("persona_name", "curious student", ["x"]),
    ("query_style", "formal", 1),
    ("query_length", "short", {"len": "short"}),
]

MULTI_TURN_SPEC: list[tuple[str, Any, Any]] = [
    ("reference", "The order was tracked.", 1),
    (
        "reference_tool_calls",
        [{"name": "track_order", "args": {"order_id": "3000"}}],
        [{"args": {}}],
    ),
    ("reference_topics", ["orders", "shipping"], "orders"),
    ("rubrics", {"accuracy": "Correct"}, ["accuracy"]),
]

CONVERSATION = [HumanMessage(content="Where is my order?"), AIMessage(content="Let me check.")]


def test_single_turn_declares_exactly_the_spec_fields():
    assert set(SINGLE_TURN_FIELDS) == {name for name, _, _ in SINGLE_TURN_SPEC}


def test_multi_turn_declares_exactly_the_spec_fields():
    assert set(MULTI_TURN_FIELDS) == {"user_input"} | {name for name, _, _ in MULTI_TURN_SPEC}


def test_single_turn_fields_are_all_optional():
    sample = SingleTurnSample()
    assert all(getattr(sample, name) is None for name in SINGLE_TURN_FIELDS)
    assert sample.to_dict() == {}


@pytest.mark.parametrize(
    ("field", "good", "bad"), SINGLE_TURN_SPEC, ids=[s[0] for s in SINGLE_TURN_SPEC]
)
def test_single_turn_field_accepts_its_type(field, good, bad):
    sample = SingleTurnSample(**{field: good})
    assert getattr(sample, field) == good
    assert sample.to_dict() == {field: good}


@pytest.mark.parametrize(
    ("field", "good", "bad"), SINGLE_TURN_SPEC, ids=[s[0] for s in SINGLE_TURN_SPEC]
)
def test_single_turn_field_rejects_wrong_type(field, good, bad):
    with pytest.raises(ValidationError) as info:
        SingleTurnSample(**{field: bad})
    assert info.value.errors()[0]["loc"][0] == field


@pytest.mark.parametrize(
    ("field", "good", "bad"), MULTI_TURN_SPEC, ids=[s[0] for s in MULTI_TURN_SPEC]
)
def test_multi_turn_field_accepts_its_type(field, good, bad):
    sample = MultiTurnSample(user_input=CONVERSATION, **{field: good})
    assert sample.to_dict()[field] == good


@pytest.mark.parametrize(
    ("field", "good", "bad"), MULTI_TURN_SPEC, ids=[s[0] for s in MULTI_TURN_SPEC]
)
def test_multi_turn_field_rejects_wrong_type(field, good, bad):
    with pytest.raises(ValidationError) as info:
        MultiTurnSample(user_input=CONVERSATION, **{field: bad})
    assert info.value.errors()[0]["loc"][0] == field


def test_multi_turn_requires_user_input():
    with pytest.raises(ValidationError) as info:
        MultiTurnSample(reference="x")
    assert info.value.errors()[0]["loc"] == ("user_input",)
    assert info.value.errors()[0]["type"] == "missing"


def test_multi_turn_user_input_must_be_messages():
    with pytest.raises(ValidationError):
        MultiTurnSample(user_input="hello")
    with pytest.raises(ValidationError):
        MultiTurnSample(user_input=["hello"])


def test_context_ids_keep_str_and_int_items_as_given():
    sample = SingleTurnSample(retrieved_context_ids=["7", 7])
    assert sample.retrieved_context_ids == ["7", 7]
    assert [type(item) for item in sample.retrieved_context_ids] == [str, int]


def test_reference_tool_calls_become_tool_call_objects():
    sample = MultiTurnSample(
        user_input=CONVERSATION, reference_tool_calls=[{"name": "track_order", "args": {"id": 1}}]
    )
    assert sample.reference_tool_calls == [ToolCall(name="track_order", args={"id": 1})]


@pytest.mark.parametrize("model", [SingleTurnSample, MultiTurnSample])
def test_rubric_alias_sets_rubrics(model):
    kwargs = {"user_input": CONVERSATION} if model is MultiTurnSample else {"user_input": "q"}
    rubric = {"accuracy": "Correct", "tone": "Polite"}
    by_alias = model(rubric=rubric, **kwargs)
    by_name = model(rubrics=rubric, **kwargs)
    assert by_alias.rubrics == rubric
    assert by_name.rubrics == rubric
    assert by_alias.to_dict()["rubrics"] == rubric
    assert "rubric" not in by_alias.to_dict()


def test_rubric_alias_still_validates_type():
    with pytest.raises(ValidationError):
        SingleTurnSample(rubric={"accuracy": 5})


@pytest.mark.parametrize(
    "typo", ["contexts", "question", "answer", "ground_truth", "retrieved_context"]
)
def test_unknown_keyword_is_rejected_for_single_turn(typo):
    with pytest.raises(ValidationError) as info:
        SingleTurnSample(user_input="q", **{typo: "x"})
    error = info.value.errors()[0]
    assert error["type"] == "extra_forbidden"
    assert error["loc"] == (typo,)


def test_unknown_keyword_is_rejected_for_multi_turn():
    with pytest.raises(ValidationError) as info:
        MultiTurnSample(user_input=CONVERSATION, response="x")
    assert info.value.errors()[0]["type"] == "extra_forbidden"


def test_metadata_carries_arbitrary_data():
    sample = SingleTurnSample(user_input="q", metadata={"source": "wiki", "scores": [1, 2]})
    assert sample.metadata == {"source": "wiki", "scores": [1, 2]}
    assert sample.get_features() == ["user_input"]


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("user_input", None, False),
        ("user_input", "", False),
        ("user_input", "q", True),
        ("retrieved_contexts", [], False),
        ("retrieved_contexts", ["c"], True),
        ("retrieved_contexts", [""], True),
        ("rubrics", {}, False),
        ("rubrics", {"a": "b"}, True),
        ("retrieved_context_ids", [0], True),
    ],
)
def test_has_treats_empty_as_missing(field, value, expected):
    sample = SingleTurnSample(**{field: value})
    assert sample.has(field) is expected


def test_has_is_false_for_a_name_that_is_no_field():
    assert SingleTurnSample(user_input="q").has("not_a_field") is False


def test_multi_turn_has_on_empty_and_set_fields():
    sample = MultiTurnSample(user_input=CONVERSATION, reference_topics=[])
    assert sample.has("user_input")
    assert not sample.has("reference_topics")
    assert not sample.has("reference")


def test_to_dict_drops_unset_fields_and_get_features_lists_set_ones():
    sample = SingleTurnSample(user_input="q", response="r", reference="ref", metadata={"k": 1})
    assert sample.to_dict() == {
        "user_input": "q",
        "response": "r",
        "reference": "ref",
        "metadata": {"k": 1},
    }
    assert sample.get_features() == ["user_input", "response", "reference"]


def test_to_string_format():
    sample = SingleTurnSample(user_input="q", response="r")
    assert sample.to_string() == "\nuser_input:\n\tq\n\nresponse:\n\tr\n"


def test_multi_turn_to_dict_serialises_messages():
    sample = MultiTurnSample(
        user_input=[
            HumanMessage(content="hi"),
            AIMessage(content="", tool_calls=[ToolCall(name="f", args={"x": 1})]),
        ]
    )
    assert sample.to_dict() == {
        "user_input": [
            {"content": "hi", "type": "human"},
            {"content": "", "type": "ai", "tool_calls": [{"name": "f", "args": {"x": 1}}]},
        ]
    }
