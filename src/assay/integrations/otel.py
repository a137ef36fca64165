"""An `EvaluationResult` as OpenTelemetry spans, so Langfuse, Phoenix, MLflow or any OTLP backend
shows assay's scores beside the traces they judge.

The shape follows the GenAI semantic conventions' evaluation event (`gen_ai.evaluation.result`):

- one span per run (`assay.evaluation.run`): run id, experiment name, row count, seconds, and per
  metric its mean with coverage (`assay.metric.<name>.mean`, `.n_ok`, `.n_rows`, ...);
- one span per row (`assay.evaluation.row`), carrying one `gen_ai.evaluation.result` event per
  metric: `gen_ai.evaluation.name`, `gen_ai.evaluation.score.value` (numbers; bools and pass/fail
  labels as 1/0), `gen_ai.evaluation.score.label` (labels, bools), `gen_ai.evaluation.explanation`
  (the reason), and assay's own `assay.outcome` (`ok`/`skipped`/`error`), the metric's class,
  version, prompt hashes and judge model. A failed cell is never a score: it has no score value,
  `error.type` (the convention's error attribute) is its exception type and `assay.error.message`
  its cause. A skipped cell has no score either and says `skipped` with its reason.

A row that names a span of an application trace in its metadata (`trace_id` and `span_id`, or a
W3C `traceparent`; see `trace_parent`) gets its evaluation span as a child of that span, in that
trace, as the conventions ask ("parented to the GenAI operation span being evaluated"), with a
link to the run span. A row naming only a trace id joins that trace under an unknown parent (the
SDK needs a parent span id; backends show such a span at the top of the trace). Other rows are
children of the run span.

Row spans never get an ERROR status: a judge that failed is not a failure of the application's
operation, and an error status would mark the evaluated trace as failed in every backend.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay._util.deps import require
from assay.errors import AssayError, DataError, UsageError
from assay.schema.outcome import Error, Ok, Skipped
from assay.schema.result import EvaluationResult
from assay.schema.values import as_number

# The GenAI semantic conventions' names (opentelemetry-semantic-conventions, gen_ai_attributes;
# a test checks they still match the installed package).
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "gen_ai.evaluation.name"
SCORE_VALUE = "gen_ai.evaluation.score.value"
SCORE_LABEL = "gen_ai.evaluation.score.label"
EXPLANATION = "gen_ai.evaluation.explanation"
RESPONSE_ID = "gen_ai.response.id"
ERROR_TYPE = "error.type"

RUN_SPAN = "assay.evaluation.run"
ROW_SPAN = "assay.evaluation.row"
# Attribute strings are capped so one long reason or raw answer cannot blow an export's size.
MAX_TEXT = 4096
FEATURE = "assay.integrations.otel"


class OtelExportFailed(AssayError):
    """The spans could not be delivered to the OTLP endpoint (unreachable, refused, timed out)."""


@dataclass(frozen=True)
class OtelExport:
    """What was sent: the run span's trace and span id (hex) and each row span's ids."""

    trace_id: str
    span_id: str
    rows: list[tuple[str, str]] = field(default_factory=list)  # (trace id, span id) per row
    events: int = 0


# -- linking a row to its application trace ---------------------------------------------------------
def _hex_id(value: Any, width: int, row: int, name: str) -> int:
    text = str(value).strip().lower()
    if width == 32 and text.startswith("tr-"):  # MLflow names OpenTelemetry traces tr-<hex>
        text = text[3:]
    if width == 32 and len(text) == 36:  # an assay platform trace id is the same 128 bits as a UUID
        with contextlib.suppress(ValueError):
            text = uuid.UUID(text).hex
    try:
        number = int(text, 16) if len(text) == width else 0
    except ValueError:
        number = 0
    if not number:
        raise DataError(
            f"{name} must be {width} hex digits (not all zero)"
            f"{', a UUID or tr-<32 hex>' if width == 32 else ''}, "
            f"got {value!r}",
            row=row,
            field=name,
            row_is_index=True,
        )
    return number


def trace_parent(
    metadata: Mapping[str, Any],
    row: int,
    *,
    trace_key: str = "trace_id",
    span_key: str = "span_id",
    traceparent_key: str = "traceparent",
) -> tuple[int, int | None] | None:
    """The (trace id, span id or None) a row's metadata names, or None when it names none.

    Read from `traceparent` (W3C `00-<32 hex>-<16 hex>-<2 hex>`) or from `trace_id` (32 hex digits,
    a UUID: the assay platform's trace ids, or `tr-<32 hex>`: MLflow's) with an optional `span_id`
    (16 hex digits). A value
    that is not an id is a `DataError` naming the row and the key."""
    if metadata.get(traceparent_key):
        propagation = require(
            "opentelemetry.trace.propagation.tracecontext", extra="otel", feature=FEATURE
        )
        trace = require("opentelemetry.trace", extra="otel", feature=FEATURE)
        carrier = {"traceparent": str(metadata[traceparent_key])}
        context = propagation.TraceContextTextMapPropagator().extract(carrier)
        parent = trace.get_current_span(context).get_span_context()
        if not parent.is_valid:
            raise DataError(
                f"{traceparent_key} is not a W3C traceparent "
                f"('00-<32 hex>-<16 hex>-<2 hex>'), got {metadata[traceparent_key]!r}",
                row=row,
                field=traceparent_key,
                row_is_index=True,
            )
        return parent.trace_id, parent.span_id
    if metadata.get(trace_key) in (None, ""):
        if metadata.get(span_key) not in (None, ""):
            raise DataError(
                f"{span_key} is given without {trace_key}",
                row=row,
                field=trace_key,
                row_is_index=True,
            )
        return None
    trace_id = _hex_id(metadata[trace_key], 32, row, trace_key)
    span = metadata.get(span_key)
    return trace_id, (_hex_id(span, 16, row, span_key) if span not in (None, "") else None)


# -- attribute values ------------------------------------------------------------------------------
def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _prompt_hashes(spec: Mapping[str, Any]) -> list[str]:
    return [
        f"{p.get('id')}@{p.get('version')}:{p.get('hash')}"
        for p in spec.get("prompts") or []
        if isinstance(p, Mapping)
    ]


def metric_attributes(spec: Mapping[str, Any]) -> dict[str, Any]:
    """What every event of one metric carries: class, version, parameters, prompts, judge."""
    attributes: dict[str, Any] = {
        "assay.metric.class": str(spec.get("class", "")),
        "assay.metric.version": str(spec.get("version", "")),
        "assay.metric.spec": _text(spec),
    }
    hashes = _prompt_hashes(spec)
    if hashes:
        attributes["assay.metric.prompt_hashes"] = hashes
    for role in ("llm", "embeddings"):
        model = spec.get(role)
        if isinstance(model, Mapping) and model.get("model"):
            attributes[f"assay.{role}.model"] = str(model["model"])
            if model.get("provider"):
                attributes[f"assay.{role}.provider"] = str(model["provider"])
    return attributes


def cell_attributes(name: str, cell: Any) -> dict[str, Any]:
    """One cell as the attributes of a `gen_ai.evaluation.result` event (without the metric's)."""
    attributes: dict[str, Any] = {EVALUATION_NAME: name, "assay.outcome": cell.status}
    if isinstance(cell, Ok):
        value = cell.value
        number = as_number(value)
        if number is not None:
            attributes[SCORE_VALUE] = float(number)
        if isinstance(value, bool):
            attributes[SCORE_LABEL] = "true" if value else "false"
        elif isinstance(value, str):
            attributes[SCORE_LABEL] = value
        elif isinstance(value, list):
            attributes["assay.value"] = _text(value)
        if cell.reason:
            attributes[EXPLANATION] = _text(cell.reason)
        if cell.details:
            attributes["assay.details"] = _text(cell.details)
    elif isinstance(cell, Skipped):
        attributes[EXPLANATION] = _text(cell.reason)
    elif isinstance(cell, Error):
        attributes[ERROR_TYPE] = cell.error_type
        attributes["assay.error.message"] = _text(cell.message)
        attributes["assay.error.attempts"] = cell.attempts
        attributes[EXPLANATION] = _text(f"{cell.error_type}: {cell.message}")
        if cell.raw is not None:
            attributes["assay.error.raw"] = _text(cell.raw)
    return attributes


def run_attributes(result: EvaluationResult) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "assay.run.id": str(result.run_id),
        "assay.run.rows": len(result.outcomes),
        "assay.run.seconds": float(result.seconds),
        "assay.run.metrics": list(result.metric_names),
    }
    if result.experiment_name:
        attributes["assay.experiment.name"] = result.experiment_name
    for item in result.summaries():
        prefix = f"assay.metric.{item.name}"
        if item.mean is not None:
            attributes[f"{prefix}.mean"] = float(item.mean)
        attributes[f"{prefix}.coverage"] = float(item.coverage)
        attributes[f"{prefix}.n_rows"] = item.n_rows
        attributes[f"{prefix}.n_ok"] = item.n_ok
        attributes[f"{prefix}.n_skipped"] = item.n_skipped
        attributes[f"{prefix}.n_error"] = item.n_error
    usage = result.usage()
    attributes["assay.usage.input_tokens"] = usage.input_tokens
    attributes["assay.usage.output_tokens"] = usage.output_tokens
    attributes["assay.usage.requests"] = usage.requests
    attributes["assay.usage.cost"] = float(usage.cost)
    return attributes


