"""A scriptable, fault-injecting OpenAI-compatible HTTP server for tests (standard library only).

It listens on 127.0.0.1 at a free port and serves `POST /v1/chat/completions` and
`POST /v1/embeddings`. Each request takes the next behaviour from its endpoint's script (a
queue); when the script is empty, the endpoint's default behaviour answers. Every request is
recorded (arrival time, parsed body, headers, requests in flight on arrival) so tests can
assert on what the client really sent and when.

    server.script(rate_limited(retry_after=0.3), ok('{"score": 1}'))
    server.default = ok('{"score": 0.5}', usage=(12, 3))
    server.capacity = 4          # answer 429 to requests beyond 4 in flight
    server.capacity_by_path[CHAT_PATH] = 8   # ... or beyond 8 chat requests in flight

Behaviours: `ok`, `rate_limited`, `server_error`, `error`, `hang`, `malformed_json`,
`schema_violation`, `truncated`, `reject_response_format`, `dynamic`, and for embeddings
`embed`. Faults on the wire: `malformed_body` (200 with a body that is not JSON),
`invalid_utf8` (200 whose body is not UTF-8), `empty_choices`, `reset` (the connection is cut
before any answer), `cut_body` (headers, then half the body, then the connection is cut) and
`drip` (a whole answer sent a few bytes at a time).
"""

from __future__ import annotations

import collections
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"
EMBEDDINGS_PATH = "/v1/embeddings"


# -- what a behaviour produces ----------------------------------------------------------------
@dataclass
class Reply:
    status: int
    payload: dict[str, Any] | None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw: bytes | None = None  # sent instead of the JSON-encoded payload
    reset: bool = False  # close the connection without answering
    cut_after: int | None = None  # send this many body bytes (of a longer body), then close
    drip: float = 0.0  # seconds between chunks of `drip_bytes` bytes
    drip_bytes: int = 8


@dataclass
class RecordedRequest:
    """One request as the server saw it."""

    time: float  # time.monotonic() on arrival
    path: str
    body: dict[str, Any]
    headers: dict[str, str]  # lower-cased names
    in_flight: int  # requests in flight at the server, this one included
    status: int | None = None  # the status answered (None while running)
    done: float | None = None  # time.monotonic() when the answer was sent

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])

    @property
    def last_user_text(self) -> str:
        for message in reversed(self.messages):
            if message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, str):
                    return content
                return "\n".join(part.get("text", "") for part in content or [])
        return ""

    @property
    def forced_tool(self) -> str | None:
        """The function name when the request forces a tool call."""
        choice = self.body.get("tool_choice")
        if isinstance(choice, dict) and choice.get("type") == "function":
            return choice["function"]["name"]
        return None

    @property
    def response_format_type(self) -> str | None:
        fmt = self.body.get("response_format")
        return fmt.get("type") if isinstance(fmt, dict) else None


class Behaviour:
    """How to answer one request."""

    def respond(self, request: RecordedRequest) -> Reply:  # pragma: no cover - abstract
        raise NotImplementedError


# -- chat completions -------------------------------------------------------------------------
Text = str | list[str] | Callable[[RecordedRequest], str]
UsageSpec = tuple[int, int] | Callable[[RecordedRequest], tuple[int, int]]


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+|\s+|[^\w\s]", text) or [text]


def _logprobs(text: str, top: int) -> dict[str, Any]:
    content = []
    for position, token in enumerate(_tokens(text)):
        chosen = -0.01 * (position + 1)
        alternatives = [{"token": token, "logprob": chosen, "bytes": list(token.encode())}]
        for rank in range(1, top):
            alt = f"alt{rank}"
            alternatives.append(
                {"token": alt, "logprob": chosen - rank, "bytes": list(alt.encode())}
            )
        content.append(
            {
                "token": token,
                "logprob": chosen,
                "bytes": list(token.encode()),
                "top_logprobs": alternatives[:top],
            }
        )
    return {"content": content, "refusal": None}


def completion_payload(
    request: RecordedRequest, texts: list[str], usage: tuple[int, int], finish_reason: str
) -> dict[str, Any]:
    """A chat.completion body: one choice per `n`, a tool call when one is forced, logprobs when asked."""
    n = int(request.body.get("n") or 1)
    tool = request.forced_tool
    choices = []
    for index in range(n):
        text = texts[index % len(texts)]
        if tool is not None:
            message: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{index}",
                        "type": "function",
                        "function": {"name": tool, "arguments": text},
                    }
                ],
            }
        else:
            message = {"role": "assistant", "content": text}
        choice: dict[str, Any] = {
            "index": index,
            "message": message,
            "finish_reason": finish_reason,
        }
        if request.body.get("logprobs"):
            choice["logprobs"] = _logprobs(text, int(request.body.get("top_logprobs") or 0))
        choices.append(choice)
    prompt_tokens, completion_tokens = usage
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.body.get("model", "test-model"),
        "choices": choices,
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


