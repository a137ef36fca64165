"""The SDK's trace export under load, against a real `assay serve` on 127.0.0.1 (issue #45, 3).

An application making 2,000 monitored calls a second loses no trace while the server keeps up:
the exporter batches (500 a request), compresses (gzip) and sends several batches at once. It used
to send 600 to 900 traces a second from one thread, so a few seconds of calls at that rate
overflowed the queue (the rate test is slow-marked: `pytest -m slow`; the parallel and gzip
sending are checked at every run in test_sdk_tracing_export.py). While the server is down the queue's bound holds: the oldest traces are
dropped and counted, the newest are kept and sent once the server is back. The server's side of it
(gzip bodies on `POST /api/v1/traces`) is checked on both backends.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai.types.chat import ChatCompletion

from assay.platform.sdk import export
from assay.platform.sdk.client import Client
from assay.platform.sdk.export import Exporter
from assay.platform.sdk.llm_shapes import CHAT
from assay.platform.sdk.monitor import _monitored_call

from .conftest import free_port

RATE = 2_000  # calls a second
ANSWER = ChatCompletion.model_validate(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Paris is the capital of France."},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 30, "completion_tokens": 8, "total_tokens": 38},
    }
)


class Serve:
    """`assay serve` as a user starts it (default settings) on a SQLite file, and a key."""

    def __init__(self, home: Path) -> None:
        self.env = {**os.environ, "ASSAY_HOME": str(home)}
        self.db = f"sqlite:///{home / 'traces.sqlite'}"
        made = subprocess.run(
            [sys.executable, "-m", "assay", "keys", "create", "--db", self.db, "--project", "app"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert made.returncode == 0, made.stderr
        self.key = made.stdout.strip()
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Serve:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "assay", "serve", "--port", str(self.port), "--db", self.db],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{self.base}/api/v1/health", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                assert self.process.stderr is not None
                raise AssertionError(f"assay serve did not start: {self.process.stderr.read()!r}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)

    def stored(self) -> list[str]:
        """The ids of every stored trace (each once per row: a doubled trace shows twice)."""
        found, cursor = [], None
        headers = {"Authorization": f"Bearer {self.key}"}
        with httpx.Client(base_url=f"{self.base}/api/v1", headers=headers, timeout=60) as api:
            while True:
                params: dict[str, Any] = {"limit": 500, **({"cursor": cursor} if cursor else {})}
                page = api.get("/traces", params=params)
                assert page.status_code == 200, page.text
                found += [item["id"] for item in page.json()["items"]]
                cursor = page.json().get("next_cursor")
                if not cursor:
                    return found


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    server = Serve(tmp_path)
    try:
        yield server
    finally:
        server.stop()


def exporting_to(server: Serve, **options: Any) -> Iterator[Exporter]:
    """The process's exporter replaced by one sending to `server` (the monitored calls use it)."""
    session = Client(server.key, server.base)
    exporter = Exporter(session=lambda: session, **options)
    previous, export._exporter = export._exporter, exporter
    try:
        yield exporter
    finally:
        export._exporter = previous
        exporter.shutdown(0.5)


def application(calls: int, rate: float | None) -> tuple[list[str], float]:
    """`calls` monitored chat calls from a thread, paced at `rate` a second (None: as fast as
    it can); the trace ids the exporter got, and the calls' rate."""
    create = _monitored_call(
        lambda **_: ANSWER, CHAT, {"metadata": {"app": "load"}, "callback": None}
    )
    ids: list[str] = []
    took: list[float] = []

    def run() -> None:
        started = time.perf_counter()
        for n in range(calls):
            if rate is not None:
                ahead = started + n / rate - time.perf_counter()
                if ahead > 0:
                    time.sleep(ahead)
            create(model="gpt-4o-mini", messages=[{"role": "user", "content": f"Capital? {n}"}])
        took.append(time.perf_counter() - started)

    submitted = export._exporter.submit if export._exporter else None
    assert submitted is not None

    def recording(build: Any, item: Any, hold: float = 0.0) -> None:
        ids.append(item.id)
        submitted(build, item, hold)

    export._exporter.submit = recording  # type: ignore[method-assign]
    thread = threading.Thread(target=run, name="application")
    thread.start()
    thread.join(120)
    assert not thread.is_alive()
    return ids, calls / took[0]


@pytest.mark.slow  # a rate: on a machine busy with other work the server falls behind any app
def test_2000_calls_a_second_lose_no_trace_while_the_server_keeps_up(serve):
    """8,000 calls at 2,000 a second with a queue of 4,000 (2 s of calls): the one-thread
    exporter (600 to 900 traces a second on this 2-core machine) dropped 400 to 1,700 of them;
    every one is stored now. The exporter's ceiling is measured in
    benchmarks/tracing_overhead.py. Slow-marked because it measures a rate: with other work
    taking most of the machine's two cores, the server falls behind and the test drops traces,
    as it should."""
    serve.start()
    for exporter in exporting_to(serve, max_queue=4_000):
        ids, rate = application(8_000, RATE)
        assert rate > 0.8 * RATE  # the calls were not slowed down
        assert exporter.flush(60)
        stats = exporter.stats()
        assert stats["dropped"] == 0, stats
        assert stats["sent"] == 8_000 and stats["rejected"] == stats["failed"] == 0, stats
    stored = serve.stored()
    assert len(stored) == len(set(stored)) == 8_000
    assert set(stored) == set(ids)


