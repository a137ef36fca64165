"""EvaluationResult -> OpenTelemetry spans with GenAI evaluation events: the spans the real SDK
records (InMemorySpanExporter), rows linked into an application's trace, bad ids refused before
anything is sent, and a real OTLP/HTTP export to `assay serve`'s own receiver on 127.0.0.1."""

from __future__ import annotations

import json
import re
import socket
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from assay import EvaluationDataset, Faithfulness, evaluate
from assay.errors import DataError, MissingDependency, UsageError
from assay.integrations import otel
from assay.integrations.otel import OtelExportFailed, export_result
from assay.metrics.classic import ExactMatch
from assay.schema.outcome import Error, Ok, Skipped
from assay.schema.result import EvaluationResult
from tests.metrics.rag.scripted import judge, verdict_lines

APP_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
APP_SPAN = "00f067aa0ba902b7"
CONTEXTS = ["Paris is the capital of France."]


def verdicts(request) -> str:
    """The scripted judge: an unreadable answer for the response that says 'garbled'."""
    if "garbled" in str(request.messages[-1].content):
        return "I would rather not say."
    return verdict_lines("yes")


def evaluated(
    *, second: dict[str, Any] | None = None, third: dict[str, Any] | None = None, **first: Any
) -> EvaluationResult:
    """Three rows through the real engine: ok, one failed judge call, one skipped row; each
    keyword's items join that row (as metadata when they are not sample fields)."""
    llm, _provider = judge(verdicts, repeat_last=True)
    rows = [
        {
            "id": "q1",
            "user_input": "Capital of France?",
            "response": "Paris is the capital of France.",
            "reference": "Paris is the capital of France.",
            "retrieved_contexts": CONTEXTS,
            **first,
        },
        {
            "id": "q2",
            "user_input": "Capital of Spain?",
            "response": "garbled",
            "reference": "Madrid.",
            "retrieved_contexts": CONTEXTS,
            **(second or {}),
        },
        {
            "id": "q3",
            "user_input": "Capital of Italy?",
            "response": "",
            "reference": "Rome.",
            **(third or {}),
        },
    ]
    result = evaluate(
        rows,
        [ExactMatch(), Faithfulness(llm=llm)],
        show_progress=False,
        experiment_name="nightly",
    )
    assert isinstance(result.outcome(1, "faithfulness"), Error)
    assert isinstance(result.outcome(2, "exact_match"), Skipped)
    return result


def memory() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def events_of(span) -> dict[str, dict[str, Any]]:
    found = {}
    for event in span.events:
        assert event.name == "gen_ai.evaluation.result"
        found[event.attributes["gen_ai.evaluation.name"]] = dict(event.attributes)
    return found


def test_attribute_names_are_the_semantic_conventions():
    from opentelemetry.semconv._incubating.attributes import error_attributes, gen_ai_attributes

    assert otel.EVALUATION_NAME == gen_ai_attributes.GEN_AI_EVALUATION_NAME
    assert otel.SCORE_VALUE == gen_ai_attributes.GEN_AI_EVALUATION_SCORE_VALUE
    assert otel.SCORE_LABEL == gen_ai_attributes.GEN_AI_EVALUATION_SCORE_LABEL
    assert otel.EXPLANATION == gen_ai_attributes.GEN_AI_EVALUATION_EXPLANATION
    assert otel.RESPONSE_ID == gen_ai_attributes.GEN_AI_RESPONSE_ID
    assert otel.ERROR_TYPE == error_attributes.ERROR_TYPE


