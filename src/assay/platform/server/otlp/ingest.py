"""`POST /otlp/v1/traces`: OTLP/HTTP trace export, protobuf (`application/x-protobuf`) or JSON
(`application/json`, ids in hex as OTLP/JSON has them), gzip-compressed or not. The body is
bounded before and after gzip by the server's `--max-request-mb` (32 MB by default: the official
exporters send 512 spans a request at most by default, about 1.2 MB with 2,000-character
messages); past it the answer is a 413 naming the limit and how to raise it, and a gzip bomb is
cut off at the limit. Authentication is the same Bearer key (scope `ingest` or `write`).

Spans are grouped by trace id; each group becomes one assay trace (`otlp_mapping.build_trace`).
Spans of a trace that arrive in a later export are merged into the stored trace by span id (a
re-sent span replaces its earlier copy), the trace's fields are recomputed from all its spans and
its version moves on; a trace edited by a person keeps its edited input, output, contexts,
metadata and tags. New and grown traces are routed into the review queues they match in the same
transaction. A span that cannot be stored is counted in the response's `partial_success`.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from datetime import datetime, timezone
from typing import Any

from fastapi import APIRouter, Request, Response
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from assay.platform.server.config import MAX_REQUEST_HINT
from assay.platform.server.errors import ApiError
from assay.platform.server.otlp.mapping import (
    attribute_map,
    build_trace,
    evaluation_scores,
    span_dict,
    trace_uuid,
)
from assay.platform.server.schemas.traces import SPANS_MAX, TraceIn
from assay.platform.server.storage import models
from assay.platform.server.storage.evaluators import EvaluatorRepo
from assay.platform.server.storage.review import QueueRepo
from assay.platform.server.storage.rollups import Deltas, part_of
from assay.platform.server.storage.trace_rows import trace_values
from assay.platform.server.storage.traces import TraceRepo

router = APIRouter()

PATH = "/otlp/v1/traces"
MAX_SPANS = 20_000
MAX_TRACES = 10_000  # per export (the Collector batches 8,192 spans); further traces are refused
PROTOBUF = ("application/x-protobuf", "application/protobuf")
SPAN_KEYS: dict[str, Any] = {
    "parent_id": None,
    "name": "",
    "kind": "other",
    "started_at": None,
    "ended_at": None,
    "input": None,
    "output": None,
    "error": None,
    "attributes": {},
}
T = models.LoggedTrace


def _principal(request: Request) -> Any:
    value = request.headers.get("authorization", "")
    token = value[7:].strip() if value[:7].lower() == "bearer " else ""
    token = token or request.headers.get("x-api-key", "").strip()
    if not token:
        raise ApiError(401, "unauthorized", "missing API key: send `Authorization: Bearer assay_…`")
    result = request.app.state.assay.authenticate(token)
    if isinstance(result, ApiError):
        raise result
    if isinstance(result, str):
        raise ApiError(401, "unauthorized", result)
    if not (result.allows("ingest") or result.allows("write")):
        raise ApiError(403, "forbidden", "this API key lacks the 'ingest' (or 'write') scope")
    return result


def decompress(body: bytes, encoding: str, limit: int) -> bytes:
    """The body unpacked (gzip or none), refused with a 413 once it unpacks past `limit` bytes."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding != "gzip":
        raise ApiError(415, "unsupported", f"Content-Encoding {encoding!r}: send gzip or none")
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise ApiError(400, "bad_request", f"the gzip body is corrupt: {exc}") from None
    if len(data) > limit or inflater.unconsumed_tail:
        raise ApiError(
            413,
            "too_large",
            f"the body unpacks to over {limit / 1_000_000:g} MB, the limit of an OTLP export "
            f"({MAX_REQUEST_HINT})",
        )
    if not inflater.eof:
        raise ApiError(400, "bad_request", "the gzip body is cut off")
    return data


def _hex_to_base64(node: Any, where: str) -> None:
    """OTLP/JSON writes ids as hex; protobuf's JSON reader wants base64 for bytes."""
    for key in ("traceId", "spanId", "parentSpanId"):
        value = node.get(key)
        if isinstance(value, str) and value:
            try:
                node[key] = base64.b64encode(bytes.fromhex(value)).decode()
            except ValueError:
                raise ApiError(
                    400, "bad_request", f"{where}.{key}: not a hex id", field=f"{where}.{key}"
                ) from None