def test_traces_sent_as_fast_as_a_thread_can_are_all_stored(serve):
    """2,000 calls from a thread with no pause at all, the default queue: every trace stored."""
    serve.start()
    for exporter in exporting_to(serve):
        ids, _rate = application(2_000, None)
        assert exporter.flush(60)
        assert exporter.stats()["dropped"] == 0 and exporter.stats()["sent"] == 2_000
    assert sorted(serve.stored()) == sorted(ids)


def test_while_the_server_is_down_drops_are_bounded_and_counted(serve):
    """The server's port is closed: 5,000 calls with a queue of 1,000 drop the oldest, each one
    counted, and memory holds no more than the queue and the batches in flight. When the server
    comes up, the traces kept are sent: the newest ones, each stored once.

    A batch in flight when the queue filled is older than the traces queued after it: when its send
    fails it goes back only into the room left, so it is dropped then (counted), not when the
    app submitted. `waiting` counts it until then, so the test waits for every such batch to
    come back (waiting down to the queue's bound) rather than for a fixed time: on a loaded
    machine a sender's failed attempt took longer than the half second it used to wait."""
    for exporter in exporting_to(serve, max_queue=1_000, max_backoff=0.2, interval=0.05):
        ids, _rate = application(5_000, None)
        stats = exporter.stats()  # the app is done; some batches may still be in flight
        assert stats["queued"] == 5_000 and stats["sent"] == 0
        assert stats["dropped"] + stats["waiting"] == 5_000
        assert stats["waiting"] <= 1_000 + exporter.senders * exporter.batch_size
        # every batch in flight beyond the bound fails and comes back (and is dropped): from
        # then on nothing more can be dropped, as what is taken always fits back
        deadline = time.monotonic() + 60
        while (stats := exporter.stats())["waiting"] > 1_000:
            assert time.monotonic() < deadline, stats
            time.sleep(0.05)
        assert stats["sent"] == 0 and stats["rejected"] == stats["failed"] == 0, stats
        assert stats["waiting"] == 1_000 and stats["dropped"] == 4_000, stats
        serve.start()  # on the port the exporter was given
        assert exporter.flush(60)
        after = exporter.stats()
        assert after["sent"] == stats["waiting"] and after["dropped"] == stats["dropped"], after
    stored = serve.stored()
    assert len(stored) == len(set(stored)) == stats["waiting"]
    # the newest were kept: the queue drops its oldest; a batch that was in flight when its
    # send failed goes back at the head, so it may outlive a few traces made after it
    made = {ident: n for n, ident in enumerate(ids)}
    assert ids[-1] in made and min(made[i] for i in stored) >= 5_000 - 1_000 - 2 * 500


# -- the server's side: gzip bodies on POST /api/v1/traces (both backends) -------------------
def _batch(n: int) -> bytes:
    traces = [
        {"id": str(uuid.uuid4()), "input": f"question {i}", "output": "answer " * 50}
        for i in range(n)
    ]
    return json.dumps({"traces": traces}).encode()


def test_the_ingest_route_takes_gzip_bodies(live):
    key = live.key()
    headers = {
        "Authorization": f"Bearer {key}",
        "Content-Type": "application/json",
        "Content-Encoding": "gzip",
    }
    body = _batch(500)
    url = f"{live.base_url}/api/v1/traces"
    answer = httpx.post(url, content=gzip.compress(body), headers=headers, timeout=60)
    assert answer.status_code == 202, answer.text[:2000]
    assert answer.json()["accepted"] == 500
    again = httpx.post(url, content=gzip.compress(body), headers=headers, timeout=60)
    assert (again.json()["accepted"], again.json()["duplicates"]) == (0, 500)
    plain_headers = {k: v for k, v in headers.items() if k != "Content-Encoding"}
    plain = httpx.post(url, content=_batch(3), headers=plain_headers)
    assert plain.status_code == 202 and plain.json()["accepted"] == 3
    # a trace the schema refuses is named as in a plain body
    bad = json.dumps({"traces": [{"id": "not-a-uuid"}]}).encode()
    refused = httpx.post(url, content=gzip.compress(bad), headers=headers)
    assert refused.status_code == 422 and refused.json()["error"]["field"] == "traces[0].id"


def test_the_ingest_route_refuses_bad_gzip_bodies_clearly(live):
    key = live.key()
    url = f"{live.base_url}/api/v1/traces"
    auth = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    corrupt = httpx.post(url, content=b"not gzip", headers={**auth, "Content-Encoding": "gzip"})
    assert corrupt.status_code == 400 and "gzip" in corrupt.json()["error"]["message"]
    cut = httpx.post(
        url, content=gzip.compress(_batch(5))[:-20], headers={**auth, "Content-Encoding": "gzip"}
    )
    assert cut.status_code == 400, cut.text
    other = httpx.post(url, content=_batch(1), headers={**auth, "Content-Encoding": "br"})
    assert other.status_code == 415 and "gzip" in other.json()["error"]["message"]
    bomb = gzip.compress(b" " * 33_000_000)  # small on the wire, past 32 MB unpacked
    assert len(bomb) < 1_000_000
    big = httpx.post(url, content=bomb, headers={**auth, "Content-Encoding": "gzip"}, timeout=60)
    assert big.status_code == 413
    assert "32 MB" in big.json()["error"]["message"]
    assert "--max-request-mb" in big.json()["error"]["message"]
    wire = os.urandom(1_100_000)  # over the 1 MB cap on the wire: refused before unpacking
    over = httpx.post(url, content=wire, headers={**auth, "Content-Encoding": "gzip"}, timeout=60)
    assert over.status_code == 413
    assert httpx.get(url, headers=auth).json()["items"] == []  # nothing was stored
