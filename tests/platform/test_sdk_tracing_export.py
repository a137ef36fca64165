"""Trace export against a real loopback collector: batching, server down, slow, 401, overflow, off.

`Collector` (below) is a standard-library stand-in for the server's `POST /api/v1/traces`; the
other tracing tests import it. The application's calls must return normally whatever it does.
"""

from __future__ import annotations

import base64
import gzip
import json
import logging
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from assay.platform.sdk.client import Client
from assay.platform.sdk.export import Exporter


class Collector:
    """Records every batch it accepts; `status`, `delay` and `stop()` make it misbehave."""

    def __init__(self, port: int = 0) -> None:
        self.status = 202
        self.delay = 0.0
        self.batches: list[list[dict[str, Any]]] = []
        self.attempts = 0
        self.refuse_id: str | None = None  # a trace with this id gets a 422 naming its index
        self.request_sizes: list[int] = []  # bytes on the wire (compressed when gzip)
        self.takes_gzip = True  # False: answers a gzip request as a server from before gzip did
        self.auth_headers: list[str | None] = []
        self.encodings: list[str | None] = []  # each request's Content-Encoding
        self.in_flight = self.most_in_flight = 0  # requests being answered at once
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _CollectorHandler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._httpd.collector = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def traces(self) -> list[dict[str, Any]]:
        with self._lock:
            return [trace for batch in self.batches for trace in batch]

    def start(self) -> Collector:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def wait_for(self, n: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while len(self.traces) < n and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.traces


class _CollectorHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes: no 40 ms stall

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # /api/v1/auth/whoami, for login()
        self._reply(200, {"project": "test"})

    def do_POST(self) -> None:
        collector: Collector = self.server.collector  # type: ignore[attr-defined]
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        encoding = self.headers.get("Content-Encoding")
        with collector._lock:
            collector.attempts += 1
            collector.request_sizes.append(len(raw))
            collector.encodings.append(encoding)
            collector.auth_headers.append(self.headers.get("Authorization"))
            status, delay, takes_gzip = collector.status, collector.delay, collector.takes_gzip
            collector.in_flight += 1
            collector.most_in_flight = max(collector.most_in_flight, collector.in_flight)
        try:
            if encoding == "gzip" and not takes_gzip:  # as a server from before gzip: not JSON
                return self._reply(400, {"error": {"code": "bad_request", "message": "?"}})
            body = json.loads(gzip.decompress(raw) if encoding == "gzip" else raw)
            if delay:
                time.sleep(delay)
            ids = [trace["id"] for trace in body["traces"]]
            self._answer(collector, body, ids, status)
        finally:
            with collector._lock:
                collector.in_flight -= 1

    def _answer(self, collector: Collector, body: Any, ids: list[str], status: int) -> None:
        if status >= 300:
            return self._reply(status, {"error": {"code": "refused", "message": "no"}})
        if collector.refuse_id in ids:
            field = f"traces[{ids.index(collector.refuse_id)}].input"
            return self._reply(
                422, {"error": {"code": "invalid", "message": "bad", "field": field}}
            )
        with collector._lock:
            collector.batches.append(body["traces"])
        self._reply(202, {"accepted": len(body["traces"]), "duplicates": 0})


@pytest.fixture
def collector():
    server = Collector().start()
    try:
        yield server
    finally:
        server.stop()


def record(n: int) -> dict[str, Any]:
    return {"id": f"t{n}", "input": f"q{n}", "output": f"a{n}"}


def make_exporter(url: str, key: str | None = "k", **options: Any) -> Exporter:
    session = Client(key, url)
    options.setdefault("interval", 0.02)
    return Exporter(session=lambda: session, **options)


def test_records_are_batched_and_sent_with_the_key(collector):
    exporter = make_exporter(collector.url, key="secret-key", batch_size=50)
    for n in range(120):
        exporter.submit(record, n)
    assert exporter.flush(5)
    # batches go out in parallel, so they may arrive in any order; each keeps its own order
    assert sorted(t["id"] for t in collector.traces) == sorted(f"t{n}" for n in range(120))
    for batch in collector.batches:
        numbers = [int(t["id"][1:]) for t in batch]
        assert numbers == sorted(numbers)
    assert all(len(batch) <= 50 for batch in collector.batches)
    assert len(collector.batches) < 120  # batched, not one request per trace
    assert set(collector.auth_headers) == {"Bearer secret-key"}
    assert exporter.stats()["sent"] == 120 and exporter.stats()["dropped"] == 0
    exporter.shutdown()


def test_server_down_then_up_keeps_the_traces_and_warns_once(collector, caplog):
    collector.stop()
    url = collector.url
    exporter = make_exporter(url, max_backoff=0.05)
    with caplog.at_level(logging.WARNING, logger="assay.platform.tracing"):
        started = time.perf_counter()
        for n in range(30):
            exporter.submit(record, n)
        assert time.perf_counter() - started < 0.5  # the caller never waits for the network
        time.sleep(0.3)  # several failed attempts
    warnings = [r for r in caplog.records if "cannot send traces" in r.getMessage()]
    assert len(warnings) == 1
    assert exporter.stats()["waiting"] == 30 and exporter.stats()["sent"] == 0
    # the server comes back on the same port: the waiting traces go out
    revived = Collector(port=int(url.rsplit(":", 1)[1])).start()
    try:
        assert exporter.flush(5)
        assert sorted(t["id"] for t in revived.traces) == sorted(f"t{n}" for n in range(30))
    finally:
        exporter.shutdown()
        revived.stop()


def test_unauthorized_key_drops_the_batch_and_warns_once(collector, caplog):
    collector.status = 401
    exporter = make_exporter(collector.url)
    with caplog.at_level(logging.WARNING, logger="assay.platform.tracing"):
        for n in range(5):
            exporter.submit(record, n)
            assert exporter.flush(5)
    refused = [r for r in caplog.records if "refused" in r.getMessage()]
    assert len(refused) == 1 and "401" in refused[0].getMessage()
    assert exporter.stats()["rejected"] == 5 and collector.attempts == 5
    assert collector.traces == []
    exporter.shutdown()


def test_slow_server_does_not_slow_the_caller(collector):
    collector.delay = 0.5
    exporter = make_exporter(collector.url, timeout=5.0)
    started = time.perf_counter()
    for n in range(200):
        exporter.submit(record, n)
    assert time.perf_counter() - started < 0.2
    assert exporter.flush(10)
    assert len(collector.traces) == 200
    exporter.shutdown()


def test_timeout_of_a_hanging_server_retries_later(collector):
    collector.delay = 1.0
    exporter = make_exporter(collector.url, timeout=0.2, max_backoff=0.05)
    exporter.submit(record, 1)
    time.sleep(0.5)
    assert exporter.stats()["sent"] == 0 and collector.attempts >= 1
    collector.delay = 0.0
    assert exporter.flush(5)
    assert [t["id"] for t in collector.traces][-1] == "t1"
    exporter.shutdown()


def test_overflow_drops_the_oldest_and_counts_them(collector):
    collector.stop()  # nothing gets through
    exporter = make_exporter(collector.url, max_queue=100, max_backoff=0.05)
    for n in range(1_000):
        exporter.submit(record, n)
    stats = exporter.stats()
    assert stats["queued"] == 1_000
    assert stats["waiting"] <= 100 + exporter.batch_size
    assert stats["dropped"] >= 1_000 - 100 - exporter.batch_size
    waiting = [item for _build, item, _not_before in exporter._queue]
    assert waiting == sorted(waiting) and waiting[-1] == 999  # the newest are kept
    exporter.shutdown(0.1)


def test_a_record_that_cannot_be_built_is_counted_and_the_rest_go(collector):
    exporter = make_exporter(collector.url)

    def broken(_item: Any) -> dict[str, Any]:
        raise RuntimeError("boom")

    exporter.submit(broken, None)
    exporter.submit(record, 7)
    assert exporter.flush(5)
    assert [t["id"] for t in collector.traces] == ["t7"]
    assert exporter.stats()["failed"] == 1
    exporter.shutdown()


def test_a_trace_the_server_refuses_is_dropped_alone(collector):
    collector.refuse_id = "t3"
    exporter = make_exporter(collector.url)
    for n in range(6):
        exporter.submit(record, n)
    assert exporter.flush(5)
    assert [t["id"] for t in collector.traces] == ["t0", "t1", "t2", "t4", "t5"]
    assert exporter.stats()["rejected"] == 1
    exporter.shutdown()


@pytest.mark.parametrize("gzip_on", [True, False])
def test_requests_stay_under_the_body_cap(collector, gzip_on):
    exporter = make_exporter(collector.url, gzip=gzip_on)
    big = base64.b64encode(random.Random(7).randbytes(225_000)).decode()  # 300 kB, incompressible
    for n in range(5):
        exporter.submit(lambda n: {"id": f"t{n}", "input": big}, n)
    huge = {"id": "huge", "input": "small", "raw_input": "y" * 2_000_000, "spans": []}
    exporter.submit(lambda _: huge, None)
    assert exporter.flush(5)
    assert all(size < 1_000_000 for size in collector.request_sizes)
    assert len(collector.request_sizes) >= 2
    traces = {t["id"]: t for t in collector.traces}
    assert len(traces) == 6 and traces["huge"]["raw_input"] is None
    assert traces["huge"]["metadata"] == {"assay_truncated": True}
    exporter.shutdown()


def test_off_sends_nothing(collector):
    session = Client("k", collector.url, off=True)
    exporter = Exporter(session=lambda: session, interval=0.02)
    for n in range(10):
        exporter.submit(record, n)
    assert exporter.stats()["queued"] == 0
    time.sleep(0.1)
    assert collector.attempts == 0
    exporter.shutdown()


def test_a_held_record_waits_unless_flushed(collector):
    exporter = make_exporter(collector.url)
    exporter.submit(record, 1, hold=30.0)
    exporter.submit(record, 2)
    time.sleep(0.2)
    assert collector.attempts == 0  # the held head keeps its place in the order
    assert exporter.flush(5)
    assert [t["id"] for t in collector.traces] == ["t1", "t2"]
    exporter.shutdown()


def test_shutdown_is_bounded_when_the_server_hangs(collector):
    collector.delay = 3.0
    exporter = make_exporter(collector.url, timeout=10.0)
    exporter.submit(record, 1)
    started = time.perf_counter()
    exporter.shutdown(0.3)
    assert time.perf_counter() - started < 2.0


def test_a_forked_child_exports_with_its_own_thread(collector):
    import os

    exporter = make_exporter(collector.url)
    exporter.submit(record, 1)
    assert exporter.flush(5)
    pid = os.fork()
    if pid == 0:  # the child: its parent's thread is gone, a new one must start
        import signal

        signal.alarm(30)  # a lock inherited mid-use from another thread must not hang it forever
        try:
            exporter.submit(record, 2)
            os._exit(0 if exporter.flush(5) else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert sorted(t["id"] for t in collector.traces) == ["t1", "t2"]
    exporter.shutdown()


def test_requests_are_gzipped_and_batches_go_out_in_parallel(collector):
    collector.delay = 0.3  # a server that takes its time with each batch
    exporter = make_exporter(collector.url, batch_size=20, senders=4)
    started = time.perf_counter()
    for n in range(80):
        exporter.submit(record, n)
    assert exporter.flush(10)
    took = time.perf_counter() - started
    assert sorted(t["id"] for t in collector.traces) == sorted(f"t{n}" for n in range(80))
    assert set(collector.encodings) == {"gzip"}
    assert collector.most_in_flight >= 2  # 4 batches of 20 at once, not one after another
    assert took < 4 * 0.3 + 0.5
    stats = exporter.stats()
    assert stats["sent"] == 80 and stats["dropped"] == 0 and stats["waiting"] == 0
    exporter.shutdown()


def test_a_server_without_gzip_gets_plain_json_and_loses_nothing(collector, caplog):
    collector.takes_gzip = False
    exporter = make_exporter(collector.url)
    with caplog.at_level(logging.WARNING, logger="assay.platform.tracing"):
        for n in range(30):
            exporter.submit(record, n)
        assert exporter.flush(5)
        for n in range(30, 40):
            exporter.submit(record, n)
        assert exporter.flush(5)
    assert sorted(t["id"] for t in collector.traces) == sorted(f"t{n}" for n in range(40))
    assert collector.encodings[0] == "gzip"  # tried once; plain JSON from then on
    assert collector.encodings[1:] == [None] * (len(collector.encodings) - 1)
    assert exporter.stats()["rejected"] == 0 and exporter.stats()["dropped"] == 0
    assert not caplog.records  # not a failure: nothing to warn about
    exporter.shutdown()