@dataclass
class Ok(Behaviour):
    text: Text = '{"score": 1.0, "reason": "fine"}'
    usage: UsageSpec = (10, 5)
    finish_reason: str = "stop"
    latency: float = 0.0

    def respond(self, request: RecordedRequest) -> Reply:
        if callable(self.text):
            texts = [self.text(request)]
        elif isinstance(self.text, list):
            texts = self.text
        else:
            texts = [self.text]
        usage = self.usage(request) if callable(self.usage) else self.usage
        return Reply(
            200, completion_payload(request, texts, usage, self.finish_reason), delay=self.latency
        )


def ok(
    text: Text = '{"score": 1.0, "reason": "fine"}',
    *,
    usage: UsageSpec = (10, 5),
    finish_reason: str = "stop",
    latency: float = 0.0,
) -> Ok:
    """A normal completion whose content (or forced tool-call arguments) is `text`."""
    return Ok(text, usage, finish_reason, latency)


def malformed_json(latency: float = 0.0) -> Ok:
    return Ok("Sure! The score is high, I would say about nine out of ten.", latency=latency)


def schema_violation(latency: float = 0.0) -> Ok:
    return Ok('{"verdict": "yes"}', latency=latency)


def truncated(
    text: str = '{"score": 0.5, "reason": "because the answer cov', *, usage: UsageSpec = (10, 5)
) -> Ok:
    return Ok(text, usage, "length")


def _error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


@dataclass
class ErrorReply(Behaviour):
    status: int
    message: str = "error"
    headers: dict[str, str] = field(default_factory=dict)
    latency: float = 0.0

    def respond(self, request: RecordedRequest) -> Reply:
        return Reply(
            self.status, _error_body(self.message, "test_error"), dict(self.headers), self.latency
        )


def rate_limited(
    retry_after: float | None = 0.3, *, retry_after_ms: float | None = None
) -> ErrorReply:
    """429 with `Retry-After` (seconds) and/or `retry-after-ms`."""
    headers = {}
    if retry_after is not None:
        headers["Retry-After"] = f"{retry_after:g}"
    if retry_after_ms is not None:
        headers["retry-after-ms"] = f"{retry_after_ms:g}"
    return ErrorReply(429, "Rate limit reached for requests", headers)


def server_error(status: int = 500, *, retry_after: float | None = None) -> ErrorReply:
    headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
    return ErrorReply(status, "The server had an error while processing your request.", headers)


def error(status: int, message: str = "error") -> ErrorReply:
    return ErrorReply(status, message)


@dataclass
class Hang(Behaviour):
    seconds: float
    then: Behaviour = field(default_factory=Ok)

    def respond(self, request: RecordedRequest) -> Reply:
        reply = self.then.respond(request)
        reply.delay = self.seconds
        return reply


def hang(seconds: float = 5.0) -> Hang:
    """Answer only after `seconds` (longer than the client's timeout)."""
    return Hang(seconds)


@dataclass
class RejectResponseFormat(Behaviour):
    """400 for request shapes this 'server' does not support; otherwise answer with `then`."""

    then: Behaviour = field(default_factory=Ok)
    formats: tuple[str, ...] = ("json_schema",)
    tools: bool = False

    def respond(self, request: RecordedRequest) -> Reply:
        if request.response_format_type in self.formats:
            return Reply(
                400,
                _error_body(
                    f"response_format {request.response_format_type!r} is not supported",
                    "invalid_request_error",
                ),
            )
        if self.tools and request.body.get("tools"):
            return Reply(400, _error_body("tools are not supported", "invalid_request_error"))
        return self.then.respond(request)


def reject_response_format(
    then: Behaviour | None = None,
    *,
    formats: tuple[str, ...] = ("json_schema",),
    tools: bool = False,
) -> RejectResponseFormat:
    return RejectResponseFormat(then or Ok(), formats, tools)


@dataclass
class Dynamic(Behaviour):
    choose: Callable[[RecordedRequest], Behaviour]

    def respond(self, request: RecordedRequest) -> Reply:
        return self.choose(request).respond(request)


def dynamic(choose: Callable[[RecordedRequest], Behaviour]) -> Dynamic:
    """Pick the behaviour from the request (e.g. per prompt)."""
    return Dynamic(choose)


