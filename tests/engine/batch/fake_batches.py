"""A loopback fake of OpenAI's Batch API and Anthropic's Message Batches (standard library only).

One threading HTTP server on 127.0.0.1 at a free port serves:

- OpenAI: `POST /v1/files` (multipart, purpose=batch), `GET /v1/files/{id}/content`,
  `POST /v1/batches`, `GET /v1/batches` (the list), `GET /v1/batches/{id}`, `POST /v1/batches/{id}/cancel`, and the live
  `POST /v1/chat/completions` (for the live fallback and the live run compared with a batch);
- Anthropic: `POST /v1/messages/batches`, `GET /v1/messages/batches/{id}`,
  `GET /v1/messages/batches/{id}/results`, `POST /v1/messages/batches/{id}/cancel`.

Every request line is answered by `server.answer`, a `tests.models.fake_openai` Behaviour (the
same one a live call gets, so a batched run and a live run see the same answers); Anthropic lines
are shown to it in OpenAI's shape and its completion turned into a Message. A batch is
`validating` on its first poll, `in_progress` until `delay` seconds after it was made, then
`finalizing` for one poll, then `completed`. Faults: `line_errors` (statuses given to the next
lines answered, e.g. 500 or 400), `expire` (that many of the next batches end `expired` after
answering only their first `answered_before_expiry` lines), `fail_validation`, `lose_files`
(downloads that answer 404, as for a batch past its keeping time) and `cancel`.
"""

from __future__ import annotations

import collections
import email.parser
import email.policy
import itertools
import json
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.models.fake_openai import CHAT_PATH, Behaviour, Ok, RecordedRequest


@dataclass
class FakeBatch:
    id: str
    kind: str  # "openai" or "anthropic"
    lines: list[dict[str, Any]]
    created: float
    status: str = "validating"
    polls: int = 0
    output: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    cancelled: bool = False
    input_file: str = ""

    @property
    def custom_ids(self) -> list[str]:
        return [line["custom_id"] for line in self.lines]