# -- the tracer provider ---------------------------------------------------------------------------
class _Recording:
    """Wraps the OTLP exporter to remember a failed export (the batch processor only logs it)."""

    def __init__(self, exporter: Any) -> None:
        self.exporter = exporter
        self.failures = 0

    def export(self, spans: Sequence[Any]) -> Any:
        result = self.exporter.export(spans)
        if result.name != "SUCCESS":
            self.failures += 1
        return result

    def shutdown(self) -> None:
        self.exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.exporter.force_flush(timeout_millis)


def otlp_tracer_provider(
    endpoint: str,
    *,
    headers: Mapping[str, str] | None = None,
    service_name: str = "assay",
    timeout: float = 10.0,
) -> Any:
    """A TracerProvider that exports OTLP/HTTP (protobuf) to `endpoint`, the full URL of the
    traces route (e.g. `http://127.0.0.1:6006/v1/traces` for Phoenix,
    `http://127.0.0.1:8321/otlp/v1/traces` for `assay serve`)."""
    if not isinstance(endpoint, str) or not endpoint.startswith(("http://", "https://")):
        raise UsageError(
            f"endpoint must be an http(s) URL of the OTLP traces route, got {endpoint!r}"
        )
    sdk_trace = require("opentelemetry.sdk.trace", extra="otel", feature=FEATURE)
    export = require("opentelemetry.sdk.trace.export", extra="otel", feature=FEATURE)
    resources = require("opentelemetry.sdk.resources", extra="otel", feature=FEATURE)
    otlp = require(
        "opentelemetry.exporter.otlp.proto.http.trace_exporter",
        extra="otel",
        package="opentelemetry-exporter-otlp-proto-http",
        feature=FEATURE,
    )
    exporter = _Recording(
        otlp.OTLPSpanExporter(endpoint=endpoint, headers=dict(headers or {}), timeout=timeout)
    )
    provider = sdk_trace.TracerProvider(
        resource=resources.Resource.create({"service.name": service_name})
    )
    provider.add_span_processor(export.BatchSpanProcessor(exporter))
    provider._assay_exporter = exporter  # read by export_result to report a failed delivery
    return provider


