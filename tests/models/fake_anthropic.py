"""A loopback fake of the Anthropic Messages API, plus the OpenAI shapes `fake_openai` lacks.

Standard library only, like `fake_openai.py`: a threading HTTP server on 127.0.0.1 at a free
port. Routes:

- `POST /v1/messages` (Anthropic): a message, or with `"stream": true` the event stream
  (message_start, content_block_start, content_block_delta…, content_block_stop, message_delta,
  message_stop);
- `POST /v1/chat/completions` with `"stream": true` (OpenAI chat chunks, `[DONE]` at the end;
  usage in the last chunk when `stream_options.include_usage`);
- `POST /v1/responses` (OpenAI Responses API), streamed or not.

`server.text` is what every answer says (split into one chunk per word when streamed);
`server.fail = (status, message)` makes the next request fail with that error body;
`server.gate` (a `threading.Event`), when set to an unset event, holds a stream after its first
chunk until the test sets it, so a test can see a chunk arrive before the stream ends.
Every request body is recorded in `server.requests`.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    body = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {body}\n\n".encode()


class FakeAnthropic:
    def __init__(self) -> None:
        self.text = "Paris is the capital of France."
        self.usage = (11, 7)
        self.fail: tuple[int, str] | None = None
        self.gate: threading.Event | None = None
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        """The base URL for `anthropic.Anthropic(base_url=...)`."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def openai_url(self) -> str:
        """The base URL for `openai.OpenAI(base_url=...)`."""
        return self.url + "/v1"

    def start(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self.gate is not None:
            self.gate.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # -- answers ---------------------------------------------------------------------------
    def _words(self) -> list[str]:
        words = self.text.split(" ")
        return [w if i == len(words) - 1 else w + " " for i, w in enumerate(words)]

    def _message(self, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": "msg_fake1",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-test"),
            "content": [{"type": "text", "text": self.text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": self.usage[0], "output_tokens": self.usage[1]},
        }

    def _message_events(self, body: dict[str, Any]) -> Iterator[bytes]:
        start = {**self._message(body), "content": [], "stop_reason": None}
        start["usage"] = {"input_tokens": self.usage[0], "output_tokens": 0}
        yield _sse("message_start", {"type": "message_start", "message": start})
        yield _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        )
        for word in self._words():
            delta = {"type": "text_delta", "text": word}
            yield _sse(
                "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
            )
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
        yield _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": self.usage[1]},
            },
        )
        yield _sse("message_stop", {"type": "message_stop"})

    def _chat_events(self, body: dict[str, Any]) -> Iterator[bytes]:
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1}
        base["model"] = body.get("model", "test-model")
        for word in self._words():
            choice = {
                "index": 0,
                "delta": {"role": "assistant", "content": word},
                "finish_reason": None,
            }
            yield _sse(None, {**base, "choices": [choice]})
        yield _sse(None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = {
                "prompt_tokens": self.usage[0],
                "completion_tokens": self.usage[1],
                "total_tokens": sum(self.usage),
            }
            yield _sse(None, {**base, "choices": [], "usage": usage})
        yield _sse(None, "[DONE]")

    def _response(self, body: dict[str, Any], status: str = "completed") -> dict[str, Any]:
        return {
            "id": "resp_fake1",
            "object": "response",
            "created_at": 1,
            "status": status,
            "model": body.get("model", "test-model"),
            "output": [
                {
                    "type": "message",
                    "id": "msg_1",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": self.text, "annotations": []}],
                }
            ],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": self.usage[0],
                "output_tokens": self.usage[1],
                "total_tokens": sum(self.usage),
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }

    def _response_events(self, body: dict[str, Any]) -> Iterator[bytes]:
        created = {**self._response(body, "in_progress"), "output": []}
        yield _sse(
            "response.created",
            {"type": "response.created", "sequence_number": 0, "response": created},
        )
        for n, word in enumerate(self._words(), start=1):
            yield _sse(
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "sequence_number": n,
                    "item_id": "msg_1",
                    "output_index": 0,
                    "content_index": 0,
                    "delta": word,
                    "logprobs": [],
                },
            )
        done = {
            "type": "response.completed",
            "sequence_number": 99,
            "response": self._response(body),
        }
        yield _sse("response.completed", done)

    # -- serving ---------------------------------------------------------------------------
    def handle(self, handler: _Handler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = json.loads(handler.rfile.read(length) or b"{}")
        path = handler.path.split("?", 1)[0]
        with self._lock:
            self.requests.append({"path": path, "body": body})
            fail, self.fail = self.fail, None
        if fail is not None:
            kind = "invalid_request_error" if fail[0] < 500 else "api_error"
            error = {"type": "error", "error": {"type": kind, "message": fail[1]}}
            if "chat" in path or "responses" in path:
                error = {"error": {"message": fail[1], "type": kind, "code": None}}
            return self._send_json(handler, fail[0], error)
        stream = body.get("stream") is True
        if path == "/v1/messages":
            if not stream:
                return self._send_json(handler, 200, self._message(body))
            return self._send_events(handler, self._message_events(body))
        if path == "/v1/chat/completions" and stream:
            return self._send_events(handler, self._chat_events(body))
        if path == "/v1/responses":
            if not stream:
                return self._send_json(handler, 200, self._response(body))
            return self._send_events(handler, self._response_events(body))
        self._send_json(
            handler, 404, {"error": {"message": f"no route {path}", "type": "not_found"}}
        )

    def _send_json(self, handler: _Handler, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _send_events(self, handler: _Handler, events: Iterator[bytes]) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        gate = self.gate
        try:
            for index, event in enumerate(events):
                handler.wfile.write(event)
                handler.wfile.flush()
                if index == 1 and gate is not None:
                    gate.wait(10)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client closed the stream early


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes: no 40 ms stall
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.server.fake.handle(self)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    fake: FakeAnthropic

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def serve() -> Iterator[FakeAnthropic]:
    """Generator body of a pytest fixture: start, yield, stop."""
    server = FakeAnthropic().start()
    try:
        yield server
    finally:
        server.stop()


__all__ = ["FakeAnthropic", "serve"]