class FakeBatches:
    def __init__(self) -> None:
        self.answer: Behaviour = Ok()
        self.delay = 0.0
        self.line_errors: collections.deque[int] = collections.deque()
        self.expire = 0
        self.answered_before_expiry = 0
        self.fail_validation = False
        self.lose_files = 0  # the next this many file downloads answer 404 (the file is gone)
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, FakeBatch] = {}
        self.live: list[RecordedRequest] = []
        self.log: list[tuple[str, str]] = []  # (method, path) of every request
        self._ids = itertools.count(1)
        self._lock = threading.RLock()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    # -- control ----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> FakeBatches:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def created(self) -> list[FakeBatch]:
        with self._lock:
            return list(self.batches.values())

    def sent_custom_ids(self) -> list[str]:
        """Every custom id of every batch made, in order (a request sent twice shows twice)."""
        return [cid for batch in self.created() for cid in batch.custom_ids]

    # -- serving ----------------------------------------------------------------------------
    def handle(self, handler: _Handler, method: str) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        path = handler.path.split("?", 1)[0]
        with self._lock:
            self.log.append((method, path))
        parts = path.strip("/").split("/")  # ["v1", ...]
        status, body = self._route(method, parts[1:], raw, handler.headers.get("Content-Type", ""))
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _route(self, method: str, parts: list[str], raw: bytes, ctype: str) -> tuple[int, Any]:
        with self._lock:
            if method == "POST" and parts == ["chat", "completions"]:
                return self._live(json.loads(raw))
            if method == "POST" and parts == ["files"]:
                return self._upload(raw, ctype)
            if method == "GET" and len(parts) == 3 and parts[0] == "files":
                if self.lose_files:
                    self.lose_files -= 1
                    return _missing("file")
                data = self.files.get(parts[1])
                return (200, data) if data is not None else _missing("file")
            if method == "GET" and parts == ["batches"]:  # newest first, as OpenAI lists them
                made = [b for b in self.batches.values() if b.kind == "openai"]
                return 200, {"object": "list", "data": [self._view(b) for b in reversed(made)]}
            if method == "POST" and parts == ["batches"]:
                return self._create_openai(json.loads(raw))
            if method == "POST" and parts == ["messages", "batches"]:
                return self._create_anthropic(json.loads(raw))
            anthropic = parts[:2] == ["messages", "batches"]
            rest = parts[2:] if anthropic else parts[1:]
            if (anthropic or parts[:1] == ["batches"]) and rest:
                batch = self.batches.get(rest[0])
                if batch is None:
                    return _missing("batch")
                if method == "POST" and rest[1:] == ["cancel"]:
                    batch.cancelled = True
                    return 200, self._view(batch)
                if method == "GET" and rest[1:] == ["results"]:
                    return 200, "".join(json.dumps(line) + "\n" for line in batch.output).encode()
                if method == "GET" and len(rest) == 1:
                    self._advance(batch)
                    return 200, self._view(batch)
            return _missing("route")

    def _live(self, body: dict[str, Any]) -> tuple[int, Any]:
        record = RecordedRequest(time.monotonic(), CHAT_PATH, body, {}, 1)
        self.live.append(record)
        reply = self.answer.respond(record)
        return reply.status, reply.payload

    def _upload(self, raw: bytes, ctype: str) -> tuple[int, Any]:
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {ctype}\r\n\r\n".encode() + raw
        )
        content = b""
        for part in message.iter_parts():
            if part.get_param("name", header="content-disposition") == "file":
                content = part.get_payload(decode=True) or b""
        file_id = f"file-{next(self._ids)}"
        self.files[file_id] = content
        return 200, {"id": file_id, "object": "file", "purpose": "batch", "bytes": len(content)}

    def _create_openai(self, body: dict[str, Any]) -> tuple[int, Any]:
        content = self.files.get(body.get("input_file_id", ""))
        if content is None:
            return _missing("input file")
        lines = [json.loads(line) for line in content.decode().splitlines() if line.strip()]
        batch = FakeBatch(f"batch_{next(self._ids)}", "openai", lines, time.monotonic())
        batch.input_file = body["input_file_id"]
        self.batches[batch.id] = batch
        return 200, self._view(batch)

    def _create_anthropic(self, body: dict[str, Any]) -> tuple[int, Any]:
        batch = FakeBatch(
            f"msgbatch_{next(self._ids)}", "anthropic", body["requests"], time.monotonic()
        )
        batch.status = "in_progress"
        self.batches[batch.id] = batch
        return 200, self._view(batch)

    # -- a batch's life ---------------------------------------------------------------------
    def _advance(self, batch: FakeBatch) -> None:
        batch.polls += 1
        if batch.status in ("completed", "expired", "cancelled", "failed", "ended"):
            return
        if batch.kind == "openai" and batch.polls == 1:
            batch.status = "failed" if self.fail_validation else "validating"
            return
        if batch.cancelled:
            self._finish(batch, answered=0, end="cancelled")
        elif time.monotonic() - batch.created < self.delay:
            batch.status = "in_progress"
        elif batch.kind == "openai" and batch.status != "finalizing":
            batch.status = "finalizing"
        elif self.expire:
            self.expire -= 1
            self._finish(batch, answered=self.answered_before_expiry, end="expired")
        else:
            self._finish(batch, answered=len(batch.lines), end="completed")

    def _finish(self, batch: FakeBatch, *, answered: int, end: str) -> None:
        for position, line in enumerate(batch.lines):
            if position >= answered:
                batch.errors.append(_unanswered(batch, line, end))
                continue
            status = self.line_errors.popleft() if self.line_errors else None
            if batch.kind == "openai":
                self._answer_openai(batch, line, status)
            else:
                batch.output.append(_answer_anthropic(self.answer, line, status))
        if batch.kind == "anthropic":
            batch.output.extend(batch.errors)
            batch.status = "ended"
        else:
            batch.status = end

    def _answer_openai(self, batch: FakeBatch, line: dict[str, Any], status: int | None) -> None:
        record = RecordedRequest(time.monotonic(), CHAT_PATH, line["body"], {}, 1)
        reply = self.answer.respond(record)
        code = status or reply.status
        body = reply.payload if status is None else {"error": {"message": f"status {status}"}}
        item = {
            "id": f"batch_req_{next(self._ids)}",
            "custom_id": line["custom_id"],
            "response": {"status_code": code, "request_id": "req", "body": body},
            "error": None,
        }
        (batch.output if code == 200 else batch.errors).append(item)

    def _view(self, batch: FakeBatch) -> dict[str, Any]:
        ended = batch.status in ("completed", "expired", "cancelled", "failed", "ended")
        if batch.kind == "anthropic":
            kinds = collections.Counter(line["result"]["type"] for line in batch.output)
            return {
                "id": batch.id,
                "type": "message_batch",
                "processing_status": batch.status,
                "request_counts": {
                    "processing": 0 if ended else len(batch.lines),
                    "succeeded": kinds["succeeded"],
                    "errored": kinds["errored"],
                    "canceled": kinds["canceled"],
                    "expired": kinds["expired"],
                },
                "results_url": f"{self.url}/messages/batches/{batch.id}/results" if ended else None,
            }
        output_id = error_id = None
        if ended and batch.output:
            output_id = self._file(batch.output)
        if ended and batch.errors:
            error_id = self._file(batch.errors)
        failed = batch.status == "failed"
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": batch.input_file,
            "status": batch.status,
            "output_file_id": output_id,
            "error_file_id": error_id,
            "errors": {"data": [{"code": "invalid", "message": "bad file"}]} if failed else None,
            "request_counts": {
                "total": len(batch.lines),
                "completed": len(batch.output),
                "failed": len(batch.errors),
            },
        }

    def _file(self, lines: list[dict[str, Any]]) -> str:
        file_id = f"file-{next(self._ids)}"
        self.files[file_id] = "".join(json.dumps(line) + "\n" for line in lines).encode()
        return file_id


