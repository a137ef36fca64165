"""OTLP/HTTP ingest: an application instrumented with the real `opentelemetry-sdk` and its OTLP/HTTP
protobuf exporter (no assay code) sends spans to the real server; GenAI semantic conventions and
OpenInference attributes land on the trace model. Also JSON bodies, gzip and the limits."""

from __future__ import annotations

import gzip
import json
import uuid

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode


def provider(live, key, *, simple=False, gzip_body=False):
    exporter = OTLPSpanExporter(
        endpoint=f"{live.base_url}/otlp/v1/traces",
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
        compression=Compression.Gzip if gzip_body else Compression.NoCompression,
    )
    tracer_provider = TracerProvider(resource=Resource.create({"service.name": "rag-app"}))
    processor = SimpleSpanProcessor(exporter) if simple else BatchSpanProcessor(exporter)
    tracer_provider.add_span_processor(processor)
    return tracer_provider


def assay_id(span) -> str:
    return str(uuid.UUID(int=span.get_span_context().trace_id))


def only_trace(api):
    items = api.get("/traces", params={"full": "true"}).json()["items"]
    assert len(items) == 1, items
    return items[0]


@pytest.mark.parametrize("gzip_body", [False, True])
def test_genai_conventions_from_the_real_exporter(live, gzip_body):
    key = live.key()
    tracer_provider = provider(live, key, gzip_body=gzip_body)
    tracer = tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("answer") as root:
        with tracer.start_as_current_span("search") as search:
            search.set_attribute("openinference.span.kind", "RETRIEVER")
            search.set_attribute("retrieval.documents.0.document.content", "Paris is in France.")
            search.set_attribute("retrieval.documents.1.document.content", "Lyon is in France.")
        with tracer.start_as_current_span("chat gpt-test") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.provider.name", "openai")
            chat.set_attribute("gen_ai.request.model", "gpt-test")
            chat.set_attribute("gen_ai.response.model", "gpt-test-0601")
            chat.set_attribute("gen_ai.request.temperature", 0.0)
            chat.set_attribute("gen_ai.usage.input_tokens", 21)
            chat.set_attribute("gen_ai.usage.output_tokens", 4)
            chat.set_attribute(
                "gen_ai.input.messages",
                json.dumps(
                    [
                        {
                            "role": "user",
                            "parts": [{"type": "text", "content": "Capital of France?"}],
                        }
                    ]
                ),
            )
            chat.set_attribute(
                "gen_ai.output.messages",
                json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": "Paris."}]}]
                ),
            )
    assert tracer_provider.force_flush(10_000)
    tracer_provider.shutdown()
    with live.client(key) as api:
        got = only_trace(api)
        assert got["id"] == assay_id(root)
        assert got["input"] == [{"role": "user", "content": "Capital of France?"}]
        assert got["output"] == "Paris."
        assert got["model"] == "gpt-test-0601"
        assert got["usage"] == {"input_tokens": 21, "output_tokens": 4} and got["tokens"] == 25
        assert got["contexts"] == ["Paris is in France.", "Lyon is in France."]
        assert got["metadata"]["resource"]["service.name"] == "rag-app"
        assert got["metadata"]["provider"] == "openai"
        assert got["raw_input"]["model"] == "gpt-test" and got["raw_input"]["temperature"] == 0.0
        assert sorted(s["kind"] for s in got["spans"]) == ["llm", "other", "retrieval"]
        assert got["latency_ms"] is not None and got["latency_ms"] >= 0
        # the text a condition matches is the message content
        assert "Paris." in json.dumps(api.get(f"/traces/{got['id']}").json()["output"])


