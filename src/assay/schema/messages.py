"""Conversation messages for multi-turn samples (agents, tool use)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class ToolCall(BaseModel):
    """One tool invocation requested by the assistant: a tool name and its arguments."""

    model_config = ConfigDict(extra="forbid")

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class Message(BaseModel):
    """The base of the three message types (Ragas' `Message`): text and optional metadata.

    Validating a dict as a `Message` gives the type its "type" names ("human", "ai", "tool")."""

    model_config = ConfigDict(extra="forbid")

    content: str = ""
    metadata: dict[str, Any] | None = None

    @model_validator(mode="wrap")
    @classmethod
    def _as_its_type(cls, data: Any, handler: Any) -> Any:
        if cls is Message and isinstance(data, dict) and "type" in data:
            kinds: dict[Any, type[Message]] = {
                "human": HumanMessage,
                "ai": AIMessage,
                "tool": ToolMessage,
            }
            if data["type"] not in kinds:
                raise ValueError(
                    f"a message's type must be human, ai or tool, got {data['type']!r}"
                )
            return kinds[data["type"]].model_validate(data)
        return handler(data)


class HumanMessage(Message):
    """A turn written by the user."""

    type: Literal["human"] = "human"

    def pretty_repr(self) -> str:
        return f"Human: {self.content}"


class AIMessage(Message):
    """A turn written by the assistant, possibly requesting tool calls."""

    type: Literal["ai"] = "ai"
    tool_calls: list[ToolCall] | None = None

    def pretty_repr(self) -> str:
        lines = [f"AI: {self.content}"] if self.content else []
        if self.tool_calls:
            lines.append("Tools:")
            lines.extend(f"  {call.name}: {call.args}" for call in self.tool_calls)
        return "\n".join(lines)


class ToolMessage(Message):
    """The output of a tool, returned to the assistant."""

    type: Literal["tool"] = "tool"

    def pretty_repr(self) -> str:
        return f"ToolOutput: {self.content}"


# A message of any of the three types, told apart by "type" (what a conversation holds).
AnyMessage = Annotated[HumanMessage | AIMessage | ToolMessage, Field(discriminator="type")]


def check_message_order(messages: list[HumanMessage | AIMessage | ToolMessage]) -> None:
    """Reject conversations where a tool output has no tool call to answer.

    A ToolMessage must come straight after an AIMessage that called tools, or after another
    ToolMessage in the same run of tool outputs.
    """
    seen_ai = False
    for index, message in enumerate(messages):
        if isinstance(message, AIMessage):
            seen_ai = True
        elif isinstance(message, ToolMessage):
            if not seen_ai:
                raise ValueError(
                    f"message {index}: a ToolMessage must be preceded by an AIMessage "
                    "somewhere in the conversation"
                )
            previous = messages[index - 1]
            if isinstance(previous, AIMessage):
                if not previous.tool_calls:
                    raise ValueError(
                        f"message {index}: a ToolMessage must follow an AIMessage that called tools"
                    )
            elif not isinstance(previous, ToolMessage):
                raise ValueError(
                    f"message {index}: a ToolMessage must follow an AIMessage or another ToolMessage"
                )


__all__ = [
    "AIMessage",
    "AnyMessage",
    "HumanMessage",
    "Message",
    "ToolCall",
    "ToolMessage",
    "check_message_order",
]
