"""What an OTel span says was sent and answered: its input and output messages (GenAI
conventions as attributes, legacy indexed attributes or events; OpenInference attributes) and the
documents it retrieved. Used by `otlp_mapping`."""

from __future__ import annotations

import json
import re
from typing import Any

_INDEXED = re.compile(r"^(?P<prefix>.+?)\.(?P<index>\d+)\.(?P<rest>.+)$")
MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def maybe_json(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _indexed(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """`prefix.0.role = …, prefix.0.content = …` as [{"role": …, "content": …}, …]."""
    items: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix + "."):
            continue
        match = _INDEXED.match(key)
        if match is None or match.group("prefix") != prefix:
            continue
        items.setdefault(int(match.group("index")), {})[match.group("rest")] = value
    return [items[i] for i in sorted(items)]


def _parts_text(parts: Any) -> Any:
    """GenAI message parts ([{"type": "text", "content": …}, …]) as text when they are all text."""
    if not isinstance(parts, list):
        return parts
    texts = [
        p.get("content") if isinstance(p, dict) and p.get("type") == "text" else None for p in parts
    ]
    strings = [t for t in texts if isinstance(t, str)]
    if texts and len(strings) == len(texts):  # every part is text
        return "\n".join(strings)
    return parts


def _genai_messages(value: Any) -> list[dict[str, Any]] | None:
    value = maybe_json(value)
    if not isinstance(value, list):
        return None
    messages = []
    for item in value:
        if not isinstance(item, dict):
            continue
        content = item.get("content", _parts_text(item.get("parts")))
        messages.append({"role": item.get("role", "user"), "content": content})
    return messages


def _event_content(attributes: dict[str, Any]) -> Any:
    for key in ("content", "gen_ai.event.content", "message"):
        if key in attributes:
            value = maybe_json(attributes[key])
            if isinstance(value, dict) and "content" in value:
                return value["content"]
            return value
    return None


def span_input(attributes: dict[str, Any], events: list[dict[str, Any]]) -> Any:
    if "input.value" in attributes:
        return maybe_json(attributes["input.value"])
    if "gen_ai.tool.call.arguments" in attributes:
        return maybe_json(attributes["gen_ai.tool.call.arguments"])
    messages = _genai_messages(attributes.get("gen_ai.input.messages"))
    if messages is None:
        indexed = _indexed(attributes, "gen_ai.prompt") or [
            {"role": m.get("message.role"), "content": m.get("message.content")}
            for m in _indexed(attributes, "llm.input_messages")
        ]
        messages = [{"role": m.get("role", "user"), "content": m.get("content")} for m in indexed]
    if not messages:
        for event in events:
            role = MESSAGE_EVENTS.get(event["name"])
            if role is not None:
                messages.append(
                    {
                        "role": event["attributes"].get("role", role),
                        "content": _event_content(event["attributes"]),
                    }
                )
            elif event["name"] == "gen_ai.content.prompt":
                prompt = maybe_json(event["attributes"].get("gen_ai.prompt"))
                found = _genai_messages(prompt)
                messages.extend(
                    found if found is not None else [{"role": "user", "content": prompt}]
                )
    system = attributes.get("gen_ai.system_instructions")
    if system is not None and messages:
        messages.insert(0, {"role": "system", "content": _parts_text(maybe_json(system))})
    return messages or None


def span_output(attributes: dict[str, Any], events: list[dict[str, Any]]) -> Any:
    if "output.value" in attributes:
        return maybe_json(attributes["output.value"])
    if "gen_ai.tool.call.result" in attributes:
        return maybe_json(attributes["gen_ai.tool.call.result"])
    messages = _genai_messages(attributes.get("gen_ai.output.messages"))
    if messages is None:
        indexed = _indexed(attributes, "gen_ai.completion") or [
            {"role": m.get("message.role"), "content": m.get("message.content")}
            for m in _indexed(attributes, "llm.output_messages")
        ]
        messages = [
            {"role": m.get("role", "assistant"), "content": m.get("content")} for m in indexed
        ]
    if not messages:
        for event in events:
            if event["name"] == "gen_ai.choice":
                messages.append(
                    {"role": "assistant", "content": _event_content(event["attributes"])}
                )
            elif event["name"] == "gen_ai.content.completion":
                completion = maybe_json(event["attributes"].get("gen_ai.completion"))
                found = _genai_messages(completion)
                messages.extend(
                    found if found is not None else [{"role": "assistant", "content": completion}]
                )
    if len(messages) == 1 and isinstance(messages[0].get("content"), str):
        return messages[0]["content"]
    return messages or None


def span_documents(attributes: dict[str, Any]) -> list[str]:
    documents: list[str] = [
        text
        for d in _indexed(attributes, "retrieval.documents")
        if isinstance(text := d.get("document.content"), str)
    ]
    value = maybe_json(attributes.get("gen_ai.retrieval.documents"))
    if isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                documents.append(item)
            elif isinstance(item, dict):
                text = item.get("content", item.get("text"))
                if isinstance(text, str):
                    documents.append(text)
    return documents


__all__ = ["maybe_json", "span_documents", "span_input", "span_output"]
