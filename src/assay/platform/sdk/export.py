"""Sending traces to the server without ever slowing down or breaking the application.

The application's thread only appends a finished record to a bounded deque (a lock and an append);
a few daemon threads (`senders`, 4 by default) each take a batch of up to 500 records, turn them
into JSON, compress the request with gzip and post it to `POST /api/v1/traces`, so that building
one batch, the network and the server's work on others overlap. Batches sent in parallel may
arrive out of order; each trace keeps its own `created_at`.

- Bounded: at most `max_queue` records wait; beyond that the OLDEST is dropped and counted
  (`stats()["dropped"]`), so a server that is down for hours costs a fixed amount of memory. While
  the server keeps up nothing is dropped: `benchmarks/tracing_overhead.py` measures how many
  traces a second reach a real `assay serve`.
- Never raising into the app: building a record, the callback and every HTTP failure are caught in
  the export threads. A failure is logged as ONE warning per kind (server unreachable, key refused,
  batch refused) until a batch gets through again.
- Down or slow server (transport error, timeout, 5xx, 429): the unsent traces go back to the head
  of the queue and the thread waits (backoff doubling up to `max_backoff`); the server ignores an
  id it already stored, so a re-sent trace is never doubled. Key refused (401/403) or batch
  refused (4xx): dropped and counted, as re-sending cannot succeed; a 422 naming one trace
  (`traces[3].model`) drops only that one.
- Request size: a request is at most 900 kB on the wire (the server's body cap is 1 MB) and
  `MAX_UNPACKED` unpacked. A server that does not take gzip (one from before it did: a 400, 415 or
  413, or a 422 about the body as a whole) gets plain JSON from then on, in requests under the
  cap. A single trace over 900 kB of JSON is sent without its raw request/response and span
  payloads.
- `login(off=True)`: records are not even queued.
- At exit, the queue gets `exit_timeout` seconds (default 2) to drain, then the process leaves.
"""

from __future__ import annotations

import atexit
import collections
import json
import logging
import os
import re
import threading
import time
import weakref
import zlib
from collections.abc import Callable
from typing import Any

import httpx

from assay.platform.sdk import client as sdk_client

log = logging.getLogger("assay.platform.tracing")

BATCH_SIZE = 500  # traces a request: the server takes at most 500
SENDERS = 4  # export threads, so as many requests in flight
MAX_BODY = (
    900_000  # bytes of a request on the wire, and of one trace's JSON: the server's cap is 1 MB
)
MAX_UNPACKED = 4_000_000  # bytes of a gzip request's JSON (a server unpacks up to 32 MB by default)
GZIP_LEVEL = 1  # JSON of traces shrinks 10-20 times even at the fastest level
# One record is (build function, argument, not before): the JSON body is made in the export
# thread; `build` may return None (nothing to send). `not before` (time.monotonic) holds a record
# back for a moment (a function-only trace that a following LLM call may still take in).
Record = tuple[Callable[[Any], dict[str, Any] | None], Any, float]


