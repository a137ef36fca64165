"""What the official OpenTelemetry exporter sends at its default settings reaches the store whole.

The Python SDK's `BatchSpanProcessor` sends up to 512 spans a request and the protobuf exporter
compresses nothing by default: with LLM answers of 2,000 characters a request is over 1 MB. Each
test exports such a batch through `opentelemetry-exporter-otlp-proto-http` to a real server on
127.0.0.1 and counts what was stored: a real `assay serve` process (SQLite), and the live
server of both backends. Gzip and OTLP/JSON (as the JavaScript exporter sends it) too; a request
over `--max-request-mb` is a 413 whose body names the limit and how to raise it.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult

from .conftest import free_port

SPANS = 512  # BatchSpanProcessor's default max_export_batch_size
ANSWER_CHARS = 2_000
WORDS = [
    "the",
    "a",
    "model",
    "answer",
    "token",
    "context",
    "retrieval",
    "policy",
    "refund",
    "order",
    "customer",
    "days",
]


def answer_text(rng: random.Random) -> str:
    text = ""
    while len(text) < ANSWER_CHARS:
        text += rng.choice(WORDS) + " "
    return text[:ANSWER_CHARS]


class RecordingExporter(OTLPSpanExporter):
    """The official exporter, remembering what each export carried and how it ended."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.exports: list[tuple[int, int, SpanExportResult]] = []  # spans, protobuf bytes, result

    def export(self, spans: Any) -> SpanExportResult:
        size = len(encode_spans(spans).SerializeToString())
        result = super().export(spans)
        self.exports.append((len(spans), size, result))
        return result


def llm_spans(tracer: Any, count: int, seed: int = 0) -> list[str]:
    """`count` one-span traces shaped like a chat call with a 2,000-character answer; their ids."""
    rng = random.Random(seed)
    ids = []
    for n in range(count):
        with tracer.start_as_current_span("chat gpt-4o-mini") as span:
            span.set_attribute("gen_ai.operation.name", "chat")
            span.set_attribute("gen_ai.request.model", "gpt-4o-mini")
            span.set_attribute("gen_ai.usage.input_tokens", 40)
            span.set_attribute("gen_ai.usage.output_tokens", 450)
            question = [{"role": "user", "parts": [{"type": "text", "content": f"Question {n}?"}]}]
            answer = [
                {"role": "assistant", "parts": [{"type": "text", "content": answer_text(rng)}]}
            ]
            span.set_attribute("gen_ai.input.messages", json.dumps(question))
            span.set_attribute("gen_ai.output.messages", json.dumps(answer))
            ids.append(f"{span.get_span_context().trace_id:032x}")
    return ids


def export_default_batch(
    endpoint: str, key: str, *, compression: Compression = Compression.NoCompression
) -> tuple[RecordingExporter, list[str]]:
    """One default-configured BatchSpanProcessor's first batch: 512 spans in one request."""
    exporter = RecordingExporter(
        endpoint=endpoint, headers={"Authorization": f"Bearer {key}"}, compression=compression
    )
    provider = TracerProvider(resource=Resource.create({"service.name": "support-bot"}))
    provider.add_span_processor(BatchSpanProcessor(exporter))  # every setting its default
    ids = llm_spans(provider.get_tracer("test"), SPANS)
    assert provider.force_flush(60_000)
    provider.shutdown()
    return exporter, ids


def stored_ids(base_url: str, key: str) -> set[str]:
    found: set[str] = set()
    cursor = None
    with httpx.Client(base_url=f"{base_url}/api/v1", timeout=60) as api:
        while True:
            params: dict[str, Any] = {"limit": 500, **({"cursor": cursor} if cursor else {})}
            page = api.get("/traces", params=params, headers={"Authorization": f"Bearer {key}"})
            assert page.status_code == 200, page.text
            found |= {item["id"].replace("-", "") for item in page.json()["items"]}
            cursor = page.json().get("next_cursor")
            if not cursor:
                return found


def assert_all_stored(exporter: RecordingExporter, ids: list[str], base_url: str, key: str) -> None:
    assert [(n, r) for n, _size, r in exporter.exports] == [(SPANS, SpanExportResult.SUCCESS)]
    assert exporter.exports[0][1] > 1_100_000  # over the 1 MB that used to be refused
    assert stored_ids(base_url, key) == set(ids)


