"""A tiny OpenAI-compatible judge on 127.0.0.1 for end-to-end benchmark tests (stdlib only).

It answers the two prompts faithfulness uses, without any model:
- the claims prompt: one claim per sentence of the <text> block, as {"claims": [...]};
- the verdict prompt: "N. yes" when at least 70% of a statement's words (4+ letters) occur in
  the <source> block, else "N. no".
Any other request gets an HTTP 400, so an unexpected prompt shows up as an error cell.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _block(text: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", text, flags=re.DOTALL)
    return found.group(1) if found else ""


def _words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z0-9]+", text.lower()) if len(word) >= 4}


def answer(messages: list[dict[str, Any]]) -> str | None:
    system = str(messages[0].get("content", "")) if messages else ""
    user = str(messages[-1].get("content", "")) if messages else ""
    if "split a piece of text into claims" in system:
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", _block(user, "text")) if s.strip()]
        return json.dumps({"claims": sentences})
    if "check numbered statements" in system:
        source = _words(_block(user, "source"))
        lines = []
        for number, statement in re.findall(r"^(\d+)\. (.*)$", _block(user, "items"), flags=re.MULTILINE):
            words = _words(statement)
            supported = not words or len(words & source) / len(words) >= 0.7
            lines.append(f"{number}. {'yes' if supported else 'no'}")
        return "\n".join(lines)
    return None


class JSONHandler(BaseHTTPRequestHandler):
    """Quiet, and answers with JSON."""

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Handler(JSONHandler):
    server: LoopbackJudge

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        messages = request.get("messages") or []
        text = answer(messages) if self.path.endswith("/chat/completions") else None
        with self.server.lock:
            self.server.requests += 1
        if text is None:
            self._send(400, {"error": {"message": "the loopback judge does not know this prompt", "type": "invalid"}})
            return
        prompt_chars = sum(len(str(m.get("content", ""))) for m in messages)
        self._send(200, {
            "id": f"chatcmpl-{time.monotonic_ns()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "loopback"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_chars // 4, "completion_tokens": len(text) // 4 + 1,
                      "total_tokens": prompt_chars // 4 + len(text) // 4 + 1},
        })


class LoopbackServer(ThreadingHTTPServer):
    """A server on 127.0.0.1 (random port) in a thread, counting requests; `with` starts and stops it."""

    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.lock = threading.Lock()
        self.requests = 0
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


class LoopbackJudge(LoopbackServer):
    def __init__(self) -> None:
        super().__init__(_Handler)

    @property
    def model_string(self) -> str:
        return f"openai/loopback-judge@{self.url}"