def test_legacy_attributes_events_and_spans_sent_one_by_one_merge(live):
    """SimpleSpanProcessor exports each span as it ends: the trace grows export by export."""
    key = live.key()
    tracer_provider = provider(live, key, simple=True)
    tracer = tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("pipeline") as root:
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attribute("gen_ai.system", "openai")
            llm.set_attribute("gen_ai.request.model", "old-model")
            llm.set_attribute("gen_ai.usage.prompt_tokens", 7)
            llm.set_attribute("gen_ai.usage.completion_tokens", 2)
            llm.add_event("gen_ai.system.message", {"content": "Be brief."})
            llm.add_event("gen_ai.user.message", {"content": "Capital of Italy?"})
            llm.add_event(
                "gen_ai.choice", {"index": 0, "message": json.dumps({"content": "Rome."})}
            )
            llm.add_event(
                "gen_ai.evaluation.result",
                {
                    "gen_ai.evaluation.name": "Relevance",
                    "gen_ai.evaluation.score.value": 0.75,
                    "gen_ai.evaluation.explanation": "on topic",
                },
            )
            llm.add_event(
                "gen_ai.evaluation.result",
                {
                    "gen_ai.evaluation.name": "Faithfulness",
                    "error.type": "OutputTruncated",
                    "assay.error.message": "the judge's answer was cut off twice",
                },
            )
            llm.add_event(
                "gen_ai.evaluation.result",
                {
                    "gen_ai.evaluation.name": "Recall",
                    "gen_ai.evaluation.explanation": "no reference",
                },
            )
        with tracer.start_as_current_span("tool") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.call.arguments", json.dumps({"city": "Rome"}))
            tool.set_status(Status(StatusCode.ERROR, "the tool timed out"))
    tracer_provider.shutdown()
    with live.client(key) as api:
        got = only_trace(api)
        assert got["id"] == assay_id(root)
        assert len(got["spans"]) == 3 and got["version"] == 3  # stored, then grown twice
        assert got["input"] == [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Capital of Italy?"},
        ]
        assert got["output"] == "Rome."
        assert got["model"] == "old-model" and got["tokens"] == 9
        assert got["error"] == "the tool timed out"
        assert got["metadata"]["provider"] == "openai"
        assert got["scores"]["Relevance"]["value"] == 0.75
        assert got["scores"]["Relevance"]["source"].startswith("otel:")
        failed = got["scores"]["Faithfulness"]["outcome"]
        skipped = got["scores"]["Recall"]["outcome"]
        assert failed["status"] == "error" and failed["value"] is None, failed
        assert failed["error_type"] == "OutputTruncated"
        assert failed["error_message"] == "the judge's answer was cut off twice"
        assert skipped["status"] == "skipped" and skipped["reason"] == "no reference", skipped
        assert {s["kind"] for s in got["spans"]} == {"llm", "function", "other"}
        tool_span = next(s for s in got["spans"] if s["kind"] == "function")
        assert tool_span["input"] == {"city": "Rome"} and tool_span["error"] == "the tool timed out"
        _ = llm, tool


def test_openinference_attributes(live):
    key = live.key()
    tracer_provider = provider(live, key)
    tracer = tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("chain") as chain:
        chain.set_attribute("openinference.span.kind", "CHAIN")
        chain.set_attribute("input.value", "Where is the Louvre?")
        chain.set_attribute("output.value", json.dumps({"answer": "In Paris."}))
        chain.set_attribute("output.mime_type", "application/json")
        chain.set_attribute("metadata", json.dumps({"env": "prod", "user": {"tier": "gold"}}))
        chain.set_attribute("tag.tags", ["museum", "geo"])
        chain.set_attribute("session.id", "s-42")
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attribute("openinference.span.kind", "LLM")
            llm.set_attribute("llm.model_name", "oi-model")
            llm.set_attribute("llm.token_count.prompt", 30)
            llm.set_attribute("llm.token_count.completion", 5)
            llm.set_attribute("llm.input_messages.0.message.role", "user")
            llm.set_attribute("llm.input_messages.0.message.content", "Where is the Louvre?")
            llm.set_attribute("llm.output_messages.0.message.role", "assistant")
            llm.set_attribute("llm.output_messages.0.message.content", "In Paris.")
    tracer_provider.shutdown()
    with live.client(key) as api:
        got = only_trace(api)
        assert got["input"] == "Where is the Louvre?"  # the root's input.value
        assert got["output"] == {"answer": "In Paris."}
        assert got["model"] == "oi-model" and got["usage"]["input_tokens"] == 30
        assert got["metadata"]["env"] == "prod" and got["metadata"]["session_id"] == "s-42"
        assert got["tags"] == ["museum", "geo"]
        llm_span = next(s for s in got["spans"] if s["kind"] == "llm")
        assert llm_span["input"] == [{"role": "user", "content": "Where is the Louvre?"}]
        assert llm_span["output"] == "In Paris."


def otlp_json(trace_hex: str, span_hex: str, **attributes):
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": []},
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": trace_hex,
                                "spanId": span_hex,
                                "name": "chat",
                                "startTimeUnixNano": "1700000000000000000",
                                "endTimeUnixNano": "1700000000250000000",
                                "attributes": [
                                    {"key": k, "value": {"stringValue": v}}
                                    for k, v in attributes.items()
                                ],
                            }
                        ]
                    }
                ],
            }
        ]
    }