# -- the export ------------------------------------------------------------------------------------
def export_result(
    result: EvaluationResult,
    *,
    tracer_provider: Any = None,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    service_name: str = "assay",
    run_name: str | None = None,
    include_samples: bool = False,
    trace_key: str = "trace_id",
    span_key: str = "span_id",
    traceparent_key: str = "traceparent",
    timeout: float = 10.0,
) -> OtelExport:
    """Send `result` as spans: to `tracer_provider` (yours; flushed, not shut down), or to an
    OTLP/HTTP `endpoint` (a provider built for this export and shut down after it; a failed
    delivery raises `OtelExportFailed`). With neither, the global provider set by your tracing
    setup (Phoenix's `register()`, Langfuse's client, ...) is used.

    `include_samples=True` adds each row's user input, response and reference to its span
    (`assay.sample.*`, capped at 4,096 characters): off by default, as they may hold personal data.
    Every row's trace link is checked before any span is made, so a bad id sends nothing."""
    if not isinstance(result, EvaluationResult):
        raise UsageError(f"export_result needs an EvaluationResult, got {type(result).__name__}")
    if tracer_provider is not None and endpoint is not None:
        raise UsageError("give tracer_provider or endpoint, not both")
    trace = require("opentelemetry.trace", extra="otel", feature=FEATURE)
    links = [
        trace_parent(
            sample.metadata or {},
            index,
            trace_key=trace_key,
            span_key=span_key,
            traceparent_key=traceparent_key,
        )
        for index, sample in enumerate(result.dataset)
    ]
    owned = tracer_provider is None and endpoint is not None
    if tracer_provider is None and endpoint is not None:
        tracer_provider = otlp_tracer_provider(
            endpoint, headers=headers, service_name=service_name, timeout=timeout
        )
    elif tracer_provider is None:
        tracer_provider = trace.get_tracer_provider()
        if not hasattr(tracer_provider, "force_flush"):
            raise UsageError(
                "no OpenTelemetry tracer provider is set up: pass tracer_provider=... or "
                "endpoint='http://host:port/v1/traces' (pip install 'assay[otel]')"
            )
    from assay import __version__

    tracer = tracer_provider.get_tracer("assay", __version__)
    specs = {spec["name"]: metric_attributes(spec) for spec in result.metric_specs}
    rows: list[tuple[str, str]] = []
    events = 0
    try:
        with tracer.start_as_current_span(
            run_name
            or (f"{RUN_SPAN} {result.experiment_name}" if result.experiment_name else RUN_SPAN),
            attributes=run_attributes(result),
        ) as run_span:
            run_context = run_span.get_span_context()
            for index, (sample, cells, link) in enumerate(
                zip(result.dataset, result.outcomes, links, strict=True)
            ):
                span = _row_span(
                    trace,
                    tracer,
                    run_span,
                    run_context,
                    str(result.run_id),
                    index,
                    sample,
                    link,
                    include_samples,
                )
                with span:
                    for name, cell in cells.items():
                        span.add_event(
                            EVALUATION_EVENT, {**specs.get(name, {}), **cell_attributes(name, cell)}
                        )
                        events += 1
                    context = span.get_span_context()
                    rows.append((f"{context.trace_id:032x}", f"{context.span_id:016x}"))
        flush = getattr(tracer_provider, "force_flush", None)  # the API's no-op provider has none
        flushed = flush(int(timeout * 1000) + 1000) if callable(flush) else True
    finally:
        if owned:
            tracer_provider.shutdown()
    exporter = getattr(tracer_provider, "_assay_exporter", None)
    if owned and (not flushed or (exporter is not None and exporter.failures)):
        raise OtelExportFailed(
            f"the spans of run {result.run_id} were not all delivered to {endpoint} "
            "(see the opentelemetry exporter's log for the server's answer)"
        )
    return OtelExport(f"{run_context.trace_id:032x}", f"{run_context.span_id:016x}", rows, events)