def test_one_run_span_and_one_row_span_per_row_with_typed_events():
    result = evaluated()
    provider, exporter = memory()
    sent = export_result(result, tracer_provider=provider)
    spans = exporter.get_finished_spans()
    run = next(s for s in spans if s.name.startswith("assay.evaluation.run"))
    rows = sorted(
        (s for s in spans if s.name == "assay.evaluation.row"),
        key=lambda s: s.attributes["assay.row.index"],
    )
    assert len(spans) == 4 and len(rows) == 3 and sent.events == 6
    assert run.name == "assay.evaluation.run nightly" and run.parent is None
    assert sent.trace_id == f"{run.context.trace_id:032x}"
    for row in rows:  # unlinked rows are children of the run span, in its trace
        assert row.parent.span_id == run.context.span_id
        assert row.context.trace_id == run.context.trace_id
        assert row.attributes["assay.run.id"] == str(result.run_id)
        assert row.status.status_code == trace.StatusCode.UNSET  # a failed judge is no app error
    assert [r.attributes["assay.row.id"] for r in rows] == ["q1", "q2", "q3"]

    # aggregates with coverage on the run span
    faith = result.summary("faithfulness")
    assert run.attributes["assay.metric.faithfulness.mean"] == faith.mean == 1.0
    assert run.attributes["assay.metric.faithfulness.n_ok"] == 1
    assert run.attributes["assay.metric.faithfulness.n_error"] == 1
    assert run.attributes["assay.metric.faithfulness.n_skipped"] == 1
    assert run.attributes["assay.metric.faithfulness.coverage"] == pytest.approx(1 / 3)
    assert run.attributes["assay.metric.exact_match.mean"] == 0.5
    assert run.attributes["assay.usage.requests"] == result.usage().requests > 0

    ok, failed, skipped = (events_of(r) for r in rows)
    assert ok["exact_match"]["gen_ai.evaluation.score.value"] == 1.0
    assert ok["exact_match"]["assay.outcome"] == "ok"
    assert ok["faithfulness"]["gen_ai.evaluation.score.value"] == 1.0
    assert ok["faithfulness"]["gen_ai.evaluation.explanation"].startswith("1 of 1 sentences")
    assert json.loads(ok["faithfulness"]["assay.details"])["claims"][0]["verdict"] == "yes"
    # the metric's spec: judge, prompt hash, class
    spec = next(s for s in result.metric_specs if s["name"] == "faithfulness")
    prompt = spec["prompts"][0]
    assert ok["faithfulness"]["assay.metric.prompt_hashes"] == (
        f"{prompt['id']}@{prompt['version']}:{prompt['hash']}",
    )
    assert ok["faithfulness"]["assay.llm.model"] == "scripted"
    assert ok["faithfulness"]["assay.metric.class"] == "Faithfulness"
    assert json.loads(ok["faithfulness"]["assay.metric.spec"]) == spec
    assert "assay.llm.model" not in ok["exact_match"]

    # a failed cell is an error with its cause, never a 0
    error = failed["faithfulness"]
    cell = result.outcome(1, "faithfulness")
    assert "gen_ai.evaluation.score.value" not in error
    assert error["assay.outcome"] == "error"
    assert error["error.type"] == cell.error_type == "OutputParseError"
    assert error["assay.error.message"] == cell.message
    assert error["assay.error.raw"] == "I would rather not say."
    assert failed["exact_match"]["gen_ai.evaluation.score.value"] == 0.0

    # skipped cells say so, with the reason, and carry no score
    for name in ("exact_match", "faithfulness"):
        assert skipped[name]["assay.outcome"] == "skipped"
        assert "gen_ai.evaluation.score.value" not in skipped[name]
        assert "error.type" not in skipped[name]
    assert skipped["exact_match"]["gen_ai.evaluation.explanation"] == "row has no response"
    # the user's provider is flushed, not shut down: it still records
    with provider.get_tracer("app").start_as_current_span("after"):
        pass
    assert exporter.get_finished_spans()[-1].name == "after"


def test_labels_bools_and_rankings_keep_their_kind():
    data = EvaluationDataset.from_list(
        [{"user_input": "q", "response": "a", "include": "x", "samples": "y"}]
    )
    specs = [{"name": n, "class": "Hand", "version": "1", "params": {}} for n in "abcd"]
    outcomes = [
        {
            "a": Ok(value="pass", reason="meets the criterion"),
            "b": Ok(value="positive"),
            "c": Ok(value=False),
            "d": Ok(value=[2, 1, 3]),
        }
    ]
    provider, exporter = memory()
    export_result(
        EvaluationResult(data, specs, outcomes), tracer_provider=provider, include_samples=True
    )
    row = next(s for s in exporter.get_finished_spans() if s.name == "assay.evaluation.row")
    got = events_of(row)
    assert got["a"]["gen_ai.evaluation.score.label"] == "pass"
    assert got["a"]["gen_ai.evaluation.score.value"] == 1.0  # pass/fail read as 1/0, as in means
    assert got["b"]["gen_ai.evaluation.score.label"] == "positive"
    assert "gen_ai.evaluation.score.value" not in got["b"]
    assert got["c"]["gen_ai.evaluation.score.value"] == 0.0
    assert got["c"]["gen_ai.evaluation.score.label"] == "false"
    assert json.loads(got["d"]["assay.value"]) == [2, 1, 3]
    assert row.attributes["assay.sample.user_input"] == "q"
    assert row.attributes["assay.sample.response"] == "a"


