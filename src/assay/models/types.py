"""Value types of the model layer: requests, generations, usage."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from assay.schema.usage import Usage

Role = Literal["system", "user", "assistant"]

# How structured output is requested from a provider, best first (see assay.models.structured).
OutputMode = Literal["json_schema", "tool", "json_object", "prompt"]
OUTPUT_MODES: tuple[OutputMode, ...] = ("json_schema", "tool", "json_object", "prompt")


class ChatMessage(BaseModel):
    """One message sent to a chat model. `content` may be a list of parts for images."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str | list[dict[str, Any]]

    def wire(self) -> dict[str, Any]:
        """As sent to an OpenAI-compatible API; the same as `model_dump()`, without its cost."""
        content = self.content
        if not isinstance(content, str):
            content = [dict(part) for part in content]
        return {"role": self.role, "content": content}


def as_messages(messages: str | list[ChatMessage] | list[dict[str, Any]]) -> list[ChatMessage]:
    """Accept a plain prompt, dicts in OpenAI shape, or ChatMessages."""
    if isinstance(messages, str):
        return [ChatMessage(role="user", content=messages)]
    return [m if isinstance(m, ChatMessage) else ChatMessage.model_validate(m) for m in messages]


class TokenLogprob(BaseModel):
    """A generated token with its log-probability and the most likely alternatives."""

    token: str
    logprob: float
    top: dict[str, float] = {}


class Generation(BaseModel):
    """One completion: raw text, the parsed object when a schema was asked for, and why it stopped."""

    text: str
    parsed: Any = None
    finish_reason: str | None = None
    logprobs: list[TokenLogprob] | None = None


class ModelResponse(BaseModel):
    generations: list[Generation]
    usage: Usage = Usage()
    model: str = ""
    cached: bool = False

    @property
    def text(self) -> str:
        return self.generations[0].text

    @property
    def parsed(self) -> Any:
        return self.generations[0].parsed


@dataclass(frozen=True)
class OutputSpec:
    """What structured output to ask for: a JSON schema and how to request it."""

    name: str
    schema: dict[str, Any]
    mode: OutputMode


@dataclass(frozen=True)
class ModelRequest:
    """Everything a provider needs for one call. `params` are sampling parameters
    (temperature, max_tokens, seed, logprobs, top_logprobs, stop)."""

    messages: tuple[ChatMessage, ...]
    n: int = 1
    params: dict[str, Any] = field(default_factory=dict)
    output: OutputSpec | None = None


__all__ = [
    "OUTPUT_MODES",
    "ChatMessage",
    "Generation",
    "ModelRequest",
    "ModelResponse",
    "OutputMode",
    "OutputSpec",
    "TokenLogprob",
    "Usage",
    "as_messages",
]
