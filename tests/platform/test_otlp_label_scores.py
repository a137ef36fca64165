"""OTLP evaluation events that carry only a label (`gen_ai.evaluation.score.label`, no numeric
`score.value`) are stored as label scores, as the score route stores them: the label in
`trace_scores.label`, `value` NULL, an ok outcome whose value is the label, readable by
`score_label.<criterion>` conditions (a review queue included) at ingest. Numbers, errors and
skipped events stay as they were; a label the score route would refuse (blank, too long) stays a
skipped score that says why. Sent by the real OpenTelemetry SDK's OTLP/HTTP protobuf exporter and
by assay's own `export_result`, to the real server on SQLite and PostgreSQL."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from assay import evaluate
from assay.integrations import otel
from assay.metrics.custom.decorators import discrete_metric
from assay.platform.server.storage import models
from tests.platform.test_otlp import assay_id, provider


def stored_scores(live, trace_id: str) -> dict[str, list[models.TraceScore]]:
    with live.app.state.assay.transaction() as session:
        rows = session.scalars(
            select(models.TraceScore)
            .where(models.TraceScore.trace_id == trace_id)
            .order_by(models.TraceScore.id)
        )
        by_criterion: dict[str, list[models.TraceScore]] = {}
        for row in rows:
            by_criterion.setdefault(row.criterion, []).append(row)
        return by_criterion


def ids_matching(api, condition: str) -> set[str]:
    answer = api.get("/traces", params={"condition": condition})
    assert answer.status_code == 200, (condition, answer.text)
    return {t["id"] for t in answer.json()["items"]}


def evaluation(span, name: str, **attributes) -> None:
    span.add_event("gen_ai.evaluation.result", {"gen_ai.evaluation.name": name, **attributes})


def test_a_label_only_event_is_a_label_score_and_the_others_are_unchanged(live):
    key = live.key()
    with live.client(key) as api:
        queue = api.post(
            "/review-queues",
            json={"name": "Curt answers", "condition": "score_label.Tone = 'curt'"},
        )
        assert queue.status_code == 201, queue.text

    tracer_provider = provider(live, key)
    tracer = tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("chat") as span:
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("gen_ai.request.model", "m")
        evaluation(
            span,
            "Tone",
            **{"gen_ai.evaluation.score.label": "curt", "gen_ai.evaluation.explanation": "terse"},
        )
        evaluation(
            span,
            "Verdict",
            **{"gen_ai.evaluation.score.value": 1.0, "gen_ai.evaluation.score.label": "pass"},
        )
        evaluation(
            span,
            "Faithfulness",
            **{
                "error.type": "Timeout",
                "assay.error.message": "the judge timed out",
                "gen_ai.evaluation.score.label": "unknown",
            },
        )
        evaluation(
            span,
            "Recall",
            **{
                "assay.outcome": "skipped",
                "gen_ai.evaluation.score.label": "n/a",
                "gen_ai.evaluation.explanation": "no reference",
            },
        )
        evaluation(span, "Blank", **{"gen_ai.evaluation.score.label": "   "})
        evaluation(
            span,
            "Wordy",
            **{
                "gen_ai.evaluation.score.label": "x" * 201,
                "gen_ai.evaluation.explanation": "the judge rambled",
            },
        )
    tracer_provider.shutdown()
    trace_id = assay_id(span)

    rows = stored_scores(live, trace_id)
    (tone,) = rows["Tone"]
    assert tone.label == "curt" and tone.value is None
    assert tone.outcome["status"] == "ok" and tone.outcome["value"] == "curt"
    assert tone.outcome["reason"] == "terse" and tone.source.startswith("otel:")

    (verdict,) = rows["Verdict"]  # a number with a label: the number, as before
    assert verdict.value == 1.0 and verdict.label is None
    assert verdict.outcome["status"] == "ok" and verdict.outcome["label"] == "pass"

    (failed,) = rows["Faithfulness"]  # an error stays an error, whatever label it carries
    assert failed.label is None and failed.value is None
    assert failed.outcome["status"] == "error" and failed.outcome["error_type"] == "Timeout"
    assert failed.outcome["error_message"] == "the judge timed out"

    (skipped,) = rows["Recall"]  # the sender said skipped: it stays skipped
    assert skipped.label is None and skipped.outcome["status"] == "skipped"
    assert skipped.outcome["reason"] == "no reference"

    (blank,) = rows["Blank"]
    assert blank.label is None and blank.outcome["status"] == "skipped"
    assert "non-empty" in blank.outcome["reason"], blank.outcome

    (wordy,) = rows["Wordy"]
    assert wordy.label is None and wordy.outcome["status"] == "skipped"
    assert "at most 200 characters" in wordy.outcome["reason"], wordy.outcome
    assert wordy.outcome["reason"].endswith("; the judge rambled")

    with live.client(key) as api:
        got = api.get(f"/traces/{trace_id}").json()["scores"]
        assert got["Tone"]["label"] == "curt" and got["Tone"]["value"] is None
        assert got["Verdict"]["value"] == 1.0 and got["Verdict"]["label"] is None
        assert ids_matching(api, "score_label.Tone = 'curt'") == {trace_id}
        assert ids_matching(api, "score_label.Tone LIKE 'cu%' AND score.Tone IS NULL") == {trace_id}
        assert ids_matching(api, "score_label.Verdict IS NOT NULL") == set()
        assert ids_matching(api, "score_label.Wordy IS NOT NULL") == set()
        # the queue's condition read the label in the transaction that stored the trace
        items = api.get("/review-queues/Curt answers/traces").json()["items"]
        assert [t["id"] for t in items] == [trace_id]


def test_a_label_metric_exported_by_assay_lands_as_label_scores(live):
    """`assay.integrations.otel.export_result` sends a discrete metric's labels (no number: they
    are not pass/fail-like) as label-only events; each row's span gets its own label score."""

    @discrete_metric(name="length_class", allowed_values=["short", "long"])
    def length_class(response: str) -> str:
        return "short" if len(response) < 10 else "long"

    result = evaluate(
        [
            {"user_input": "Capital of France?", "response": "Paris."},
            {"user_input": "Capital of Italy?", "response": "Rome is the capital of Italy."},
        ],
        [length_class],
        show_progress=False,
    )
    key = live.key()
    sent = otel.export_result(
        result,
        endpoint=f"{live.base_url}/otlp/v1/traces",
        headers={"Authorization": f"Bearer {key}"},
    )
    run_trace = str(uuid.UUID(hex=sent.trace_id))
    rows = stored_scores(live, run_trace)["length_class"]
    by_source = {row.source: row for row in rows}
    assert set(by_source) == {f"otel:{span_id}" for _trace, span_id in sent.rows}
    first, second = (by_source[f"otel:{span_id}"] for _trace, span_id in sent.rows)
    assert (first.label, second.label) == ("short", "long")
    assert first.value is None and second.value is None
    assert {row.outcome["status"] for row in rows} == {"ok"}

    with live.client(key) as api:
        assert run_trace in ids_matching(api, "score_label.length_class IN ('short', 'long')")