def test_json_bodies_gzip_and_limits(live):
    key = live.key()
    trace_hex = uuid.uuid4().hex
    body = otlp_json(
        trace_hex, "00f067aa0ba902b7", **{"input.value": "hi", "output.value": "hello"}
    )
    url = f"{live.base_url}/otlp/v1/traces"
    auth = {"Authorization": f"Bearer {key}"}
    with httpx.Client(timeout=30) as http:
        sent = http.post(
            url,
            content=gzip.compress(json.dumps(body).encode()),
            headers={**auth, "Content-Type": "application/json", "Content-Encoding": "gzip"},
        )
        assert sent.status_code == 200, sent.text
        assert sent.json() == {}  # no partial_success: everything was stored
        with live.client(key) as api:
            got = api.get(f"/traces/{uuid.UUID(hex=trace_hex)}").json()
            assert got["input"] == "hi" and got["output"] == "hello"
            assert got["latency_ms"] == 250.0 and got["created_at"].startswith("2023-11-14")

        assert http.post(url, json=body).status_code == 401
        assert (
            http.post(url, content=b"x", headers={**auth, "Content-Type": "text/plain"}).status_code
            == 415
        )
        broken = http.post(
            url,
            content=b"\xff\x00garbage",
            headers={**auth, "Content-Type": "application/x-protobuf"},
        )
        assert broken.status_code == 400
        bomb = gzip.compress(b" " * 33_000_000)  # small on the wire, over 32 MB unpacked
        assert len(bomb) < 1_000_000
        answer = http.post(
            url,
            content=bomb,
            headers={**auth, "Content-Type": "application/json", "Content-Encoding": "gzip"},
        )
        assert answer.status_code == 413
        message = answer.json()["error"]["message"]  # names the limit and how to raise it
        assert "32 MB" in message and "--max-request-mb" in message, message
        bad_id = otlp_json("zz" * 16, "00f067aa0ba902b7")
        answer = http.post(url, json=bad_id, headers=auth)
        assert answer.status_code == 400
        assert answer.json()["error"]["field"] == "resourceSpans[0].scopeSpans[0].spans[0].traceId"
        zero = otlp_json("00" * 16, "00f067aa0ba902b7")
        answer = http.post(url, json=zero, headers=auth)
        assert answer.status_code == 200
        assert answer.json()["partialSuccess"]["rejectedSpans"] == "1"
        with live.client(key) as api:
            assert len(api.get("/traces").json()["items"]) == 1


def test_later_spans_grow_an_edited_trace_but_keep_the_edit(live):
    key = live.key()
    trace_hex = uuid.uuid4().hex
    url = f"{live.base_url}/otlp/v1/traces"
    auth = {"Authorization": f"Bearer {key}"}
    first = otlp_json(trace_hex, "00f067aa0ba902b7", **{"input.value": "hi", "output.value": "yo"})
    with httpx.Client(timeout=30) as http, live.client(key) as api:
        assert http.post(url, json=first, headers=auth).status_code == 200
        trace_id = str(uuid.UUID(hex=trace_hex))
        edited = api.patch(
            f"/traces/{trace_id}", json={"version": 1, "changes": {"output": "hello"}}
        )
        assert edited.status_code == 200
        later = otlp_json(trace_hex, "1111111111111111", **{"gen_ai.request.model": "m-2"})
        later["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["parentSpanId"] = "00f067aa0ba902b7"
        assert http.post(url, json=later, headers=auth).status_code == 200
        assert http.post(url, json=later, headers=auth).status_code == 200  # re-sent: no copy
        got = api.get(f"/traces/{trace_id}").json()
        assert got["output"] == "hello" and got["edited"] is True  # the person's edit wins
        assert got["model"] == "m-2" and len(got["spans"]) == 2
        assert got["version"] == 4
        with live.client(live.key(scopes=("read",))) as reader:
            refused = httpx.post(url, json=later, headers=reader.headers, timeout=30)
            assert refused.status_code == 403


def test_traces_past_the_per_export_limit_are_refused_as_partial_success(live, monkeypatch):
    from assay.platform.server.otlp import ingest as otlp

    monkeypatch.setattr(otlp, "MAX_TRACES", 3)  # the server runs in this process
    key = live.key()
    body = otlp_json(uuid.uuid4().hex, "00f067aa0ba902b7")
    spans = body["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for _ in range(4):
        spans.append({**spans[0], "traceId": uuid.uuid4().hex})
    answer = httpx.post(
        f"{live.base_url}/otlp/v1/traces",
        json=body,
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )
    assert answer.status_code == 200
    assert answer.json()["partialSuccess"]["rejectedSpans"] == "2"
    assert "limit of 3" in answer.json()["partialSuccess"]["errorMessage"]
    with live.client(key) as api:
        assert len(api.get("/traces").json()["items"]) == 3
