"""The two kinds of evaluation sample: one question/answer turn, or a whole conversation."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from assay.schema.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    ToolCall,
    ToolMessage,
    check_message_order,
)


class BaseSample(BaseModel):
    """What both kinds of sample share (Ragas' `BaseSample`)."""

    # Unknown keyword arguments are almost always typos ("contexts" for "retrieved_contexts"),
    # so they are rejected; columns a user wants to carry along go into `metadata`.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    metadata: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The sample's set fields as plain JSON-compatible data."""
        return self.model_dump(mode="json", exclude_none=True)

    def get_features(self) -> list[str]:
        """Names of the fields that are set (metadata excluded)."""
        return [name for name in self.to_dict() if name != "metadata"]

    def get(self, field: str) -> Any:
        """A field's value; names that are not sample fields are looked up in `metadata`
        (extra columns such as `grading_notes` used by custom judges)."""
        if field in type(self).model_fields and field != "metadata":
            return getattr(self, field)
        return (self.metadata or {}).get(field)

    def has(self, field: str) -> bool:
        """True when `field` is set and not empty (an empty string or list counts as missing)."""
        value = self.get(field)
        if value is None:
            return False
        if isinstance(value, (str, list, dict)):
            return len(value) > 0
        return True

    def to_string(self) -> str:
        return "".join(f"\n{key}:\n\t{value}\n" for key, value in self.to_dict().items())


class SingleTurnSample(BaseSample):
    """One interaction: a question, what was retrieved, what was answered, what was expected."""

    user_input: str | None = None
    retrieved_contexts: list[str] | None = None
    reference_contexts: list[str] | None = None
    retrieved_context_ids: list[str | int] | None = None
    reference_context_ids: list[str | int] | None = None
    response: str | None = None
    multi_responses: list[str] | None = None
    reference: str | None = None
    rubrics: dict[str, str] | None = Field(
        default=None, validation_alias=AliasChoices("rubrics", "rubric")
    )
    persona_name: str | None = None
    query_style: str | None = None
    query_length: str | None = None


class MultiTurnSample(BaseSample):
    """A conversation, possibly with tool calls, and what it should have achieved."""

    user_input: list[AnyMessage]
    reference: str | None = None
    reference_tool_calls: list[ToolCall] | None = None
    reference_topics: list[str] | None = None
    rubrics: dict[str, str] | None = Field(
        default=None, validation_alias=AliasChoices("rubrics", "rubric")
    )

    @field_validator("user_input")
    @classmethod
    def _messages_in_valid_order(
        cls, messages: list[HumanMessage | AIMessage | ToolMessage]
    ) -> list[HumanMessage | AIMessage | ToolMessage]:
        check_message_order(messages)
        return messages

    def to_messages(self) -> list[dict[str, Any]]:
        return [message.model_dump(mode="json") for message in self.user_input]

    def pretty_repr(self) -> str:
        """The conversation as readable text, one message per block."""
        return "\n".join(message.pretty_repr() for message in self.user_input)

    def tool_calls(self) -> list[ToolCall]:
        """Every tool call the assistant made, in order."""
        return [
            call
            for message in self.user_input
            if isinstance(message, AIMessage) and message.tool_calls
            for call in message.tool_calls
        ]


Sample = SingleTurnSample | MultiTurnSample

SINGLE_TURN_FIELDS: tuple[str, ...] = tuple(
    name for name in SingleTurnSample.model_fields if name != "metadata"
)
MULTI_TURN_FIELDS: tuple[str, ...] = tuple(
    name for name in MultiTurnSample.model_fields if name != "metadata"
)

__all__ = [
    "MULTI_TURN_FIELDS",
    "SINGLE_TURN_FIELDS",
    "BaseSample",
    "MultiTurnSample",
    "Sample",
    "SingleTurnSample",
]
