"""Conversation messages for multi-turn samples (agents, tool use)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class ToolCall(BaseModel):
    """One tool invocation requested by the assistant: a tool name and its arguments."""

    model_config = ConfigDict(extra="forbid")

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str = ""
    metadata: dict[str, Any] | None = None


class HumanMessage(_Message):
    """A turn written by the user."""

    type: Literal["human"] = "human"

    def pretty_repr(self) -> str:
        return f"Human: {self.content}"


class AIMessage(_Message):
    """A turn written by the assistant, possibly requesting tool calls."""

    type: Literal["ai"] = "ai"
    tool_calls: list[ToolCall] | None = None

    def pretty_repr(self) -> str:
        lines = [f"AI: {self.content}"] if self.content else []
        if self.tool_calls:
            lines.append("Tools:")
            lines.extend(f"  {call.name}: {call.args}" for call in self.tool_calls)
        return "\n".join(lines)


class ToolMessage(_Message):
    """The output of a tool, returned to the assistant."""

    type: Literal["tool"] = "tool"

    def pretty_repr(self) -> str:
        return f"ToolOutput: {self.content}"


Message = Annotated[HumanMessage | AIMessage | ToolMessage, Field(discriminator="type")]


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


__all__ = ["AIMessage", "HumanMessage", "Message", "ToolCall", "ToolMessage", "check_message_order"]
