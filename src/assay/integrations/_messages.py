"""What the trace converters share: reading fields, decoding tool arguments, and errors that
name the event or message (its index in the input) and the field at fault."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from assay.errors import AssayError, DataError
from assay.schema.messages import (
    AIMessage,
    HumanMessage,
    ToolCall,
    ToolMessage,
    check_message_order,
)

ConvertedMessage = HumanMessage | AIMessage | ToolMessage

# Content-part types that carry plain text, across the OpenAI Chat, Responses and AG-UI formats.
TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})

_MISSING = object()


def bad_input(index: int, what: str, field: str, problem: str) -> DataError:
    """A `DataError` for item `index` of a trace, e.g. "index 3: TOOL_CALL_ARGS event: field
    'delta' must be a string, got int"."""
    return DataError(
        f"{what}: field '{field}' {problem}", row=index, field=field, row_is_index=True
    )


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def field_of(item: Any, name: str, default: Any = None) -> Any:
    """`item.name`, or `item[name]` / `item[nameInCamelCase]` for mappings (JSON from the wire
    is camelCase, Python objects are snake_case)."""
    if isinstance(item, Mapping):
        value = item.get(name, _MISSING)
        if value is _MISSING:
            value = item.get(camel(name), default)
        return value
    return getattr(item, name, default)


def required_str(
    item: Any,
    name: str,
    *,
    index: int,
    what: str,
    allow_empty: bool = False,
    wire_name: bool = False,
) -> str:
    """A field that must be a (non-empty) string. `wire_name` names it in errors as the JSON
    on the wire spells it (camelCase)."""
    label = camel(name) if wire_name else name
    value = field_of(item, name)
    if value is None:
        raise bad_input(index, what, label, "is missing")
    if not isinstance(value, str):
        raise bad_input(index, what, label, f"must be a string, got {type(value).__name__}")
    if not value and not allow_empty:
        raise bad_input(index, what, label, "is empty")
    return value


def enum_value(value: Any) -> Any:
    """The plain value of an enum member (AG-UI's `EventType`), or the value itself."""
    return getattr(value, "value", value)


def parse_arguments(raw: Any, *, index: int, what: str, field: str) -> dict[str, Any]:
    """Tool-call arguments as a dict. Frameworks send a JSON string ("" means no arguments) or an
    already decoded mapping; text that is not a JSON object is refused rather than guessed at,
    because a tool metric would otherwise compare arguments the agent never sent."""
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    if not isinstance(raw, str):
        raise bad_input(
            index, what, field, f"must be a JSON object string, got {type(raw).__name__}"
        )
    if not raw.strip():
        return {}
    try:
        decoded = json.loads(raw)
    except json.JSONDecodeError as exc:
        shown = raw if len(raw) <= 80 else raw[:77] + "..."
        raise bad_input(
            index, what, field, f"is not valid JSON ({exc.msg} at position {exc.pos}): {shown!r}"
        ) from None
    if not isinstance(decoded, dict):
        raise bad_input(
            index, what, field, f"must decode to a JSON object, got {type(decoded).__name__}"
        )
    return decoded


def text_of(
    content: Any,
    *,
    index: int,
    what: str,
    field: str = "content",
    skip_types: frozenset[str] = frozenset(),
) -> str:
    """Message content as text: a string, or a list of content parts whose text parts are joined.

    Parts that are not text (images, audio, files) are refused: dropping them would score a
    message the agent did not send. `skip_types` names parts carried elsewhere (a tool-use part
    whose call is also in `tool_calls`, hidden reasoning), which are left out."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, (list, tuple)):
        raise bad_input(
            index, what, field, f"must be a string or a list of parts, got {type(content).__name__}"
        )
    texts: list[str] = []
    for position, part in enumerate(content):
        if isinstance(part, str):
            texts.append(part)
            continue
        kind = enum_value(field_of(part, "type"))
        if kind in skip_types:
            continue
        if kind in TEXT_PART_TYPES or kind == "refusal":
            # A refusal part (OpenAI Responses) is what the assistant said, so it is text too.
            key = "refusal" if kind == "refusal" else "text"
            text = field_of(part, key)
            if not isinstance(text, str):
                raise bad_input(index, what, f"{field}[{position}].{key}", "must be a string")
            texts.append(text)
        else:
            raise bad_input(
                index,
                what,
                f"{field}[{position}]",
                f"is a {kind!r} part; only text parts can become message content",
            )
    return "".join(texts)


def metadata_of(enabled: bool, **values: Any) -> dict[str, Any] | None:
    """The metadata a converter keeps when asked to (ids and names), without empty entries."""
    if not enabled:
        return None
    kept = {key: value for key, value in values.items() if value is not None}
    return kept or None


def checked(messages: Iterable[ConvertedMessage]) -> list[ConvertedMessage]:
    """The converted conversation, refused if a tool output answers no tool call."""
    result = list(messages)
    try:
        check_message_order(result)
    except ValueError as exc:
        raise DataError(f"the converted conversation is out of order: {exc}") from None
    return result


def tool_call(name: Any, args: dict[str, Any], *, index: int, what: str, field: str) -> ToolCall:
    if not isinstance(name, str) or not name:
        raise bad_input(index, what, field, "must be a non-empty tool name")
    return ToolCall(name=name, args=args)


class AgentRunFailed(AssayError):
    """The agent's own run failed (an AG-UI `RUN_ERROR`, a Bedrock `failureTrace`): its trace
    holds no answer to evaluate, and converting it to an empty conversation would score a
    failure as if it were an answer. `run` names the run (AG-UI run id, Bedrock session and
    trace id), `index` is the failing event's position in the input."""

    def __init__(
        self,
        framework: str,
        message: str,
        *,
        run: str | None = None,
        code: str | None = None,
        index: int | None = None,
    ) -> None:
        self.framework = framework
        self.run = run
        self.code = code
        self.index = index
        self.detail = message
        where = f" run {run}" if run else " run"
        at = f" (event {index})" if index is not None else ""
        coded = f" [{code}]" if code else ""
        super().__init__(f"{framework}{where} failed{at}{coded}: {message}")


__all__ = [
    "TEXT_PART_TYPES",
    "AgentRunFailed",
    "ConvertedMessage",
    "bad_input",
    "camel",
    "checked",
    "enum_value",
    "field_of",
    "metadata_of",
    "parse_arguments",
    "required_str",
    "text_of",
    "tool_call",
]
