"""EvaluationResult -> MLflow, against a real local sqlite tracking store (no server, no network),
read back with MlflowClient: params, metrics with coverage, the per-row table, and per-row feedback
on MLflow traces (a failed cell is an assessment error, never a 0)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # before mlflow is imported

import mlflow
from mlflow import MlflowClient

from assay.errors import DataError
from assay.integrations.mlflow import key_of, log_result
from tests.integrations.test_otel_export import evaluated


@pytest.fixture(scope="module")
def tracking(tmp_path_factory):
    """One sqlite store for the module (creating its tables takes seconds); an experiment per test."""
    folder = tmp_path_factory.mktemp("mlflow")
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(f"sqlite:///{folder / 'mlflow.db'}")
    yield folder
    mlflow.set_tracking_uri(previous)


@pytest.fixture
def experiment(tracking, request):
    name = request.node.name
    experiment_id = mlflow.create_experiment(name, artifact_location=(tracking / name).as_uri())
    mlflow.set_experiment(experiment_id=experiment_id)
    yield experiment_id
    if mlflow.active_run() is not None:
        mlflow.end_run()


def app_trace(question: str) -> str:
    @mlflow.trace(name="answer")
    def answer(q: str) -> str:
        return "Paris is the capital of France."

    answer(question)
    return mlflow.get_last_active_trace_id()


def test_params_metrics_table_and_feedback_are_logged(experiment, tmp_path):
    ok_trace, failed_trace, skipped_trace = (app_trace(q) for q in ("France", "Spain", "Italy"))
    result = evaluated(
        trace_id=ok_trace, second={"trace_id": failed_trace}, third={"trace_id": skipped_trace}
    )
    logged = log_result(result)
    assert mlflow.active_run() is None  # the run it started is ended
    assert logged.experiment_id == experiment and logged.feedback == 6

    client = MlflowClient()
    run = client.get_run(logged.run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == "nightly"
    params = run.data.params
    spec = next(s for s in result.metric_specs if s["name"] == "faithfulness")
    prompt = spec["prompts"][0]
    assert params["faithfulness.judge"] == "scripted/scripted"
    assert params["faithfulness.prompts"] == f"{prompt['id']}@{prompt['version']}:{prompt['hash']}"
    assert json.loads(params["faithfulness.params"]) == spec["params"]
    assert params["exact_match.class"] == "ExactMatch" and "exact_match.judge" not in params
    assert params["assay.run_id"] == str(result.run_id) and params["assay.rows"] == "3"

    metrics = run.data.metrics
    assert metrics["faithfulness"] == 1.0
    assert metrics["faithfulness/coverage"] == pytest.approx(1 / 3)
    assert (metrics["faithfulness/n_error"], metrics["faithfulness/n_skipped"]) == (1.0, 1.0)
    assert metrics["exact_match"] == 0.5 and metrics["exact_match/n_ok"] == 2.0
    assert metrics["assay/requests"] == result.usage().requests

    files = {f.path for f in client.list_artifacts(logged.run_id)}
    assert files == {"assay_rows.json", "assay_rows.jsonl", "assay_result.json"}
    table = json.loads(
        Path(client.download_artifacts(logged.run_id, "assay_rows.json", str(tmp_path))).read_text()
    )
    columns = table["columns"]
    rows = [dict(zip(columns, row, strict=True)) for row in table["data"]]
    assert [r["faithfulness_status"] for r in rows] == ["ok", "error", "skipped"]
    assert rows[1]["faithfulness"] is None
    assert rows[1]["faithfulness_reason"].startswith("OutputParseError: ")
    assert rows[0]["retrieved_contexts"] == ["Paris is the capital of France."]
    records = Path(client.download_artifacts(logged.run_id, "assay_rows.jsonl", str(tmp_path)))
    assert [json.loads(line) for line in records.read_text().splitlines()] == json.loads(
        json.dumps(result.row_records(), default=str)
    )

    def feedback(trace_id):
        return {a.name: a for a in mlflow.get_trace(trace_id).info.assessments}

    ok = feedback(ok_trace)
    assert ok["faithfulness"].value == 1.0
    assert ok["faithfulness"].rationale.startswith("1 of 1 sentences")
    assert ok["faithfulness"].source.source_type == "LLM_JUDGE"
    assert ok["faithfulness"].source.source_id == "scripted/scripted"
    assert ok["faithfulness"].metadata["assay.outcome"] == "ok"
    assert ok["exact_match"].value == 1.0 and ok["exact_match"].source.source_type == "CODE"

    failed = feedback(failed_trace)["faithfulness"]
    assert failed.value is None  # never a 0
    assert failed.error.error_code == "OutputParseError"
    assert failed.error.error_message == result.outcome(1, "faithfulness").message
    assert failed.metadata["assay.outcome"] == "error"

    skipped = feedback(skipped_trace)["exact_match"]
    assert skipped.value is None and skipped.error is None
    assert skipped.metadata["assay.outcome"] == "skipped"
    assert skipped.rationale == "row has no response"


def test_an_active_run_is_used_and_left_open(experiment):
    with mlflow.start_run(run_name="mine") as run:
        logged = log_result(evaluated())
        assert logged.run_id == run.info.run_id and logged.feedback == 0
        assert mlflow.active_run().info.run_id == run.info.run_id
    assert MlflowClient().get_run(run.info.run_id).data.metrics["exact_match"] == 0.5


def test_an_unknown_trace_is_refused_before_anything_is_logged(experiment):
    result = evaluated(second={"trace_id": "tr-" + "ab" * 16})
    with pytest.raises(DataError) as caught:
        log_result(result)
    assert caught.value.row == 1 and caught.value.field == "trace_id"
    assert MlflowClient().search_runs([experiment]) == []

    with pytest.raises(DataError, match="index 0: trace_id must be an MLflow trace id"):
        log_result(evaluated(trace_id="nope"))


def test_metric_names_become_valid_mlflow_keys():
    assert key_of("answer relevancy (v2)") == "answer relevancy _v2_"
    assert key_of("rouge/L-sum.f1") == "rouge/L-sum.f1"


def test_the_docs_example_runs(tracking, tmp_path, monkeypatch):
    """docs/integrations/mlflow.md as written, in a fresh directory, on the module's store (a new
    sqlite store takes seconds to create its tables)."""
    doc = Path(__file__).resolve().parents[2] / "docs" / "integrations" / "mlflow.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), re.S)
    assert len(blocks) == 1 and '"sqlite:///mlflow.db"' in blocks[0]
    previous = mlflow.get_tracking_uri()
    code = blocks[0].replace('"sqlite:///mlflow.db"', repr(previous))
    # the store's default artifact root is where it was created: keep this experiment's in tmp
    mlflow.create_experiment("rag-evals", artifact_location=(tmp_path / "mlruns").as_uri())
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    try:
        exec(compile(code, str(doc), "exec"), namespace)
        logged = namespace["logged"]
        assert logged.feedback == 4
        run = MlflowClient().get_run(logged.run_id)
        assert run.data.metrics["exact_match"] == 0.5
        assert run.data.metrics["non_llm_string_similarity/coverage"] == 1.0
        traces = [row["trace_id"] for row in namespace["rows"]]
        spain = {a.name: a for a in mlflow.get_trace(traces[1]).info.assessments}
        assert spain["exact_match"].value == 0.0
    finally:
        mlflow.set_tracking_uri(previous)
    assert (tmp_path / "mlruns").is_dir()  # the experiment's artifacts, where the example ran
