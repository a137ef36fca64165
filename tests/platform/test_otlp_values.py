"""OTLP attribute values as the trace model keeps them: every kind of `AnyValue` (strings and
integers are read on a fast path of their own, the rest by `any_value`), and one trace id made
once for all the spans of a trace. Pure functions: no server."""

from __future__ import annotations

import math

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from assay.platform.server.otlp.ingest import group_spans
from assay.platform.server.otlp.mapping import attribute_map


def test_every_kind_of_value():
    pairs = [
        KeyValue(key="s", value=AnyValue(string_value="text")),
        KeyValue(key="empty", value=AnyValue(string_value="")),
        KeyValue(key="i", value=AnyValue(int_value=-(2**62))),
        KeyValue(key="zero", value=AnyValue(int_value=0)),
        KeyValue(key="b", value=AnyValue(bool_value=False)),
        KeyValue(key="d", value=AnyValue(double_value=0.25)),
        KeyValue(key="inf", value=AnyValue(double_value=math.inf)),
        KeyValue(key="bytes", value=AnyValue(bytes_value=b"\x01\xff")),
        KeyValue(key="unset", value=AnyValue()),
        KeyValue(
            key="a",
            value=AnyValue(
                array_value=ArrayValue(values=[AnyValue(string_value="x"), AnyValue(int_value=2)])
            ),
        ),
        KeyValue(
            key="kv",
            value=AnyValue(
                kvlist_value=KeyValueList(
                    values=[KeyValue(key="k", value=AnyValue(double_value=1.5))]
                )
            ),
        ),
    ]
    found = attribute_map(pairs)
    assert found == {
        "s": "text",
        "empty": "",
        "i": -(2**62),
        "zero": 0,
        "b": False,
        "d": 0.25,
        "inf": "inf",
        "bytes": "01ff",
        "unset": None,
        "a": ["x", 2],
        "kv": {"k": 1.5},
    }
    assert type(found["i"]) is int and type(found["b"]) is bool


def test_spans_of_one_trace_share_its_id():
    trace_a, trace_b = bytes(range(1, 17)), bytes(range(2, 18))
    spans = [
        Span(trace_id=trace, span_id=bytes([n] * 8), name=f"s{n}")
        for n, trace in enumerate((trace_a, trace_b, trace_a), start=1)
    ]
    export = ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])]
    )
    groups, refused, problems = group_spans(export)
    assert refused == 0 and problems == []
    assert list(groups) == [
        "01020304-0506-0708-090a-0b0c0d0e0f10",
        "02030405-0607-0809-0a0b-0c0d0e0f1011",
    ]
    assert [s["name"] for s in groups["01020304-0506-0708-090a-0b0c0d0e0f10"]["spans"]] == [
        "s1",
        "s3",
    ]
