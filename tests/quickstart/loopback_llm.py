"""A stand-in OpenAI-compatible model on 127.0.0.1 for running the quickstart projects (stdlib only).

It answers every chat completion without a model:
- a request with a JSON schema (`response_format` json_schema, or a forced tool) gets an object
  built from the schema: the first choice of each enum, placeholder text, and numbers at the
  schema's minimum (its maximum for a model whose name ends in "high", so that two models answer
  differently). The calculator agent's step schema gets one tool call, then a final answer; the
  LlamaIndex agent's step one call of its first tool, then (once a tool result came back) an
  answer; the text2sql app's query schema gets `TEXT2SQL_QUERY`;
- a request whose last user message holds numbered items ("1. ...") gets "N. yes" per item
  (the faithfulness verdict format);
- a verdict prompt asking for "exactly one word" gets its first choice;
- anything else gets a short sentence (the apps' free-text answers).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.models.fake_openai import Behaviour, FakeOpenAI, RecordedRequest, dynamic, ok

TEXT2SQL_QUERY = "SELECT COUNT(*) FROM customers"


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def fill(schema: dict[str, Any], root: dict[str, Any], high: bool = False) -> Any:
    """A value of `schema`; numbers are its minimum (its maximum when `high`), else 1."""
    schema = _resolve(schema, root)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        chosen = next((o for o in options if _resolve(o, root).get("type") != "null"), options[0])
        return fill(chosen, root, high)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        return {name: fill(sub, root, high) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [
            fill(schema.get("items", {"type": "string"}), root, high)
            for _ in range(max(1, schema.get("minItems", 1)))
        ]
    if kind in ("number", "integer"):
        bounds = [schema.get("minimum"), schema.get("maximum")]
        value = next((b for b in (bounds[::-1] if high else bounds) if b is not None), 1)
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "a test answer"


def _user_texts(messages: list[dict[str, Any]]) -> list[str]:
    return [str(m.get("content", "")) for m in messages if m.get("role") == "user"]


def structured(schema: dict[str, Any], messages: list[dict[str, Any]], model: str = "") -> Any:
    properties = schema.get("properties", {})
    if "tool_call" in properties and "final_answer" in properties:  # the calculator agent's step
        done = any("Tool result:" in text for text in _user_texts(messages))
        if done:
            return {"thought": "that was the last operation", "tool_call": None, "final_answer": 5}
        return {
            "thought": "add first",
            "tool_call": {"name": "add", "a": 2, "b": 3},
            "final_answer": None,
        }
    if set(properties) == {"done", "tool_calls", "answer"}:  # the LlamaIndex agent's step
        if any(text.startswith("Tool result:") for text in _user_texts(messages)):
            return {"done": True, "answer": "Done.", "tool_calls": []}
        # one call of the first tool, with placeholder arguments
        return {**fill(schema, schema), "done": False, "answer": None}
    if set(properties) == {"sql"}:  # the text2sql app: a query that runs on its shop.db
        return {"sql": TEXT2SQL_QUERY}
    return fill(schema, schema, high=model.endswith("high"))


def system_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")


def text_answer(messages: list[dict[str, Any]]) -> str:
    users = _user_texts(messages)
    last = users[-1] if users else ""
    one_word = re.search(r"Answer with exactly one word: (\w+)", system_text(messages))
    if one_word:  # a yes/no or rating verdict: its first choice
        return one_word.group(1)
    numbers = list(dict.fromkeys(re.findall(r"^(\d+)\. ", last, flags=re.MULTILINE)))
    if numbers:
        return "\n".join(f"{number}. yes" for number in numbers)
    return "Here is a short test answer from the loopback model."


def _reply(request: RecordedRequest) -> Behaviour:
    messages = request.messages
    body = request.body
    fmt = body.get("response_format") or {}
    if body.get("tools") and not fmt:
        function = body["tools"][0]["function"]
        return ok(
            json.dumps(structured(function["parameters"], messages, body.get("model", ""))),
            usage=_usage(messages),
        )
    if fmt.get("type") == "json_schema":
        text = json.dumps(structured(fmt["json_schema"]["schema"], messages, body.get("model", "")))
    elif fmt.get("type") == "json_object":
        text = "{}"
    else:
        text = text_answer(messages)
    return ok(text, usage=_usage(messages))


def _usage(messages: list[dict[str, Any]]) -> tuple[int, int]:
    return sum(len(str(m.get("content", ""))) for m in messages) // 4, 12


class LoopbackLLM(FakeOpenAI):
    """The shared fake server (tests/models/fake_openai.py) answering every chat request."""

    def __init__(self) -> None:
        super().__init__()
        self.default = dynamic(_reply)

    @property
    def model_string(self) -> str:
        return f"vllm/test@{self.url}"
