"""Batch mode on Ray (`engine/ray/batch.py`): the driver submits the batches, the workers score.

On the loopback batch fake of tests/engine/batch with its two-wave faithfulness scenario: the
outcomes are a live Ray run's and a local batch run's, cell by cell; the usage and cost are the
local batch run's; the journal in the output directory names the batches and their cells; a
driver killed with kill -9 while a batch is in flight is resumed by polling that batch; the
budget holds; the command line takes `--batch --ray`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay import evaluate
from assay.cli.app import app
from assay.engine.batch import BatchOptions
from assay.engine.progress import CellProgress
from assay.engine.ray.executor import RayExecutor
from assay.errors import UsageError
from tests.engine.batch import scenario
from tests.engine.batch.fake_batches import FakeBatches, serve
from tests.engine.ray.conftest import alive, wait_until, worker_pids

pytestmark = pytest.mark.ray

FAST = BatchOptions(poll_interval=0.01)
SETTINGS = {"num_workers": 2, "block_rows": 2}  # 4 rows: each worker gets a block


@pytest.fixture
def batches() -> Iterator[FakeBatches]:
    yield from serve()


def metrics(server: FakeBatches) -> list:
    return [scenario.faithfulness(scenario.openai_judge(server.url))]


def values(result) -> list[float]:
    return [result.outcome(row, "faithfulness").value for row in range(result.n_rows)]


def batched_on_ray(server: FakeBatches, out: Path, **options):
    executor = RayExecutor(output=out, **SETTINGS)
    result = evaluate(
        scenario.rows(),
        metrics(server),
        batch=FAST,
        executor=executor,
        show_progress=False,
        **options,
    )
    return result, executor.last_run


def test_a_batched_ray_run_gives_the_local_batch_runs_outcomes_usage_and_journal(
    ray_cluster, batches, tmp_path, monkeypatch
):
    batches.answer = scenario.judge()
    live = evaluate(scenario.rows(), metrics(batches), show_progress=False)
    local = evaluate(scenario.rows(), metrics(batches), batch=FAST, show_progress=False)
    assert len(batches.created()) == 2 and len(batches.live) == 2 * scenario.N_ROWS
    batches.delay = 0.2  # long enough for the progress line to show a batch in progress
    shown: list[str] = []
    monkeypatch.setattr(CellProgress, "status", lambda self, text: shown.append(text))

    result, stats = batched_on_ray(batches, tmp_path / "out")

    assert values(result) == pytest.approx(scenario.EXPECTED)
    for row in range(scenario.N_ROWS):
        assert result.outcome(row, "faithfulness") == local.outcome(row, "faithfulness")
        assert result.outcome(row, "faithfulness") == live.outcome(row, "faithfulness")
        assert result.usages[row]["faithfulness"] == local.usages[row]["faithfulness"]
    # Charged at the batch price, as the local batch run: half the live cost.
    assert result.total_cost() == pytest.approx(local.total_cost())
    assert result.total_cost() == pytest.approx(live.total_cost() / 2)
    # The driver sent the two waves (claim splits, then verdicts), one batch each, and no
    # worker called the provider.
    made = batches.created()[2:]
    assert [len(batch.lines) for batch in made] == [scenario.N_ROWS, scenario.N_ROWS]
    assert len(batches.live) == 2 * scenario.N_ROWS  # the live run's calls, no more
    assert stats.batch_waves == 2 and stats.batch_passes == 3
    journal = [
        json.loads(line) for line in (tmp_path / "out" / "batches.jsonl").read_text().splitlines()
    ]
    submitted = [item for item in journal if item["event"] == "submitted"]
    assert [item["batch"] for item in submitted] == [batch.id for batch in made]
    assert submitted[0]["cells"] == [[row, "faithfulness"] for row in range(scenario.N_ROWS)]
    assert "batch wave 2: 1 completed; 4/4 requests" in shown
    assert any("1 in progress" in text for text in shown)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["run"]["batch_waves"] == 2


@pytest.mark.slow  # two Ray runs: ~20 s on a loaded machine
def test_a_batched_ray_run_gives_the_live_ray_runs_outcomes(ray_cluster, batches, tmp_path):
    batches.answer = scenario.judge()
    live = evaluate(
        scenario.rows(),
        metrics(batches),
        executor=RayExecutor(output=tmp_path / "live", **SETTINGS),
        show_progress=False,
    )
    assert len(batches.live) == 2 * scenario.N_ROWS and not batches.created()

    result, _ = batched_on_ray(batches, tmp_path / "out")

    for row in range(scenario.N_ROWS):
        assert result.outcome(row, "faithfulness") == live.outcome(row, "faithfulness")
        assert result.usages[row]["faithfulness"].input_tokens == (
            live.usages[row]["faithfulness"].input_tokens
        )
    assert result.total_cost() == pytest.approx(live.total_cost() / 2)
    assert len(batches.live) == 2 * scenario.N_ROWS and len(batches.created()) == 2


@pytest.mark.slow  # two Ray runs from the command line: ~20 s on a loaded machine
def test_the_budget_holds_and_the_command_line_takes_batch_with_ray(
    ray_cluster, gcs_address, batches, tmp_path, monkeypatch
):
    batches.answer = scenario.judge()
    monkeypatch.setenv("ASSAY_BATCH_POLL_SECONDS", "0.01")
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in scenario.rows()))
    command = [
        "evaluate",
        str(data),
        "-m",
        "faithfulness(statements=claims,statements_per_call=None)",
    ]
    command += ["--llm", "openai/gpt-4o-mini", "--base-url", batches.url, "--no-cache"]
    command += ["--no-progress", "--batch", "--ray", gcs_address, "--workers", "2"]

    done = CliRunner().invoke(
        app, [*command, "--output", str(tmp_path / "out"), "--budget", "0.000001"]
    )

    assert not batches.created() and not batches.live  # nothing fits in the budget
    records = [
        cell
        for part in (tmp_path / "out" / "rows").glob("part-*.jsonl")
        for line in part.read_text().splitlines()
        for cell in json.loads(line)["cells"]
    ]
    assert len(records) == scenario.N_ROWS
    assert {cell["outcome"]["error_type"] for cell in records} == {"BudgetExhausted"}
    assert "not submitted: its estimated batch cost" in records[0]["outcome"]["message"]
    assert done.exit_code == 1, done.output  # nothing scored

    again = CliRunner().invoke(app, [*command, "--output", str(tmp_path / "again")])

    assert again.exit_code == 0, again.output
    assert [len(batch.lines) for batch in batches.created()] == [4, 4]


def test_batch_mode_on_ray_needs_a_local_output_directory(batches):
    with pytest.raises(UsageError, match="batch mode on Ray needs a local output directory"):
        evaluate(
            scenario.rows(),
            metrics(batches),
            batch=FAST,
            executor=RayExecutor(output="memory://run", **SETTINGS),
            show_progress=False,
        )
    assert not batches.log


DRIVER = textwrap.dedent(
    """
    import sys
    from assay import evaluate
    from assay.engine.batch import BatchOptions
    from assay.engine.ray.executor import RayExecutor
    from tests.engine.batch import scenario

    url, out, address = sys.argv[1:]
    evaluate(scenario.rows(), [scenario.faithfulness(scenario.openai_judge(url))],
             batch=BatchOptions(poll_interval=0.05), show_progress=False,
             executor=RayExecutor(address=address, output=out, num_workers=2, block_rows=2))
    """
)


@pytest.mark.slow  # a driver process of its own, killed, then a resume: ~25 s
def test_a_driver_killed_with_a_batch_in_flight_resumes_by_polling_it(
    ray_cluster, gcs_address, batches, tmp_path
):
    batches.answer = scenario.judge()
    batches.delay = 120.0  # wave 1 stays in flight until the test says otherwise
    out, script = tmp_path / "out", tmp_path / "driver.py"
    script.write_text(DRIVER)
    root = Path(__file__).resolve().parents[3]
    journal = out / "batches.jsonl"
    driver = subprocess.Popen(
        [sys.executable, str(script), batches.url, str(out), gcs_address],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    try:
        wait_until(
            lambda: (
                (journal.exists() and '"submitted"' in journal.read_text())
                or driver.poll() is not None
            ),
            timeout=120,
            what="the first batch to be recorded",
        )
        assert driver.poll() is None, "the driver ended before it could be killed"
        wait_until(lambda: any(b.polls for b in batches.created()), timeout=30, what="a poll")
        driver.kill()  # SIGKILL: no cleanup of any kind
        driver.wait(timeout=30)
    finally:
        if driver.poll() is None:
            driver.kill()
    wait_until(
        lambda: not any(alive(pid) for pid in worker_pids(out)), timeout=60, what="workers to exit"
    )
    assert len(batches.created()) == 1
    batches.delay = 0.0

    result = evaluate(
        scenario.rows(),
        metrics(batches),
        batch=FAST,
        executor=RayExecutor(output=out, **SETTINGS),
        show_progress=False,
    )

    assert values(result) == pytest.approx(scenario.EXPECTED)
    first, second = batches.created()  # the claim splits' batch, polled again; the verdicts'
    assert first.polls > 1 and len(first.lines) == len(second.lines) == scenario.N_ROWS
    sent = batches.sent_custom_ids()
    assert len(sent) == len(set(sent)) == 2 * scenario.N_ROWS  # no request paid for twice
    assert not batches.live


@pytest.mark.slow  # a Ray run: ~10 s on a loaded machine
def test_fallback_live_asks_an_expired_line_live_from_the_driver(ray_cluster, batches, tmp_path):
    batches.answer = scenario.judge(1)
    batches.expire = 1  # the claim split's batch expires before answering it
    executor = RayExecutor(output=tmp_path / "out", **SETTINGS)

    result = evaluate(
        scenario.rows(1),
        metrics(batches),
        batch=BatchOptions(poll_interval=0.01, fallback="live"),
        executor=executor,
        show_progress=False,
    )

    assert values(result) == [1.0]
    assert len(batches.live) == 1  # the claim split went live; the verdicts came by batch
    assert len(batches.created()) == 2
    usage = result.total_tokens()  # each call: 10 input and 5 output tokens (the fake's usage)
    live_cost = (10 * 0.15 + 5 * 0.60) / 1e6
    assert usage.cost == pytest.approx(live_cost + live_cost / 2)