@pytest.mark.parametrize(
    "metadata",
    [
        {"trace_id": APP_TRACE, "span_id": APP_SPAN},
        {"traceparent": f"00-{APP_TRACE}-{APP_SPAN}-01"},
        {"trace_id": str(uuid.UUID(hex=APP_TRACE)), "span_id": APP_SPAN.upper()},
        {"trace_id": f"tr-{APP_TRACE}", "span_id": APP_SPAN},
    ],
    ids=["ids", "traceparent", "uuid", "mlflow"],
)
def test_a_row_naming_a_span_is_evaluated_inside_that_trace(metadata):
    provider, exporter = memory()
    export_result(evaluated(**metadata), tracer_provider=provider)
    spans = exporter.get_finished_spans()
    run = next(s for s in spans if s.name.startswith("assay.evaluation.run"))
    first = next(s for s in spans if s.attributes.get("assay.row.index") == 0)
    assert f"{first.context.trace_id:032x}" == APP_TRACE
    assert f"{first.parent.span_id:016x}" == APP_SPAN and first.parent.is_remote
    assert [link.context.span_id for link in first.links] == [run.context.span_id]
    assert first.attributes["assay.link.span_known"] is True
    second = next(s for s in spans if s.attributes.get("assay.row.index") == 1)
    assert second.context.trace_id == run.context.trace_id


def test_a_row_naming_only_a_trace_joins_it():
    provider, exporter = memory()
    export_result(evaluated(trace_id=APP_TRACE), tracer_provider=provider)
    first = next(
        s for s in exporter.get_finished_spans() if s.attributes.get("assay.row.index") == 0
    )
    assert f"{first.context.trace_id:032x}" == APP_TRACE
    assert first.attributes["assay.link.span_known"] is False


@pytest.mark.parametrize(
    ("metadata", "field"),
    [
        ({"trace_id": "not-a-trace"}, "trace_id"),
        ({"trace_id": "0" * 32}, "trace_id"),
        ({"trace_id": APP_TRACE, "span_id": "123"}, "span_id"),
        ({"span_id": APP_SPAN}, "trace_id"),
        ({"traceparent": "01-xyz"}, "traceparent"),
    ],
)
def test_a_bad_trace_link_names_row_and_field_and_sends_nothing(metadata, field):
    result = evaluated(**metadata)
    provider, exporter = memory()
    with pytest.raises(DataError) as caught:
        export_result(result, tracer_provider=provider)
    assert caught.value.row == 0 and caught.value.field == field
    assert str(caught.value).startswith("index 0: ")
    assert exporter.get_finished_spans() == ()


def test_without_a_provider_or_endpoint_it_says_what_to_pass():
    # no test sets the process-wide provider (it can be set only once per process)
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    with pytest.raises(UsageError, match=re.escape("pass tracer_provider=... or endpoint=")):
        export_result(evaluated())
    with pytest.raises(UsageError, match="not both"):
        export_result(evaluated(), tracer_provider=memory()[0], endpoint="http://127.0.0.1:9/")
    with pytest.raises(UsageError, match="EvaluationResult"):
        export_result([{"score": 1}])


def test_missing_opentelemetry_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "opentelemetry.trace", None)
    with pytest.raises(MissingDependency, match=r"assay\[otel\]"):
        export_result(evaluated(), endpoint="http://127.0.0.1:9/v1/traces")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unreachable_endpoint_is_an_error_not_silence():
    with pytest.raises(OtelExportFailed, match="were not all delivered"):
        export_result(evaluated(), endpoint=f"http://127.0.0.1:{free_port()}/v1/traces", timeout=1)


# -- a real OTLP/HTTP receiver: `assay serve`'s /otlp/v1/traces ------------------------------------
@pytest.fixture
def platform(tmp_path, monkeypatch):
    from tests.platform.conftest import start_server, stop_server

    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    live = start_server("sqlite", f"sqlite:///{tmp_path / 'assay.sqlite'}")
    try:
        yield live
    finally:
        stop_server(live)


