"""Structured output that does not break: parse, repair, and know when an answer was cut off.

The ladder of ways to ask for JSON (best first): the provider's native JSON-schema mode, a
forced tool call, JSON mode with the schema in the prompt, and plain text with the schema in
the prompt. `LLM` walks down it when a provider rejects a mode, and remembers the first mode
that worked for the rest of the run. Whatever the mode, the answer is parsed strictly first,
then tolerantly (code fences, trailing commas, prose around the object), then one repair call
is made; only after that does a typed `OutputParseError` carry the raw text back.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from assay.models.types import ChatMessage, OutputMode


def schema_of(model: type[BaseModel]) -> tuple[str, dict[str, Any]]:
    """A function-name-safe schema name and the model's JSON schema."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", model.__name__)[:64] or "answer"
    return name, model.model_json_schema()


def with_schema_instruction(
    messages: list[ChatMessage], schema: dict[str, Any], mode: OutputMode
) -> list[ChatMessage]:
    """For modes that cannot enforce a schema, state it in the prompt."""
    if mode in ("json_schema", "tool"):
        return messages
    note = (
        "Reply with one JSON object and nothing else. It must validate against this JSON schema:\n"
        + json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    )
    return (
        [*messages, ChatMessage(role="user", content=note)]
        if messages[-1].role != "user"
        else [
            *messages[:-1],
            ChatMessage(role="user", content=f"{_text(messages[-1])}\n\n{note}"),
        ]
    )


def repair_messages(messages: list[ChatMessage], raw: str, problem: str) -> list[ChatMessage]:
    """The follow-up turn of the single repair attempt."""
    return [
        *messages,
        ChatMessage(role="assistant", content=raw),
        ChatMessage(
            role="user",
            content=(
                f"That reply could not be used: {problem}\n"
                "Send the corrected answer as one JSON object that follows the schema, with no other text."
            ),
        ),
    ]


def _text(message: ChatMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "\n".join(part.get("text", "") for part in message.content if part.get("type") == "text")


class ParseFailure(Exception):
    """Internal: why a raw answer did not yield the schema (used to word the repair request)."""


M = TypeVar("M", bound=BaseModel)


def parse_output(raw: str, model: type[M]) -> M:
    """Strict JSON first; then a tolerant repair of the text; then schema validation."""
    text = raw.strip()
    if not text:
        raise ParseFailure("the reply was empty")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = _tolerant(text)
    # Some models wrap the object in a list or under the schema's name.
    if isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict):
        data = data[0]
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'the object'}: {error['msg']}"
            for error in exc.errors()[:5]
        )
        raise ParseFailure(f"it did not match the schema ({problems})") from None


def _tolerant(text: str) -> Any:
    import json_repair

    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, flags=re.DOTALL)
    candidate = fenced.group(1) if fenced else text
    start = min((i for i in (candidate.find("{"), candidate.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise ParseFailure("it contained no JSON object")
    data = json_repair.loads(candidate[start:])
    if data in ("", None, [], {}) and candidate[start:].strip() not in ("{}", "[]"):
        raise ParseFailure("it was not valid JSON")
    return data


__all__ = [
    "ParseFailure",
    "parse_output",
    "repair_messages",
    "schema_of",
    "with_schema_instruction",
]