def _missing(what: str) -> tuple[int, Any]:
    return 404, {"error": {"message": f"no such {what}", "type": "not_found_error"}}


def _unanswered(batch: FakeBatch, line: dict[str, Any], end: str) -> dict[str, Any]:
    if batch.kind == "anthropic":
        kind = "canceled" if end == "cancelled" else "expired"
        return {"custom_id": line["custom_id"], "result": {"type": kind}}
    code = "batch_cancelled" if end == "cancelled" else "batch_expired"
    return {
        "custom_id": line["custom_id"],
        "response": None,
        "error": {"code": code, "message": f"this request could not be run: {end}"},
    }


def _answer_anthropic(
    answer: Behaviour, line: dict[str, Any], status: int | None
) -> dict[str, Any]:
    """An Anthropic line shown to the OpenAI-shaped behaviour, its completion made a Message."""
    params = line["params"]
    messages = list(params["messages"])
    if params.get("system"):
        messages.insert(0, {"role": "system", "content": params["system"]})
    body: dict[str, Any] = {"messages": messages}
    tool = (params.get("tool_choice") or {}).get("name")
    if tool:
        body["tool_choice"] = {"type": "function", "function": {"name": tool}}
    if status is not None:
        kind = "api_error" if status >= 500 else "invalid_request_error"
        error = {"type": "error", "error": {"type": kind, "message": f"status {status}"}}
        return {"custom_id": line["custom_id"], "result": {"type": "errored", "error": error}}
    payload = (
        answer.respond(RecordedRequest(time.monotonic(), CHAT_PATH, body, {}, 1)).payload or {}
    )
    choice = payload["choices"][0]
    calls = choice["message"].get("tool_calls")
    if tool and calls:
        content = [
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": tool,
                "input": json.loads(calls[0]["function"]["arguments"]),
            }
        ]
    else:
        content = [{"type": "text", "text": choice["message"].get("content") or ""}]
    usage = payload.get("usage") or {}
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": params["model"],
        "content": content,
        "stop_reason": "max_tokens" if choice.get("finish_reason") == "length" else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage.get("prompt_tokens", 0),
            "output_tokens": usage.get("completion_tokens", 0),
        },
    }
    return {"custom_id": line["custom_id"], "result": {"type": "succeeded", "message": message}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.server.fake.handle(self, "POST")

    def do_GET(self) -> None:
        self.server.fake.handle(self, "GET")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    fake: FakeBatches

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def serve() -> Iterator[FakeBatches]:
    """Generator body of a pytest fixture: start, yield, stop."""
    server = FakeBatches().start()
    try:
        yield server
    finally:
        server.stop()