# -- faults on the wire -----------------------------------------------------------------------
@dataclass
class Wire(Behaviour):
    """A normal completion (`then`) delivered badly."""

    then: Behaviour = field(default_factory=Ok)
    raw: Callable[[bytes], bytes] | None = None  # rewrites the encoded body
    reset: bool = False
    cut: bool = False
    drip: float = 0.0
    payload: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    def respond(self, request: RecordedRequest) -> Reply:
        reply = self.then.respond(request)
        if self.payload is not None and reply.payload is not None:
            reply.payload = self.payload(reply.payload)
        body = json.dumps(reply.payload if reply.payload is not None else {}).encode()
        if self.raw is not None:
            reply.raw = self.raw(body)
        reply.reset = self.reset
        if self.cut:
            reply.cut_after = len(body) // 2
        reply.drip = self.drip
        return reply


def malformed_body(then: Behaviour | None = None) -> Wire:
    """200 with a body that is not JSON (a proxy's HTML page, a truncated write)."""
    return Wire(
        then or Ok(), raw=lambda body: b"<html><body>502 Bad Gateway</body></html>" + body[:20]
    )


def invalid_utf8(then: Behaviour | None = None) -> Wire:
    """200 with JSON whose bytes are not valid UTF-8 (two stray bytes open the message content)."""
    return Wire(
        then or Ok(), raw=lambda body: body.replace(b'"content": "', b'"content": "\xff\xfe', 1)
    )


def empty_choices(then: Behaviour | None = None) -> Wire:
    return Wire(then or Ok(), payload=lambda p: {**p, "choices": []})


def reset(then: Behaviour | None = None) -> Wire:
    """The connection is closed before any answer."""
    return Wire(then or Ok(), reset=True)


def cut_body(then: Behaviour | None = None) -> Wire:
    """The headers promise a whole body; half of it arrives, then the connection closes."""
    return Wire(then or Ok(), cut=True)


def drip(seconds_per_chunk: float = 0.2, then: Behaviour | None = None) -> Wire:
    """A whole, correct answer sent 8 bytes at a time: never idle long enough for a read timeout."""
    return Wire(then or Ok(), drip=seconds_per_chunk)


# -- embeddings -------------------------------------------------------------------------------
def embed_vector(text: str) -> list[float]:
    """The deterministic vector the server returns for `text`."""
    return [float(len(text)), float(sum(map(ord, text)) % 997), 1.0]


