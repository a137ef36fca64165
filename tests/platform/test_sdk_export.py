"""Uploading an EvaluationResult to a real `assay serve` (SQLite and PostgreSQL): rows become traces,
cells become typed scores (a failed cell an error with its cause, never a value), rows naming a
logged trace score it, an unknown trace uploads nothing, and uploading again adds nothing."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select

from assay import EvaluationDataset
from assay.errors import DataError
from assay.platform import Trace
from assay.platform.sdk.result_export import upload_result
from assay.schema.outcome import Ok
from assay.schema.result import EvaluationResult
from tests.integrations.test_otel_export import evaluated


def score_rows(live, trace_id: str) -> list[tuple[str, str, float | None]]:
    from assay.platform.server.storage import models

    state = live.app.state.assay
    with state.transaction() as session:
        rows = session.execute(
            select(models.TraceScore.criterion, models.TraceScore.source, models.TraceScore.value)
            .where(models.TraceScore.trace_id == trace_id)
            .order_by(models.TraceScore.id)
        ).all()
    return [tuple(row) for row in rows]


def trace_count(live) -> int:
    from assay.platform.server.storage import models

    with live.app.state.assay.transaction() as session:
        return session.scalar(select(func.count()).select_from(models.LoggedTrace))


def test_rows_become_traces_with_typed_scores_and_a_linked_trace_gets_its_scores(sdk, live):
    app = Trace(input="Capital of France?", output="Paris is the capital of France.").save()
    result = evaluated(trace_id=app.id)
    uploaded = upload_result(result)
    assert uploaded.run_id == str(result.run_id)
    assert uploaded.trace_ids[0] == app.id
    assert uploaded.traces_created == 2 and uploaded.scores_sent == 6
    assert uploaded.not_scored == []

    linked = Trace.download(id=app.id)
    assert linked.input == "Capital of France?"  # the application's trace is left as it was
    assert linked.scores["exact_match"]["value"] == 1.0
    assert linked.scores["faithfulness"]["value"] == 1.0
    assert linked.scores["faithfulness"]["outcome"]["reason"].startswith("1 of 1 sentences")
    # each score names its run and the judge that scored its metric (for the trust panel)
    judged = f":assay:{result.run_id};config="
    assert judged in linked.scores["faithfulness"]["source"]
    assert linked.scores["faithfulness"]["source"].endswith(
        ';judge={"model": "scripted", "provider": "scripted"}'
    )
    assert linked.scores["exact_match"]["source"].endswith(f":assay:{result.run_id};judge=none")

    failed = Trace.download(id=uploaded.trace_ids[1])
    assert failed.input == "Capital of Spain?" and failed.output == "garbled"
    assert failed.contexts == ["Paris is the capital of France."]
    assert failed.metadata["id"] == "q2"
    assert failed.metadata["assay"]["run_id"] == str(result.run_id)
    assert failed.metadata["assay"]["reference"] == "Madrid."
    assert failed.metadata["assay"]["metrics"]["faithfulness"]["status"] == "error"
    assert f"assay-run:{result.run_id}" in failed.tags
    error = failed.scores["faithfulness"]
    assert error["value"] is None  # never a 0
    assert error["outcome"]["status"] == "error"
    assert error["outcome"]["reason"] == (
        "OutputParseError: " + result.outcome(1, "faithfulness").message
    )
    assert failed.scores["exact_match"]["value"] == 0.0

    skipped = Trace.download(id=uploaded.trace_ids[2])
    assert skipped.scores["exact_match"]["outcome"] == {
        "status": "skipped",
        "value": None,
        "reason": "row has no response",
    }
    # review-queue conditions read uploaded scores like any other
    found = Trace.list(condition="score.exact_match = 0")
    assert [t.id for t in found] == [uploaded.trace_ids[1]]

    # the same result again: no second trace, no second score
    before = trace_count(live)
    again = upload_result(result)
    assert again.trace_ids == uploaded.trace_ids
    assert (again.traces_created, again.scores_sent, again.scores_already_there) == (0, 0, 6)
    assert trace_count(live) == before
    assert len(score_rows(live, uploaded.trace_ids[1])) == 2


def test_an_unknown_linked_trace_uploads_nothing(sdk, live):
    before = trace_count(live)
    result = evaluated(second={"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"})
    with pytest.raises(DataError) as caught:
        upload_result(result)
    assert caught.value.row == 1 and caught.value.field == "trace_id"
    assert "no such trace" in str(caught.value)
    assert trace_count(live) == before

    with pytest.raises(DataError, match="index 0: trace_id must be a platform trace id"):
        upload_result(evaluated(trace_id="not-a-uuid"))


def test_labels_are_scored_as_labels_and_rankings_kept_in_metadata_and_listed(sdk):
    data = EvaluationDataset.from_list([{"user_input": "q", "response": "a"}])
    specs = [{"name": n, "class": "Hand", "version": "1", "params": {}} for n in ("a", "b", "c")]
    cells = {"a": Ok(value="pass"), "b": Ok(value="positive"), "c": Ok(value=[2, 1])}
    uploaded = upload_result(EvaluationResult(data, specs, [cells]))
    assert uploaded.not_scored == [(0, "c")] and uploaded.scores_sent == 2
    trace = Trace.download(id=uploaded.trace_ids[0])
    assert trace.scores["a"]["value"] == 1.0
    assert trace.scores["b"]["label"] == "positive" and trace.scores["b"]["value"] is None
    assert "c" not in trace.scores
    assert trace.metadata["assay"]["metrics"]["c"]["value"] == [2, 1]


def test_the_upload_imports_no_server_dependency():
    code = (
        "import sys\n"
        "import assay.platform.sdk.result_export\n"
        "bad = [m for m in ('fastapi', 'sqlalchemy', 'assay.platform.server') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_docs_examples_run(live, monkeypatch):
    """docs/integrations/platform-export.md as written, logged in from the environment."""
    doc = Path(__file__).resolve().parents[2] / "docs" / "integrations" / "platform-export.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), re.S)
    assert len(blocks) == 2
    monkeypatch.setenv("ASSAY_API_KEY", live.key())
    monkeypatch.setenv("ASSAY_BASE_URL", live.base_url)
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(doc), "exec"), namespace)
    assert namespace["uploaded"].scores_sent == 4
    assert [trace.input for trace in namespace["failing"]] == ["Capital of Spain?"]
    logged = namespace["logged"]
    assert Trace.download(id=logged.id).scores["exact_match"]["value"] == 1.0