def test_export_over_otlp_http_lands_as_scores_on_the_evaluated_trace(platform):
    key = platform.key()
    headers = {"Authorization": f"Bearer {key}"}
    endpoint = f"{platform.base_url}/otlp/v1/traces"
    # the application's own trace, sent by its own OpenTelemetry setup
    app = otel.otlp_tracer_provider(endpoint, headers=headers, service_name="rag-app")
    with app.get_tracer("app").start_as_current_span("answer") as answer:
        answer.set_attribute("input.value", "Capital of France?")
        answer.set_attribute("output.value", "Paris is the capital of France.")
    assert app.force_flush(10_000)
    app.shutdown()
    app_trace = f"{answer.get_span_context().trace_id:032x}"
    app_span = f"{answer.get_span_context().span_id:016x}"

    result = evaluated(trace_id=app_trace, span_id=app_span)
    sent = export_result(result, endpoint=endpoint, headers=headers)
    with httpx.Client(base_url=platform.base_url + "/api/v1", headers=headers, timeout=10) as api:
        stored = api.get(f"/traces/{uuid.UUID(hex=app_trace)}").json()
        assert stored["input"] == "Capital of France?"  # the app's trace is still the app's
        assert stored["error"] is None
        assert stored["scores"]["exact_match"]["value"] == 1.0
        assert stored["scores"]["faithfulness"]["value"] == 1.0
        assert stored["scores"]["faithfulness"]["source"] == f"otel:{sent.rows[0][1]}"
        evaluation = next(s for s in stored["spans"] if s["name"] == "assay.evaluation.row")
        assert evaluation["parent_id"] == app_span

        run = api.get(f"/traces/{uuid.UUID(hex=sent.trace_id)}").json()
        spans = {s["id"]: s for s in run["spans"]}
        assert set(spans) == {sent.span_id, sent.rows[1][1], sent.rows[2][1]}
        assert spans[sent.span_id]["attributes"]["assay.metric.faithfulness.n_error"] == 1
        failed = {
            e["attributes"]["gen_ai.evaluation.name"]: e["attributes"]
            for e in spans[sent.rows[1][1]]["attributes"]["otel.events"]
        }
        assert failed["faithfulness"]["error.type"] == "OutputParseError"
        assert "gen_ai.evaluation.score.value" not in failed["faithfulness"]
        assert failed["exact_match"]["gen_ai.evaluation.score.value"] == 0.0


def test_a_refused_key_is_an_error(platform):
    with pytest.raises(OtelExportFailed):
        export_result(
            evaluated(),
            endpoint=f"{platform.base_url}/otlp/v1/traces",
            headers={"Authorization": "Bearer assay_1_wrong"},
        )


def test_the_docs_examples_run(platform):
    """docs/integrations/opentelemetry.md as written, Phoenix's URL swapped for assay serve's."""
    doc = Path(__file__).resolve().parents[2] / "docs" / "integrations" / "opentelemetry.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), re.S)
    assert len(blocks) == 3
    key = platform.key()
    headers = {"Authorization": f"Bearer {key}"}
    phoenix = 'endpoint="http://127.0.0.1:6006/v1/traces"'
    assert phoenix in blocks[0]
    url = f"{platform.base_url}/otlp/v1/traces"
    blocks[0] = blocks[0].replace(phoenix, f"endpoint={url!r}, headers={headers!r}")
    namespace: dict[str, Any] = {}
    for block in blocks:
        exec(compile(block, str(doc), "exec"), namespace)
    sent = namespace["sent"]
    assert len(sent.rows) == 2 and sent.events == 4
    with httpx.Client(base_url=platform.base_url + "/api/v1", headers=headers, timeout=10) as api:
        stored = api.get(f"/traces/{uuid.UUID(hex=sent.trace_id)}").json()
        assert stored["scores"]["exact_match"]["value"] in (0.0, 1.0)
        assert len(stored["spans"]) == 3
    # the last example evaluated inside the application's span
    finished = namespace["spans"].get_finished_spans()
    app = next(s for s in finished if s.name == "answer")
    linked = [
        s for s in finished if s.parent is not None and s.parent.span_id == app.context.span_id
    ]
    assert [s.name for s in linked] == ["assay.evaluation.row"]
    assert events_of(linked[0])["exact_match"]["gen_ai.evaluation.score.value"] == 1.0
