"""A stand-in OpenAI-compatible model on 127.0.0.1 for running the quickstart projects (stdlib only).

It answers every chat completion without a model:
- a request with a JSON schema (`response_format` json_schema, or a forced tool) gets an object
  built from the schema: the first choice of each enum, placeholder text and numbers. The
  calculator agent's step schema gets one tool call, then a final answer;
- a request whose last user message holds numbered items ("1. ...") gets "N. yes" per item
  (the faithfulness verdict format);
- anything else gets a short sentence (the apps' free-text answers).
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def fill(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    schema = _resolve(schema, root)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        chosen = next((o for o in options if _resolve(o, root).get("type") != "null"), options[0])
        return fill(chosen, root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        return {name: fill(sub, root) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [fill(schema.get("items", {"type": "string"}), root) for _ in range(max(1, schema.get("minItems", 1)))]
    if kind in ("number", "integer"):
        low, high = schema.get("minimum"), schema.get("maximum")
        value = low if low is not None else high if high is not None else 1
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "a test answer"


def _user_texts(messages: list[dict[str, Any]]) -> list[str]:
    return [str(m.get("content", "")) for m in messages if m.get("role") == "user"]


def structured(schema: dict[str, Any], messages: list[dict[str, Any]]) -> Any:
    properties = schema.get("properties", {})
    if "tool_call" in properties and "final_answer" in properties:  # the calculator agent's step
        done = any("Tool result:" in text for text in _user_texts(messages))
        if done:
            return {"thought": "that was the last operation", "tool_call": None, "final_answer": 5}
        return {"thought": "add first", "tool_call": {"name": "add", "a": 2, "b": 3}, "final_answer": None}
    return fill(schema, schema)


def text_answer(messages: list[dict[str, Any]]) -> str:
    users = _user_texts(messages)
    last = users[-1] if users else ""
    numbers = list(dict.fromkeys(re.findall(r"^(\d+)\. ", last, flags=re.MULTILINE)))
    if numbers:
        return "\n".join(f"{number}. yes" for number in numbers)
    return "Here is a short test answer from the loopback model."


class _Handler(BaseHTTPRequestHandler):
    server: LoopbackLLM

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        with self.server.lock:
            self.server.requests.append(body)
        if not self.path.endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no endpoint {self.path}", "type": "not_found"}})
            return
        messages = body.get("messages") or []
        fmt = body.get("response_format") or {}
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if fmt.get("type") == "json_schema":
            message["content"] = json.dumps(structured(fmt["json_schema"]["schema"], messages))
        elif body.get("tools"):
            function = body["tools"][0]["function"]
            arguments = json.dumps(structured(function["parameters"], messages))
            message["tool_calls"] = [{"id": "call_1", "type": "function",
                                      "function": {"name": function["name"], "arguments": arguments}}]
        elif fmt.get("type") == "json_object":
            message["content"] = "{}"
        else:
            message["content"] = text_answer(messages)
        prompt = sum(len(str(m.get("content", ""))) for m in messages) // 4
        self._send(200, {
            "id": f"chatcmpl-{time.monotonic_ns()}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "test"),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": 12, "total_tokens": prompt + 12},
        })

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class LoopbackLLM(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def model_string(self) -> str:
        return f"vllm/test@http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> LoopbackLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
