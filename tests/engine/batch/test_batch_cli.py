"""`assay evaluate --batch` and `--estimate` on the command line (in process, on the loopback fake)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.app import app
from assay.engine.estimate import estimate_run
from assay.errors import AssayError
from tests.engine.batch import scenario
from tests.engine.batch.fake_batches import FakeBatches, serve


@pytest.fixture
def server() -> Iterator[FakeBatches]:
    yield from serve()


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in scenario.rows()))
    return path


def assay(*args: str) -> tuple[int, str]:
    """Exit code and output; assay's own error as `main()` shows it (one line, exit 2)."""
    done = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    if isinstance(done.exception, AssayError):
        return 2, str(done.exception)
    return done.exit_code, done.output


def judge_options(server: FakeBatches) -> list[str]:
    return ["--llm", "openai/gpt-4o-mini", "--base-url", server.url, "--no-cache", "--no-progress"]


def test_batch_run_writes_the_rows_and_records_its_batches(server, data, tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_BATCH_POLL_SECONDS", "0.01")
    server.answer = scenario.judge()
    output, run_dir = tmp_path / "out.jsonl", tmp_path / "run"

    code, text = assay(
        "evaluate",
        str(data),
        "-m",
        "faithfulness(statements=claims,statements_per_call=None)",
        *judge_options(server),
        "--batch",
        "--output",
        str(output),
        "--run-dir",
        str(run_dir),
    )

    assert code == 0, text
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    assert [row["metrics"]["faithfulness"]["value"] for row in rows] == pytest.approx(
        scenario.EXPECTED
    )
    journal = [json.loads(line) for line in (run_dir / "batches.jsonl").read_text().splitlines()]
    submitted = [item for item in journal if item["event"] == "submitted"]
    assert [item["batch"] for item in submitted] == [batch.id for batch in server.created()]
    assert sorted(tuple(cell) for cell in submitted[0]["cells"]) == [
        (row, "faithfulness") for row in range(scenario.N_ROWS)
    ]
    assert [item["status"] for item in journal if item["event"] == "ended"] == ["completed"] * 2
    assert not server.live


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--batch-fallback", "live"], "--batch-fallback goes with --batch"),
        (["--batch", "--batch-fallback", "soon"], "--batch-fallback must be retry or live"),
    ],
)
def test_batch_options_that_do_not_fit_are_refused_in_one_line(data, extra, message):
    code, text = assay("evaluate", str(data), "-m", "faithfulness", *extra)

    assert code == 2
    assert message in text
    assert len(text.strip().splitlines()) == 1


def test_batch_with_a_judge_without_a_batch_api_is_refused_before_any_work(server, data):
    code, text = assay(
        "evaluate",
        str(data),
        "-m",
        "faithfulness",
        "--llm",
        f"vllm/judge@{server.url}",
        "--no-cache",
        "--batch",
    )

    assert code == 2
    assert "vllm/judge has no batch API" in text
    assert len(text.strip().splitlines()) == 1
    assert not server.log


def test_estimate_prints_live_and_batch_cost_side_by_side_and_the_waves(server, data):
    judge = scenario.openai_judge(server.url)
    metric = scenario.faithfulness(judge)
    forecast = estimate_run(scenario.rows(), [metric], llm=judge)
    item = forecast.metrics[0]

    # Two calls a cell (the claim split, then the verdicts): at most two waves.
    assert item.waves == forecast.waves == 2
    assert item.calls.requests == 2 * scenario.N_ROWS
    assert item.cost == pytest.approx(
        (item.calls.input_tokens * 0.15 + item.calls.output_tokens * 0.60) / 1e6
    )
    assert item.batch_cost == pytest.approx(item.cost / 2)

    code, text = assay(
        "evaluate",
        str(data),
        "-m",
        "faithfulness(statements=claims,statements_per_call=None)",
        *judge_options(server),
        "--estimate",
    )

    assert code == 0, text
    assert "batch cost (USD)" in text and "waves" in text
    total = next(line for line in text.splitlines() if "total" in line)
    assert f"{forecast.cost:.4f}" in total and f"{forecast.batch_cost:.4f}" in total
    assert "--batch: up to 2 wave(s)" in text
    assert not server.log


def test_estimate_says_when_the_judge_has_no_batch_api(server):
    judge = scenario.openai_judge(server.url)
    vllm = scenario.faithfulness(judge)
    from assay.models import llm_factory

    local = llm_factory("vllm/gpt-4o-mini", base_url=server.url, cache=False)
    forecast = estimate_run(scenario.rows(), [scenario.faithfulness(local)], llm=local)

    assert forecast.cost is not None  # priced by the model's name
    assert forecast.batch_cost is None
    assert vllm.llm is judge
