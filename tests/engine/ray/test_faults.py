"""Faults: a worker killed with SIGKILL loses no row and duplicates none; a driver killed with
SIGKILL leaves rows a resumed run keeps, calling the judge only for the rows not yet written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from assay import evaluate
from assay.engine.ray.executor import RayExecutor
from assay.engine.ray.output import OutputDirectory, row_ids
from assay.metrics.general.aspect_critic import AspectCritic
from assay.schema.dataset import EvaluationDataset
from tests.engine.ray.conftest import (
    alive,
    kill_9,
    rows_written,
    wait_until,
    worker_pids,
)
from tests.models.fake_openai import ok

pytestmark = pytest.mark.ray

N_ROWS = 240
ROWS = [{"user_input": f"question {n}", "response": f"answer {n}"} for n in range(N_ROWS)]
EXPECTED = [1 if "7" in row["response"] else 0 for row in ROWS]
# Two workers, 4 cells each in flight, blocks of 8 rows: a worker holds at most 2 blocks.
SETTINGS = {"num_workers": 2, "max_in_flight": 4, "block_rows": 8}
IN_FLIGHT_PER_WORKER = 16


def saved_rows(out: Path) -> set[int]:
    ids = row_ids(EvaluationDataset.from_list(ROWS))
    found = OutputDirectory(out).collect({r: i for i, r in enumerate(ids)}, {"has_seven"})
    return {cell.row for cell in found.cells.values()}


def asked_rows(texts: set[str]) -> set[int]:
    """Which rows the judge was asked about (each prompt holds its row's "answer N")."""
    return {int(re.search(r"answer (\d+)", text).group(1)) for text in texts}


def critic() -> AspectCritic:
    return AspectCritic(name="has_seven", definition="the response has a seven")


def unique_rows(out: Path) -> int:
    ids = row_ids(EvaluationDataset.from_list(ROWS))
    found = OutputDirectory(out).collect({r: i for i, r in enumerate(ids)}, {"has_seven"})
    return len(found.cells)


def test_a_killed_worker_loses_no_row_and_duplicates_none(ray_cluster, judged, server, tmp_path):
    judge = judged(latency=0.08)
    out = tmp_path / "out"
    executor = RayExecutor(output=out, **SETTINGS)
    finished: dict[str, object] = {}

    def run() -> None:
        try:
            finished["result"] = evaluate(
                ROWS, [critic()], llm=judge, executor=executor, show_progress=False
            )
        except BaseException as exc:  # handed to the test thread
            finished["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    wait_until(lambda: rows_written(out) >= 40 or not thread.is_alive(), timeout=90, what="40 rows")
    assert thread.is_alive(), f"the run ended before a worker could be killed: {finished}"
    victim = min(worker_pids(out))
    kill_9(victim)
    thread.join(timeout=120)
    assert not thread.is_alive() and "error" not in finished, finished.get("error")

    result = finished["result"]
    assert [row["has_seven"].value for row in result.outcomes] == EXPECTED
    assert all(row["has_seven"].status == "ok" for row in result.outcomes)
    stats = executor.last_run
    assert stats.workers_lost >= 1 and stats.rows_reassigned >= 1
    assert unique_rows(out) == N_ROWS
    repeated = len(server.chat_requests) - N_ROWS
    # Only the calls of rows in flight on the killed worker can be made twice.
    assert 0 <= repeated <= IN_FLIGHT_PER_WORKER
    assert stats.repeated_requests <= repeated
    assert not alive(victim)


DRIVER = textwrap.dedent(
    """
    import sys
    from assay import evaluate
    from assay.engine.ray.executor import RayExecutor
    from assay.metrics.general.aspect_critic import AspectCritic
    from assay.models import RetryPolicy, llm_factory
    from tests.engine.ray.test_faults import ROWS, SETTINGS

    model, out, address = sys.argv[1:4]
    judge = llm_factory(model, cache=False, retry=RetryPolicy(max_attempts=8, initial_wait=0.01, max_wait=0.2))
    critic = AspectCritic(name="has_seven", definition="the response has a seven")
    evaluate(ROWS, [critic], llm=judge, show_progress=False,
             executor=RayExecutor(address=address, output=out, **SETTINGS))
    """
)


def test_resume_after_a_killed_driver_calls_the_judge_only_for_missing_rows(
    ray_cluster, gcs_address, judged, server, tmp_path
):
    judged(latency=0.08)
    out = tmp_path / "out"
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    root = Path(__file__).resolve().parents[3]
    driver = subprocess.Popen(
        [sys.executable, str(script), server.model_string(), str(out), gcs_address],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    try:
        wait_until(
            lambda: rows_written(out) >= 40 or driver.poll() is not None, timeout=90, what="40 rows"
        )
        assert driver.poll() is None, "the first run ended before its driver could be killed"
        driver.kill()  # SIGKILL: no cleanup of any kind
        driver.wait(timeout=30)
    finally:
        if driver.poll() is None:
            driver.kill()
    # The driver's workers die with it; once they have, the output stops changing.
    wait_until(
        lambda: not any(alive(pid) for pid in worker_pids(out)), timeout=60, what="workers to exit"
    )
    kept = unique_rows(out)
    kept_rows = saved_rows(out)
    assert 40 <= kept < N_ROWS
    server.reset_records()

    executor = RayExecutor(output=out, resume=True, **SETTINGS)
    result = evaluate(
        ROWS, [critic()], llm=judged(latency=0.0), executor=executor, show_progress=False
    )

    assert [row["has_seven"].value for row in result.outcomes] == EXPECTED
    assert unique_rows(out) == N_ROWS
    asked = {request.last_user_text for request in server.chat_requests}
    assert len(server.chat_requests) == N_ROWS - kept  # only the rows not yet written
    assert len(asked) == N_ROWS - kept
    assert executor.last_run.rows_kept == kept and executor.last_run.rows_scored == N_ROWS - kept
    assert asked_rows(asked) == set(range(N_ROWS)) - kept_rows  # exactly what the first run lacked


@pytest.mark.slow  # two runs over the same rows: ~15 s
def test_cancel_stops_the_run_and_a_resume_finishes_it(ray_cluster, judged, server, tmp_path):
    out = tmp_path / "out"
    job = evaluate(
        ROWS,
        [critic()],
        llm=judged(latency=0.08),
        executor=RayExecutor(output=out, **SETTINGS),
        show_progress=False,
        return_executor=True,
    )
    threading.Thread(
        target=lambda: (
            wait_until(lambda: rows_written(out) >= 40, timeout=90, what="rows"),
            job.cancel(),
        ),
        daemon=True,
    ).start()
    cut = job.evaluation_result()
    statuses = [row["has_seven"].status for row in cut.outcomes]
    cancelled = [row["has_seven"] for row in cut.outcomes if row["has_seven"].status == "error"]
    assert statuses.count("ok") >= 40 and cancelled
    assert {cell.error_type for cell in cancelled} == {"Cancelled"}
    kept = saved_rows(out)
    assert len(kept) >= statuses.count("ok")

    server.reset_records()
    done = evaluate(
        ROWS,
        [critic()],
        llm=judged(),
        executor=RayExecutor(output=out, **SETTINGS),
        show_progress=False,
    )
    assert [row["has_seven"].value for row in done.outcomes] == EXPECTED
    assert asked_rows({r.last_user_text for r in server.chat_requests}) == set(range(N_ROWS)) - kept


def test_resume_retries_only_the_cells_that_failed(ray_cluster, judged, server, tmp_path):
    from tests.engine.scripted_metrics import ScriptedMetric

    rows = [
        {"user_input": f"q{n}", "response": "refuse" if n % 4 == 0 else "0.5"} for n in range(20)
    ]
    out = tmp_path / "out"
    settings = {"num_workers": 1, "block_rows": 5, "output": out}
    metrics = [critic(), ScriptedMetric()]
    judge = judged()
    first = evaluate(
        rows, metrics, llm=judge, executor=RayExecutor(**settings), show_progress=False
    )
    failed = [n for n in range(20) if first.outcome(n, "has_seven").status == "error"]
    assert failed == [0, 4, 8, 12, 16]

    server.reset_records()
    server.default = ok("yes")  # the judge no longer refuses
    second = evaluate(
        rows,
        metrics,
        llm=judge,
        executor=RayExecutor(**settings),
        show_progress=False,
    )
    assert all(second.outcome(n, "has_seven").status == "ok" for n in range(20))
    assert [second.outcome(n, "has_seven").value for n in failed] == [1] * 5
    assert len(server.chat_requests) == len(
        failed
    )  # the 15 judged rows and every scripted cell kept
    assert second.outcome(1, "test_scripted") == first.outcome(1, "test_scripted")
    ids = row_ids(EvaluationDataset.from_list(rows))
    found = OutputDirectory(out).collect(
        {r: i for i, r in enumerate(ids)}, {"has_seven", "test_scripted"}
    )
    assert len(found.cells) == 40 and all(found.finished(r, "has_seven") for r in ids)