@pytest.fixture(scope="module")
def assay_serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """`assay serve` as a user starts it (default settings) on a fresh SQLite file; (url, key)."""
    home = tmp_path_factory.mktemp("serve-home")
    env = {**os.environ, "ASSAY_HOME": str(home)}
    env.pop("ASSAY_MAX_REQUEST_MB", None)
    db = f"sqlite:///{home / 'otlp.sqlite'}"
    made = subprocess.run(
        [sys.executable, "-m", "assay", "keys", "create", "--db", db, "--project", "otel"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "assay", "serve", "--port", str(port), "--db", db],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/api/v1/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None, server.stderr.read().decode()  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "assay serve did not start"
            time.sleep(0.1)
        yield base, made.stdout.strip()
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_assay_serve_stores_every_span_of_a_default_exporter_batch(assay_serve):
    base, key = assay_serve
    exporter, ids = export_default_batch(f"{base}/otlp/v1/traces", key)
    assert_all_stored(exporter, ids, base, key)


@pytest.mark.slow  # a 32 MB body and a 33 MB gzip bomb
def test_assay_serve_takes_the_gzip_exporter_and_refuses_past_the_limit(assay_serve):
    base, key = assay_serve
    url, auth = f"{base}/otlp/v1/traces", {"Authorization": f"Bearer {key}"}
    before = stored_ids(base, key)
    exporter, ids = export_default_batch(url, key, compression=Compression.Gzip)
    assert [(n, r) for n, _size, r in exporter.exports] == [(SPANS, SpanExportResult.SUCCESS)]
    assert stored_ids(base, key) == before | set(ids)

    too_big = b"\0" * 32_000_001  # the default limit is 32 MB
    answer = httpx.post(
        url,
        content=too_big,
        headers={**auth, "Content-Type": "application/x-protobuf"},
        timeout=60,
    )
    assert answer.status_code == 413
    message = answer.json()["error"]["message"]
    assert "32 MB" in message and "--max-request-mb" in message
    assert "ASSAY_MAX_REQUEST_MB" in message

    bomb = gzip.compress(b" " * 33_000_000)  # small on the wire, over the limit unpacked
    assert len(bomb) < 1_000_000
    answer = httpx.post(
        url,
        content=bomb,
        headers={**auth, "Content-Type": "application/json", "Content-Encoding": "gzip"},
        timeout=60,
    )
    assert answer.status_code == 413
    assert "--max-request-mb" in answer.json()["error"]["message"]


def test_the_limit_is_set_with_max_request_mb(tmp_path: Path):
    """A smaller limit set with `--max-request-mb` refuses the default batch and says so."""
    from assay.platform.server.app import create_app

    env_before = os.environ.pop("ASSAY_MAX_REQUEST_MB", None)
    try:
        app = create_app(f"sqlite:///{tmp_path / 'small.sqlite'}", max_request_mb=0.5)
        assert app.state.assay.max_request == 500_000
        os.environ["ASSAY_MAX_REQUEST_MB"] = "2"
        assert create_app(f"sqlite:///{tmp_path / 'b.sqlite'}").state.assay.max_request == 2_000_000
        os.environ["ASSAY_MAX_REQUEST_MB"] = "lots"
        from assay.errors import UsageError

        with pytest.raises(UsageError, match="ASSAY_MAX_REQUEST_MB"):
            create_app(f"sqlite:///{tmp_path / 'c.sqlite'}")
    finally:
        os.environ.pop("ASSAY_MAX_REQUEST_MB", None)
        if env_before is not None:
            os.environ["ASSAY_MAX_REQUEST_MB"] = env_before


@pytest.mark.parametrize(
    "encoding",
    [
        "protobuf",
        pytest.param("json", marks=pytest.mark.slow),
        pytest.param("json+gzip", marks=pytest.mark.slow),
    ],
)
def test_live_server_stores_the_default_batch(live, encoding):
    """On SQLite and PostgreSQL: the exporter's batch as protobuf, and the same spans as OTLP/JSON
    (ids in hex, as the JavaScript exporter sends them), plain and gzipped."""
    key = live.key()
    url = f"{live.base_url}/otlp/v1/traces"
    if encoding == "protobuf":
        exporter, ids = export_default_batch(url, key)
        assert_all_stored(exporter, ids, live.base_url, key)
        return
    captured: list[Any] = []

    class Capture(OTLPSpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            captured.extend(spans)
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Capture()))
    ids = llm_spans(provider.get_tracer("test"), SPANS, seed=1)
    provider.force_flush(60_000)
    provider.shutdown()
    document = json_format.MessageToDict(encode_spans(captured))
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for field in ("traceId", "spanId", "parentSpanId"):
                    if span.get(field):
                        span[field] = base64_to_hex(span[field])
    body = json.dumps(document).encode()
    assert len(body) > 1_100_000
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    if encoding == "json+gzip":
        body, headers = gzip.compress(body), {**headers, "Content-Encoding": "gzip"}
    answer = httpx.post(url, content=body, headers=headers, timeout=60)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {}  # no partial success: nothing refused
    assert stored_ids(live.base_url, key) == set(ids)


def base64_to_hex(value: str) -> str:
    import base64

    return base64.b64decode(value).hex()