class Exporter:
    def __init__(
        self,
        *,
        max_queue: int = 10_000,
        batch_size: int = BATCH_SIZE,
        interval: float = 0.5,
        timeout: float = 5.0,
        max_backoff: float = 30.0,
        exit_timeout: float = 2.0,
        senders: int = SENDERS,
        gzip: bool = True,
        session: Callable[[], sdk_client.Client] = sdk_client.current,
    ) -> None:
        self.max_queue, self.batch_size, self.interval = max_queue, batch_size, interval
        self.timeout, self.max_backoff, self.exit_timeout = timeout, max_backoff, exit_timeout
        self.senders = max(1, senders)
        self.gzip = gzip  # turned off for good by a server that does not take gzip
        self._session = session
        self._queue: collections.deque[Record] = collections.deque()
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._idle = threading.Condition(self._lock)
        self._in_flight = 0  # records taken by the senders and not yet sent or given up
        self._stopping = False
        self._urgent = 0  # flushes waiting: no lingering
        self._threads: list[threading.Thread] = []
        self._http: httpx.Client | None = None
        self._http_for: tuple[str, str | None] | None = None
        self._http_lock = threading.Lock()
        self._warned: set[str] = set()
        reference = weakref.ref(self)

        # a forked child (a pre-forking web server) has no export thread: start its own
        def after_fork_in_child() -> None:
            exporter = reference()
            if exporter is not None:
                exporter._after_fork()

        os.register_at_fork(after_in_child=after_fork_in_child)
        self._counts = collections.Counter(
            {"queued": 0, "sent": 0, "duplicates": 0, "dropped": 0, "rejected": 0, "failed": 0}
        )

    # -- the application's side: cheap, never raises -------------------------------------------
    def submit(
        self, build: Callable[[Any], dict[str, Any] | None], item: Any, hold: float = 0.0
    ) -> None:
        if self._session().off:
            return
        not_before = time.monotonic() + hold if hold else 0.0
        with self._lock:
            if len(self._queue) >= self.max_queue:
                self._queue.popleft()
                self._counts["dropped"] += 1
            self._queue.append((build, item, not_before))
            self._counts["queued"] += 1
            if not self._threads:
                self._start()
            elif len(self._queue) >= self.batch_size:
                self._wake.notify()

    def _after_fork(self) -> None:
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._idle = threading.Condition(self._lock)
        self._http_lock = threading.Lock()
        self._threads, self._http, self._http_for, self._in_flight = [], None, None, 0

    def stats(self) -> dict[str, int]:
        """Counters: queued (ever), sent (accepted by the server), duplicates, dropped (queue
        full), rejected (refused by the server or no key), failed (could not be built), waiting."""
        with self._lock:
            return {**self._counts, "waiting": len(self._queue) + self._in_flight}

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every queued record was sent or given up; False if `timeout` passed first."""
        deadline = time.monotonic() + timeout
        with self._lock:
            self._urgent += 1
            try:
                while self._queue or self._in_flight:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or not any(t.is_alive() for t in self._threads):
                        return False
                    self._wake.notify_all()
                    self._idle.wait(min(remaining, 0.05))
                return True
            finally:
                self._urgent -= 1

    def shutdown(self, timeout: float | None = None) -> None:
        """Drain for at most `timeout` (default `exit_timeout`) seconds, then stop the threads."""
        self.flush(self.exit_timeout if timeout is None else timeout)
        with self._lock:
            self._stopping = True
            self._wake.notify_all()
            threads = list(self._threads)
        deadline = time.monotonic() + 1.0
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        if self._http is not None and not any(t.is_alive() for t in threads):
            self._http.close()

    # -- the export threads -----------------------------------------------------------------
    def _start(self) -> None:
        for n in range(self.senders):
            thread = threading.Thread(target=self._run, name=f"assay-trace-export-{n}", daemon=True)
            self._threads.append(thread)
            thread.start()

    def _take(self) -> list[Record] | None:
        with self._lock:
            lingered = False
            while True:
                while not self._queue and not self._stopping:
                    if not self._in_flight:
                        self._idle.notify_all()
                    self._wake.wait(self.interval)
                if not self._queue:
                    return None
                hurry = self._stopping or self._urgent > 0
                wait = self._queue[0][2] - time.monotonic()
                if not hurry and wait > 0:  # the oldest record is held back: so are the rest
                    self._wake.wait(min(wait, self.interval))
                    continue
                if not hurry and not lingered and len(self._queue) < self.batch_size:
                    lingered = True  # linger so that a busy app sends fewer requests
                    self._wake.wait(self.interval)
                    continue
                break
            now = time.monotonic()
            batch: list[Record] = []
            while self._queue and len(batch) < self.batch_size:
                if not hurry and self._queue[0][2] > now:
                    break
                batch.append(self._queue.popleft())
            self._in_flight += len(batch)
            return batch

    def _requeue(self, bodies: list[dict[str, Any]]) -> None:
        """Put built bodies back at the head (the server ignores an id it already has); the
        caller holds the lock."""
        room = self.max_queue - len(self._queue)
        keep = bodies[-room:] if room > 0 else []  # the oldest of all go first
        self._counts["dropped"] += len(bodies) - len(keep)
        self._queue.extendleft((_built, body, 0.0) for body in reversed(keep))

    def _count(self, counter: str, n: int) -> None:
        with self._lock:
            self._counts[counter] += n

    def _run(self) -> None:
        backoff = 0.0
        while True:
            batch = self._take()
            if batch is None:
                return
            try:
                unsent = self._deliver(self._build(batch))
            except Exception as exc:  # a bug here must not end the export
                self._warn("bug", f"a batch of traces could not be sent: {exc!r}")
                self._count("failed", len(batch))
                unsent = []
            with self._lock:
                if unsent:
                    self._requeue(unsent)
                self._in_flight -= len(batch)
                if not self._queue and not self._in_flight:
                    self._idle.notify_all()
                if not unsent:
                    backoff = 0.0
                    continue
                backoff = min(self.max_backoff, max(self.interval, backoff * 2))
                self._back_off(backoff)
                if self._stopping:
                    return  # shutdown's drain time is over: what is left is given up

    def _back_off(self, seconds: float) -> None:
        """Wait `seconds` (holding the lock's condition) before trying the server again: a busy
        app's submits do not cut it short, a flush shortens it to `interval`, shutdown ends it."""
        started = time.monotonic()
        while not self._stopping:
            until = started + (min(seconds, self.interval) if self._urgent else seconds)
            remaining = until - time.monotonic()
            if remaining <= 0:
                return
            self._wake.wait(remaining)

    def _build(self, batch: list[Record]) -> list[dict[str, Any]]:
        bodies = []
        for build, item, _not_before in batch:
            try:
                body = build(item)
            except Exception as exc:  # a record that cannot be built must not stop the rest
                self._warn("build", f"a trace could not be built and was dropped: {exc!r}")
                self._count("failed", 1)
                continue
            if body is not None:
                bodies.append(body)
        return bodies

    def _deliver(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send in requests under the server's caps; the bodies to try again later."""
        encoded = []
        for body in bodies:
            data = _encode(body)
            if len(data) > MAX_BODY:
                data = _encode(_shrunk(body))
            if len(data) > MAX_BODY:
                self._warn("refused", f"a trace of {len(data)} bytes is too large to send")
                self._count("rejected", 1)
                continue
            encoded.append((body, data))
        start = 0
        while start < len(encoded):
            gzipped = self.gzip
            end, size, cap = start, 0, MAX_UNPACKED if gzipped else MAX_BODY
            while end < len(encoded) and (end == start or size + len(encoded[end][1]) < cap):
                size, end = size + len(encoded[end][1]) + 1, end + 1
            content = _joined(encoded[start:end])
            if gzipped:
                content = _gzip(content)
                while len(content) > MAX_BODY and end - start > 1:  # hardly compressible
                    end = start + (end - start) // 2
                    content = _gzip(_joined(encoded[start:end]))
            outcome = self._post(end - start, content, gzipped)
            if outcome == "retry":
                return [body for body, _data in encoded[start:]]
            if outcome == "plain":  # this server does not take gzip: the same again, plain
                continue
            if isinstance(outcome, int):  # the server named one bad trace: drop it, resend
                del encoded[start + outcome]
                continue
            start = end
        return []

    def _client(self, session: sdk_client.Client) -> httpx.Client:
        wanted = (session.base_url, session.key)
        with self._http_lock:
            if self._http is None or self._http_for != wanted:
                if self._http is not None:
                    self._http.close()
                headers = {"Authorization": f"Bearer {session.key}"} if session.key else {}
                headers["Content-Type"] = "application/json"
                self._http = httpx.Client(
                    base_url=session.base_url,
                    timeout=self.timeout,
                    headers=headers,
                    limits=httpx.Limits(
                        max_connections=self.senders, max_keepalive_connections=self.senders
                    ),
                )
                self._http_for = wanted
            return self._http

    def _post(self, count: int, content: bytes, gzipped: bool) -> str | int:
        """ "sent", "rejected", "retry", "plain" (send it again without gzip), or the index of
        the one trace the server refused."""
        session = self._session()
        if session.off or not session.key:
            if not session.off:
                self._warn("auth", "traces are not sent: no API key (assay.platform.login(key))")
            self._count("rejected", count)
            return "rejected"
        headers = {"Content-Encoding": "gzip"} if gzipped else None
        try:
            response = self._client(session).post(
                sdk_client.API_PREFIX + "/traces", content=content, headers=headers
            )
        except (httpx.HTTPError, RuntimeError) as exc:  # RuntimeError: a client closed meanwhile
            self._warn(
                "down",
                f"cannot send traces to {session.base_url} ({type(exc).__name__}); "
                "they wait in a bounded queue (oldest dropped when full)",
            )
            return "retry"
        status = response.status_code
        if status < 300:
            self._warned.discard("down")  # a later failure is news again
            self._warned.discard("auth")
            self._warned.discard("refused")
            try:
                answer = response.json()
            except ValueError:
                answer = {}
            self._count("sent", int(answer.get("accepted", count)))
            self._count("duplicates", int(answer.get("duplicates", 0)))
            return "sent"
        if status >= 500 or status == 429:
            self._warn("down", f"the server answered {status} to a trace batch; retrying later")
            return "retry"
        if gzipped and _refuses_gzip(response):
            if self.gzip:
                self.gzip = False
                log.info(
                    "assay tracing: the server at %s does not take gzip (%s); sending plain JSON",
                    session.base_url,
                    status,
                )
            return "plain"
        detail = response.text[:300]
        if status == 422:
            bad = _refused_index(response)
            if bad is not None and 0 <= bad < count:
                self._warn("refused", f"the server refused a trace ({status}): {detail}")
                self._count("rejected", 1)
                return bad
        kind = "auth" if status in (401, 403) else "refused"
        self._warn(kind, f"the server refused a batch of {count} traces ({status}): {detail}")
        self._count("rejected", count)
        return "rejected"

    def _warn(self, kind: str, message: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            log.warning("assay tracing: %s", message)


def _built(body: dict[str, Any]) -> dict[str, Any]:
    return body


def _encode(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str).encode()


def _joined(chunk: list[tuple[dict[str, Any], bytes]]) -> bytes:
    return b'{"traces":[' + b",".join(data for _body, data in chunk) + b"]}"


def _gzip(data: bytes) -> bytes:
    packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip framing
    return packer.compress(data) + packer.flush()


def _refuses_gzip(response: httpx.Response) -> bool:
    """The answer of a server that cannot read a gzip body: it names the encoding (415), finds
    the body too large unpacked (413: its `--max-request-mb` is set low), cannot parse it (400),
    or finds it not JSON at all (422 about the body, not about a trace)."""
    if response.status_code in (400, 413, 415):
        return True
    if response.status_code != 422:
        return False
    try:
        field = response.json()["error"].get("field")
    except (ValueError, KeyError, TypeError, AttributeError):
        return True
    return not field or not str(field).startswith("traces")


def _shrunk(body: dict[str, Any]) -> dict[str, Any]:
    """A trace too large for one request, without its raw request/response and span payloads."""
    spans = [{**span, "input": None, "output": None} for span in body.get("spans") or []]
    metadata = {**(body.get("metadata") or {}), "assay_truncated": True}
    return {**body, "raw_input": None, "raw_output": None, "spans": spans, "metadata": metadata}


def _refused_index(response: httpx.Response) -> int | None:
    try:
        field = response.json()["error"]["field"]
    except (ValueError, KeyError, TypeError):
        return None
    match = re.match(r"traces\[(\d+)\]", field or "")
    return int(match.group(1)) if match else None


_exporter: Exporter | None = None
_exporter_lock = threading.Lock()


def exporter() -> Exporter:
    """The process's exporter (made on first use; drained for a short time at exit)."""
    global _exporter
    if _exporter is None:
        with _exporter_lock:
            if _exporter is None:
                _exporter = Exporter()
                atexit.register(_exporter.shutdown)
    return _exporter


def flush(timeout: float = 5.0) -> bool:
    """Send what is queued now; True when everything was sent or given up within `timeout`."""
    return exporter().flush(timeout)


def export_stats() -> dict[str, int]:
    return exporter().stats()


__all__ = ["Exporter", "export_stats", "exporter", "flush"]