def parse_json(data: bytes) -> ExportTraceServiceRequest:
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "bad_request", "the body is not valid JSON", field="body") from None
    if not isinstance(document, dict):
        raise ApiError(400, "bad_request", "the body must be a JSON object", field="body")
    for r, resource in enumerate(document.get("resourceSpans") or []):
        for s, scope in enumerate((resource or {}).get("scopeSpans") or []):
            for n, span in enumerate((scope or {}).get("spans") or []):
                where = f"resourceSpans[{r}].scopeSpans[{s}].spans[{n}]"
                if isinstance(span, dict):
                    _hex_to_base64(span, where)
                    for k, link in enumerate(span.get("links") or []):
                        if isinstance(link, dict):
                            _hex_to_base64(link, f"{where}.links[{k}]")
    try:
        return json_format.ParseDict(
            document, ExportTraceServiceRequest(), ignore_unknown_fields=True
        )
    except (json_format.ParseError, binascii.Error, TypeError, ValueError) as exc:
        raise ApiError(
            400, "bad_request", f"not an OTLP trace export: {exc}", field="body"
        ) from None


def parse_protobuf(data: bytes) -> ExportTraceServiceRequest:
    try:
        return ExportTraceServiceRequest.FromString(data)
    except (DecodeError, RuntimeWarning, ValueError) as exc:
        raise ApiError(400, "bad_request", f"not an OTLP trace export (protobuf): {exc}") from None


def group_spans(
    export: ExportTraceServiceRequest,
) -> tuple[dict[str, dict[str, Any]], int, list[str]]:
    """Spans by assay trace id, with the resource attributes of the first; plus the number of
    spans refused (bad ids) and why."""
    groups: dict[str, dict[str, Any]] = {}
    ids: dict[bytes, str] = {}  # OTel trace id -> assay trace id, made once a trace
    refused, problems, seen = 0, [], 0
    for resource_spans in export.resource_spans:
        resource = {
            k: v
            for k, v in attribute_map(resource_spans.resource.attributes).items()
            if isinstance(v, (str, int, float, bool))
        }
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                seen += 1
                if seen > MAX_SPANS:
                    refused += 1
                    continue
                if len(span.trace_id) != 16 or not any(span.trace_id) or len(span.span_id) != 8:
                    refused += 1
                    problems.append(f"span {span.name!r}: trace id must be 16 bytes, span id 8")
                    continue
                trace_id = ids.get(span.trace_id)
                if trace_id is None:
                    trace_id = ids[span.trace_id] = trace_uuid(span.trace_id)
                if trace_id not in groups and len(groups) >= MAX_TRACES:
                    refused += 1
                    problems.append(f"traces past the limit of {MAX_TRACES} per export")
                    continue
                group = groups.setdefault(trace_id, {"spans": [], "resource": resource})
                group["spans"].append(span_dict(span))
    if seen > MAX_SPANS:
        problems.append(f"{seen - MAX_SPANS} spans past the limit of {MAX_SPANS} per export")
    return groups, refused, problems


def _validated(trace_id: str, spans: list[dict[str, Any]], resource: dict[str, Any]) -> TraceIn:
    spans = sorted(spans, key=lambda s: (s.get("started_at") or "", s["id"]))[:SPANS_MAX]
    return TraceIn.model_validate(build_trace(trace_id, spans, resource))


def _merge_into(
    row: models.LoggedTrace, spans: list[dict[str, Any]], project_id: int, deltas: Deltas
) -> None:
    # a stored span may lack keys an OTLP span has (one sent through the API with fewer)
    stored = [{**SPAN_KEYS, **s} for s in row.spans or [] if isinstance(s, dict) and "id" in s]
    by_id = {s["id"]: s for s in stored}
    by_id.update({s["id"]: s for s in spans})
    resource = (row.meta or {}).get("resource") or {}
    trace = _validated(row.id, list(by_id.values()), resource)
    values = trace_values(trace, project_id, datetime.now(timezone.utc))
    before = part_of(row)
    keep = {"project_id", "id", "version", "edited"}
    if row.edited:  # a person's edit wins over the spans
        keep |= {"input", "output", "input_text", "output_text", "contexts", "meta", "tags"}
        keep.add("session_id")  # it follows the metadata kept
    for field, value in values.items():
        if field not in keep:
            setattr(row, field, value)
    row.version += 1
    deltas.replace(before, part_of(row))  # the merged spans may move its time, latency, model


