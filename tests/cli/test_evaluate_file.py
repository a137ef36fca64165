"""`assay.engine.evaluate_file` / `estimate_file`: what `assay evaluate` does, called from Python.

The same outcomes the command-line tests (test_cli.py, test_cli_hardening.py) assert, reached
without a subprocess: the rows written, every option checked before any work, the run held
against `fail_under`, a run directory resumed, and a forecast that makes no model call.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.engine import FileRunOptions, ModelChoice, estimate_file, evaluate_file
from assay.errors import UsageError
from tests.cli.test_cli import ROWS
from tests.models.fake_openai import FakeOpenAI


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    return path


def quiet(**fields) -> FileRunOptions:
    return FileRunOptions(show_progress=False, **fields)


def test_scores_the_file_and_writes_one_object_per_row(data_file, tmp_path):
    out = tmp_path / "results.jsonl"
    shown = []
    run = evaluate_file(
        data_file,
        ["exact_match", "string_present"],
        quiet(output=out),
        on_result=lambda result: shown.append(out.exists()),
    )
    assert shown == [False]  # the caller sees the result before the file is written
    assert run.passed and run.output == str(out) and run.ray is None
    assert run.result.summary("exact_match").coverage_text() == "2/3"
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in records] == ["a1", "a2", "a3"]
    assert records[0]["metrics"]["exact_match"] == {"value": 1.0, "status": "ok", "reason": None}
    assert records[1]["metrics"]["string_present"]["value"] == 1.0
    skipped = records[2]["metrics"]["exact_match"]
    assert skipped["status"] == "skipped" and "response" in skipped["reason"]


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"budget": -1.0}, "--budget must be 0 USD or more, got -1"),
        ({"budget": float("nan")}, "--budget must be a number"),
        ({"timeout": 0.0}, "--timeout must be more than 0 seconds"),
        ({"concurrency": 0}, "--concurrency must be at least 1"),
        ({"fail_under": float("nan")}, "--fail-under must be a number"),
        ({"models": ModelChoice(request_timeout=-1.0)}, "--request-timeout must be more than 0"),
        ({"resume": True}, "--resume goes with --ray"),
        ({"output_format": "parquet"}, "--output-format goes with --ray"),
    ],
)
def test_bad_options_are_refused_before_any_work(fields, needle):
    with pytest.raises(UsageError, match=needle):
        evaluate_file("never-read.jsonl", ["exact_match"], FileRunOptions(**fields))


def test_the_output_and_run_dir_are_checked_before_any_work(data_file, tmp_path):
    run_dir = tmp_path / "run"
    (tmp_path / "a-directory.jsonl").mkdir()
    cases = [
        (tmp_path / "missing" / "out.jsonl", "does not exist; create it first"),
        (tmp_path / "a-directory.jsonl", "is a directory"),
        (data_file, "is the input data file"),
        (run_dir / "cells.jsonl", "--run-dir's own cells.jsonl"),
        (tmp_path / "out.csv", "--output must be a .jsonl file"),
    ]
    for output, needle in cases:
        with pytest.raises(UsageError, match=needle):
            evaluate_file(data_file, ["exact_match"], quiet(output=output, run_dir=run_dir))
    assert not run_dir.exists()  # nothing was scored
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(UsageError, match="is a file, not a directory"):
        evaluate_file(data_file, ["exact_match"], quiet(run_dir=a_file))
    with pytest.raises(UsageError, match="--ray needs --output DIR"):
        evaluate_file(data_file, ["exact_match"], quiet(ray="local"))


@pytest.mark.parametrize("forecast", [False, True])
def test_an_empty_dataset_is_refused(tmp_path, forecast):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    call = estimate_file if forecast else evaluate_file
    with pytest.raises(UsageError, match="the dataset has no rows"):
        call(empty, ["exact_match"], quiet())


def test_a_metric_below_fail_under_is_named_and_the_rows_still_written(data_file, tmp_path):
    out = tmp_path / "out.jsonl"
    run = evaluate_file(
        data_file, ["exact_match", "string_present"], quiet(output=out, fail_under=0.75)
    )
    assert not run.passed and len(run.failures) == 1
    assert "exact_match" in run.failures[0] and "0.5000" in run.failures[0]
    assert "0.75" in run.failures[0] and out.exists()
    assert evaluate_file(data_file, ["exact_match"], quiet(fail_under=0.5)).passed


def test_a_run_in_which_nothing_was_scored_fails(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"response": "q", "id": 1}\n{"reference": "b"}\n')
    out = tmp_path / "out.jsonl"
    run = evaluate_file(data, ["exact_match"], quiet(output=out))
    assert run.failures and "no cell was scored" in run.failures[0]
    assert len(out.read_text().splitlines()) == 2


def test_a_run_directory_is_resumed(data_file, tmp_path):
    run_dir = tmp_path / "run"
    evaluate_file(data_file, ["exact_match"], quiet(run_dir=run_dir))
    cells = (run_dir / "cells.jsonl").read_text().splitlines()
    assert len(cells) == 3
    evaluate_file(data_file, ["exact_match"], quiet(run_dir=run_dir))
    assert (run_dir / "cells.jsonl").read_text().splitlines() == cells  # nothing recomputed


def test_the_estimate_counts_calls_and_calls_nothing(data_file, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with FakeOpenAI() as server:
        models = ModelChoice(llm="openai/gpt-4o-mini", base_url=server.url, cache=False)
        found = estimate_file(data_file, ["exact_match", "coherence"], quiet(models=models))
        assert server.requests == []
    assert found.rows == 3
    by_name = {item.name: item for item in found.estimate.metrics}
    assert by_name["exact_match"].calls.requests == 0
    assert by_name["coherence"].calls.requests > 0
    assert found.estimate.requests == by_name["coherence"].calls.requests
    assert found.estimate.cost is not None and found.estimate.cost > 0  # a priced judge


def test_a_model_choice_uses_objects_as_given_and_builds_nothing_unneeded(monkeypatch):
    from assay.models.factory import llm_factory

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    judge = llm_factory("openai/gpt-4o-mini@http://127.0.0.1:9/v1", cache=False)
    assert ModelChoice(llm=judge).llm_for(needed=False) is judge
    assert ModelChoice().llm_for(needed=False) is None
    assert ModelChoice().embeddings_for(needed=False) is None
    with pytest.raises(UsageError, match="not an embedding model"):
        ModelChoice(embeddings=judge).named_embeddings()