def _row_span(
    trace: Any,
    tracer: Any,
    run_span: Any,
    run_context: Any,
    run_id: str,
    index: int,
    sample: Any,
    link: tuple[int, int | None] | None,
    include_samples: bool,
) -> Any:
    metadata = sample.metadata or {}
    attributes: dict[str, Any] = {"assay.run.id": run_id, "assay.row.index": index}
    if metadata.get("id") is not None:
        attributes["assay.row.id"] = _text(metadata["id"])
    if metadata.get("response_id"):
        attributes[RESPONSE_ID] = str(metadata["response_id"])
    if include_samples:
        for name in ("user_input", "response", "reference"):
            value = getattr(sample, name, None)
            if value is not None:
                attributes[f"assay.sample.{name}"] = _text(value)
    if link is None:
        context = trace.set_span_in_context(run_span)
        return tracer.start_span(ROW_SPAN, context=context, attributes=attributes)
    trace_id, span_id = link
    attributes["assay.link.span_known"] = span_id is not None
    parent = trace.SpanContext(
        trace_id=trace_id,
        span_id=span_id if span_id is not None else secrets.randbits(64) or 1,
        is_remote=True,
        trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
    )
    context = trace.set_span_in_context(trace.NonRecordingSpan(parent))
    return tracer.start_span(
        ROW_SPAN, context=context, attributes=attributes, links=[trace.Link(run_context)]
    )


__all__ = [
    "EVALUATION_EVENT",
    "OtelExport",
    "OtelExportFailed",
    "cell_attributes",
    "export_result",
    "metric_attributes",
    "otlp_tracer_provider",
    "run_attributes",
    "trace_parent",
]
