"""The workload of `platform_traces.py` (issue #46): LLM-shaped traces of 3 spans as OTLP export
requests. Each trace is a root CHAIN span (OpenInference `input.value` = the question,
`output.value` = the answer), a retriever span with two documents, and a GenAI `chat` span whose
`gen_ai.input.messages` holds a system prompt with the documents and the question and whose
`gen_ai.output.messages` holds the answer, with token counts. Text is words drawn with Zipf
weights from a made-up vocabulary (seeded), so it compresses about as prose does. One trace in
100 uses the model `gpt-4o`, the others `gpt-4o-mini`."""

from __future__ import annotations

import json
import random
import time
import uuid
from datetime import datetime, timezone
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

TRACES_PER_EXPORT = 170  # 510 spans; the official BatchSpanProcessor sends 512


def vocabulary(rng: random.Random, size: int = 3_000) -> tuple[list[str], list[float]]:
    syllables = [c + v for c in "bcdfghklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ea", "ou")]
    words = sorted(
        {
            "".join(rng.choice(syllables) for _ in range(rng.choice((1, 2, 2, 3))))
            for _ in range(size)
        }
    )
    rng.shuffle(words)
    weights = [1 / (rank + 1) for rank in range(len(words))]  # Zipf, as in prose
    return words, weights


class Text:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.words, self.weights = vocabulary(self.rng)

    def __call__(self, chars: int) -> str:
        out: list[str] = []
        size = 0
        while size < chars:
            chunk = self.rng.choices(self.words, self.weights, k=12)
            out.extend(chunk)
            size += sum(len(w) + 1 for w in chunk)
        text = " ".join(out)[:chars]
        return text[0].upper() + text[1:] + "."


def kv(key: str, value: Any) -> KeyValue:
    if isinstance(value, bool):
        return KeyValue(key=key, value=AnyValue(bool_value=value))
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=str(value)))


def trace_spans(n: int, text: Text, start_ns: int) -> list[Span]:
    """The three spans of trace number `n`."""
    trace_id = n.to_bytes(8, "big") + text.rng.getrandbits(64).to_bytes(8, "big")
    ids = [text.rng.getrandbits(64).to_bytes(8, "big") for _ in range(3)]
    question = text(80).rstrip(".") + "?"
    documents = [text(250), text(250)]
    answer = text(550)
    model = "gpt-4o" if n % 100 == 0 else "gpt-4o-mini"
    t0 = start_ns + n * 1_000_000
    root = Span(
        trace_id=trace_id,
        span_id=ids[0],
        name="answer_question",
        start_time_unix_nano=t0,
        end_time_unix_nano=t0 + 1_400_000_000,
        attributes=[
            kv("openinference.span.kind", "CHAIN"),
            kv("input.value", question),
            kv("output.value", answer),
            kv("session.id", f"s-{n // 7}"),
        ],
    )
    retrieve = Span(
        trace_id=trace_id,
        span_id=ids[1],
        parent_span_id=ids[0],
        name="retrieve",
        start_time_unix_nano=t0 + 10_000_000,
        end_time_unix_nano=t0 + 90_000_000,
        attributes=[
            kv("openinference.span.kind", "RETRIEVER"),
            kv("input.value", question),
            *(kv(f"retrieval.documents.{i}.document.content", d) for i, d in enumerate(documents)),
        ],
    )
    system = "Answer from these documents only.\n\n" + "\n\n".join(documents)
    messages = [
        {"role": "system", "parts": [{"type": "text", "content": system}]},
        {"role": "user", "parts": [{"type": "text", "content": question}]},
    ]
    reply = [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
    chat = Span(
        trace_id=trace_id,
        span_id=ids[2],
        parent_span_id=ids[0],
        name=f"chat {model}",
        start_time_unix_nano=t0 + 100_000_000,
        end_time_unix_nano=t0 + 1_390_000_000,
        attributes=[
            kv("gen_ai.operation.name", "chat"),
            kv("gen_ai.provider.name", "openai"),
            kv("gen_ai.request.model", model),
            kv("gen_ai.response.model", model),
            kv("gen_ai.usage.input_tokens", 260 + n % 40),
            kv("gen_ai.usage.output_tokens", 220 + n % 30),
            kv("gen_ai.input.messages", json.dumps(messages)),
            kv("gen_ai.output.messages", json.dumps(reply)),
        ],
    )
    return [root, retrieve, chat]


def exports(total: int, seed: int = 46, per_export: int = TRACES_PER_EXPORT) -> Any:
    """The export requests (protobuf bytes) of `total` traces, made as they are sent."""
    text = Text(seed)
    start = time.time_ns() - total * 1_000_000
    for first in range(0, total, per_export):
        spans = [
            s
            for n in range(first, min(total, first + per_export))
            for s in trace_spans(n, text, start)
        ]
        resource = ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])
        resource.resource.attributes.append(kv("service.name", "support-bot"))
        yield len(spans), ExportTraceServiceRequest(resource_spans=[resource]).SerializeToString()


def _when(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, timezone.utc).isoformat()


def sdk_trace(n: int, text: Text, start_ns: int) -> dict[str, Any]:
    """Trace number `n` as the SDK's batch route takes it (`POST /api/v1/traces`): the same
    question, documents, answer, model, tokens and three spans as the OTLP workload."""
    spans = trace_spans(n, text, start_ns)
    root, retrieve, chat = spans
    attrs = {a.key: a.value for a in chat.attributes}
    question = root.attributes[1].value.string_value
    answer = root.attributes[2].value.string_value
    documents = [a.value.string_value for a in retrieve.attributes[2:]]
    model = attrs["gen_ai.request.model"].string_value

    def span(s: Span, kind: str, parent: str | None, **more: Any) -> dict[str, Any]:
        return {
            "id": s.span_id.hex(),
            "parent_id": parent,
            "name": s.name,
            "kind": kind,
            "started_at": _when(s.start_time_unix_nano),
            "ended_at": _when(s.end_time_unix_nano),
            **more,
        }

    return {
        "id": str(uuid.UUID(bytes=root.trace_id)),
        "created_at": _when(root.start_time_unix_nano),
        "input": question,
        "output": answer,
        "contexts": documents,
        "model": model,
        "usage": {
            "input_tokens": attrs["gen_ai.usage.input_tokens"].int_value,
            "output_tokens": attrs["gen_ai.usage.output_tokens"].int_value,
        },
        "latency_ms": (root.end_time_unix_nano - root.start_time_unix_nano) / 1e6,
        "metadata": {"session_id": f"s-{n // 7}"},
        "spans": [
            span(root, "function", None, input=question, output=answer),
            span(retrieve, "retrieval", root.span_id.hex(), input=question, output=documents),
            span(
                chat,
                "llm",
                root.span_id.hex(),
                input=[{"role": "user", "content": question}],
                output=answer,
            ),
        ],
    }


def sdk_batches(total: int, seed: int = 47, per_request: int = 100) -> Any:
    """(spans, JSON body) of the SDK batch route's requests for `total` traces."""
    text = Text(seed)
    start = time.time_ns() - total * 1_000_000
    for first in range(0, total, per_request):
        traces = [sdk_trace(n, text, start) for n in range(first, min(total, first + per_request))]
        yield 3 * len(traces), json.dumps({"traces": traces}).encode()