@dataclass
class Embed(Behaviour):
    reverse: bool = False  # list the data items in reverse order (their `index` stays right)
    drop: int = 0  # leave out this many items at the end
    tokens_per_text: int = 3

    def respond(self, request: RecordedRequest) -> Reply:
        inputs = request.body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        data = [
            {"object": "embedding", "index": i, "embedding": embed_vector(t)}
            for i, t in enumerate(texts)
        ]
        if self.drop:
            data = data[: -self.drop]
        if self.reverse:
            data.reverse()
        tokens = self.tokens_per_text * len(texts)
        return Reply(
            200,
            {
                "object": "list",
                "data": data,
                "model": request.body.get("model", "emb"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )


def embed(*, reverse: bool = False, drop: int = 0, tokens_per_text: int = 3) -> Embed:
    return Embed(reverse, drop, tokens_per_text)


# -- the server -------------------------------------------------------------------------------
class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY: the headers and the body are two writes, and with Nagle's algorithm the body
    # waited for the client's delayed ACK of the headers, 40 ms on every answer (as real servers
    # such as uvicorn or vLLM do not).
    disable_nagle_algorithm = True
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.server.fake._handle(self)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default listen backlog is 5: a client opening a few hundred connections at
    # once (as a run at full concurrency does) overflowed it, and the dropped handshakes stalled
    # requests for seconds to minutes. uvicorn's default is 2048.
    request_queue_size = 2048
    block_on_close = False
    fake: FakeOpenAI

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client closed a kept-alive connection (e.g. after its timeout)
        super().handle_error(request, client_address)


class FakeOpenAI:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._scripts: dict[str, collections.deque[Behaviour]] = {
            CHAT_PATH: collections.deque(),
            EMBEDDINGS_PATH: collections.deque(),
        }
        self.default: Behaviour = Ok()
        self.embedding_default: Behaviour = Embed()
        self.capacity: int | None = None  # 429 beyond this many requests in flight
        # 429 beyond this many in flight on one path (e.g. chat and embeddings counted apart)
        self.capacity_by_path: dict[str, int] = {}
        self.capacity_retry_after: float | None = None
        self.capacity_retry_after_ms: float | None = None  # also sends `retry-after-ms`
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.in_flight_by_path: dict[str, int] = collections.Counter()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-openai",
            daemon=True,
        )

    # -- control --------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def model_string(self, model: str = "test-model") -> str:
        return f"vllm/{model}@{self.url}"

    def script(self, *behaviours: Behaviour) -> None:
        """Queue behaviours for the next chat requests, in order."""
        with self._lock:
            self._scripts[CHAT_PATH].extend(behaviours)

    def script_embeddings(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self._scripts[EMBEDDINGS_PATH].extend(behaviours)

    def pending(self) -> int:
        with self._lock:
            return len(self._scripts[CHAT_PATH])

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == CHAT_PATH]

    @property
    def embedding_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == EMBEDDINGS_PATH]

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def reset_records(self) -> None:
        with self._lock:
            self.requests.clear()
            self.max_in_flight = 0

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stopping.set()  # wakes hanging handlers
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # -- serving --------------------------------------------------------------------------
    def _handle(self, handler: _Handler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        path = handler.path.split("?", 1)[0]
        with self._lock:
            self.in_flight += 1
            self.in_flight_by_path[path] += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            record = RecordedRequest(
                time=time.monotonic(),
                path=path,
                body=body,
                headers={k.lower(): v for k, v in handler.headers.items()},
                in_flight=self.in_flight,
            )
            self.requests.append(record)
            path_capacity = self.capacity_by_path.get(path)
            over_capacity = (self.capacity is not None and self.in_flight > self.capacity) or (
                path_capacity is not None and self.in_flight_by_path[path] > path_capacity
            )
            behaviour: Behaviour | None = None
            if path in self._scripts and not over_capacity:
                script = self._scripts[path]
                behaviour = (
                    script.popleft()
                    if script
                    else (self.default if path == CHAT_PATH else self.embedding_default)
                )
        try:
            if over_capacity:
                headers = {}
                if self.capacity_retry_after is not None:
                    headers["Retry-After"] = f"{self.capacity_retry_after:g}"
                if self.capacity_retry_after_ms is not None:
                    headers["retry-after-ms"] = f"{self.capacity_retry_after_ms:g}"
                reply = Reply(
                    429, _error_body("Too many concurrent requests", "rate_limit"), headers
                )
            elif behaviour is None:
                reply = Reply(404, _error_body(f"no route {path}", "not_found"))
            else:
                reply = behaviour.respond(record)
            if reply.delay:
                self._stopping.wait(reply.delay)
            record.status = reply.status
            self._send(handler, reply, lambda: self._finish(record, path))
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # the client gave up (timeout) and closed the connection
        finally:
            self._finish(record, path)

    def _finish(self, record: RecordedRequest, path: str) -> None:
        """Stop counting a request as in flight; the second call is a no-op.

        Called just before the reply's last bytes leave: once the client holds the whole reply it
        may free its slot and send the next request, and that request must not find this one
        still counted (a race that read as one request over the client's limit)."""
        with self._lock:
            if record.done is not None:
                return
            record.done = time.monotonic()
            self.in_flight -= 1
            self.in_flight_by_path[path] -= 1

    def _send(self, handler: _Handler, reply: Reply, finish: Callable[[], None]) -> None:
        if reply.reset:
            finish()
            handler.close_connection = True
            handler.connection.shutdown(2)  # socket.SHUT_RDWR: no status line at all
            return
        data = (
            reply.raw
            if reply.raw is not None
            else json.dumps(reply.payload if reply.payload is not None else {}).encode()
        )
        handler.send_response(reply.status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in reply.headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        if reply.cut_after is not None:
            handler.wfile.write(data[: reply.cut_after])
            handler.wfile.flush()
            finish()
            handler.close_connection = True
            handler.connection.shutdown(2)
            return
        if reply.drip:
            for start in range(0, len(data), reply.drip_bytes):
                if self._stopping.wait(reply.drip):
                    return
                if start + reply.drip_bytes >= len(data):
                    finish()
                handler.wfile.write(data[start : start + reply.drip_bytes])
                handler.wfile.flush()
            return
        finish()
        handler.wfile.write(data)
        handler.wfile.flush()


def serve() -> Iterator[FakeOpenAI]:
    """Generator body of the pytest fixture: start, yield, stop."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


__all__ = [
    "CHAT_PATH",
    "EMBEDDINGS_PATH",
    "Behaviour",
    "FakeOpenAI",
    "RecordedRequest",
    "Reply",
    "dynamic",
    "embed",
    "embed_vector",
    "error",
    "hang",
    "malformed_json",
    "ok",
    "rate_limited",
    "reject_response_format",
    "schema_violation",
    "serve",
    "server_error",
    "truncated",
]