def store(state: Any, project_id: int, groups: dict[str, dict[str, Any]]) -> tuple[int, list[str]]:
    """Store the groups in one transaction; returns (spans refused, why)."""
    refused, problems = 0, []
    with state.transaction() as session:
        repo = TraceRepo(session, project_id)

        def stored_rows() -> dict[str, models.LoggedTrace]:
            return repo.locked_by_id(list(groups))

        existing = stored_rows()
        deltas = Deltas(project_id)
        fresh: list[TraceIn] = []
        touched: list[str] = []
        for trace_id, group in groups.items():
            if len(group["spans"]) > SPANS_MAX:  # the earliest are kept
                refused += len(group["spans"]) - SPANS_MAX
                problems.append(f"trace {trace_id}: spans past the limit of {SPANS_MAX}")
            try:
                if trace_id in existing:
                    _merge_into(existing[trace_id], group["spans"], project_id, deltas)
                    touched.append(trace_id)
                else:
                    fresh.append(_validated(trace_id, group["spans"], group["resource"]))
            except ValidationError as exc:
                problem = exc.errors()[0]
                field = ".".join(str(p) for p in problem["loc"])
                refused += len(group["spans"])
                problems.append(f"trace {trace_id}: {field}: {problem['msg']}")
        stored, _duplicates = repo.ingest(fresh) if fresh else ([], 0)
        raced = [t.id for t in fresh if t.id not in set(stored)]
        if raced:  # another export stored the same trace meanwhile: merge into it
            again = stored_rows()
            for trace_id in raced:
                _merge_into(again[trace_id], groups[trace_id]["spans"], project_id, deltas)
                touched.append(trace_id)
        deltas.write(session)
        session.flush()
        kept = set(stored) | set(touched)
        scores = [
            row
            for trace_id, group in groups.items()
            if trace_id in kept
            for span in group["spans"]
            for row in evaluation_scores(trace_id, span)
        ]
        if scores:
            known = repo.score_keys(list(kept))
            repo.add_scores(
                [s for s in scores if (s["trace_id"], s["criterion"], s["source"]) not in known]
            )
        QueueRepo(session, project_id).route(sorted(kept))
        EvaluatorRepo(session, project_id).route(sorted(kept))
    return refused, problems


def ingest_body(
    state: Any, project_id: int, body: bytes, encoding: str, content_type: str
) -> tuple[int, list[str]]:
    """Unpack, parse, map and store one export; returns (spans refused, why). Run in the thread
    pool as one piece: the parse and the mapping are CPU work (a few ms for a request of a
    hundred spans) that would otherwise hold the event loop, and other requests' bodies are
    read meanwhile."""
    data = decompress(body, encoding, state.max_request)
    export = parse_json(data) if content_type == "application/json" else parse_protobuf(data)
    groups, refused, problems = group_spans(export)
    if groups:
        more, why = store(state, project_id, groups)
        refused, problems = refused + more, problems + why
    return refused, problems


@router.post(PATH)
async def otlp_traces(request: Request) -> Response:
    principal = await run_in_threadpool(_principal, request)
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type not in (*PROTOBUF, "application/json"):
        raise ApiError(
            415,
            "unsupported",
            "Content-Type must be application/x-protobuf or application/json",
            field="content-type",
        )
    body = await request.body()
    encoding = request.headers.get("content-encoding", "")
    refused, problems = await run_in_threadpool(
        ingest_body, request.app.state.assay, principal.project_id, body, encoding, content_type
    )
    answer = ExportTraceServiceResponse()
    if refused:
        answer.partial_success.rejected_spans = refused
        answer.partial_success.error_message = "; ".join(dict.fromkeys(problems))[:2000]
    if content_type == "application/json":
        return Response(json_format.MessageToJson(answer), media_type="application/json")
    return Response(answer.SerializeToString(), media_type="application/x-protobuf")


__all__ = ["PATH", "decompress", "ingest_body", "router", "store"]
