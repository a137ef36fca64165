"""Parquet rows (`output_format="parquet"`): typed outcomes round-trip, part files are committed as
the workers go, a resume after a killed driver keeps them and asks the judge only for the rest,
and an fsspec URI (a real FTP server on 127.0.0.1) works the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay import evaluate
from assay.engine.ray.executor import RayExecutor
from assay.engine.ray.output import OutputDirectory, row_ids
from assay.engine.ray.parquet import decode, encode
from assay.errors import UsageError
from assay.metrics.general.aspect_critic import AspectCritic
from assay.schema.dataset import EvaluationDataset
from assay.schema.outcome import Cell, Error, Ok, Skipped
from assay.schema.usage import Usage
from tests.engine.ray.conftest import alive, rows_written, wait_until, worker_pids
from tests.engine.ray.test_errors import ROWS as TWO_ROWS
from tests.engine.ray.test_errors import assay_cli
from tests.engine.ray.test_faults import asked_rows
from tests.engine.ray.test_outcomes import ROWS as MIXED_ROWS
from tests.engine.ray.test_output_uri import ftp_home  # noqa: F401  (a fixture)
from tests.engine.scripted_metrics import ScriptedMetric

pytestmark = [pytest.mark.ray, pytest.mark.filterwarnings("ignore:The asyn:DeprecationWarning")]

ROOT = Path(__file__).resolve().parents[3]
N_ROWS = 160
ROWS = [{"user_input": f"question {n}", "response": f"answer {n}"} for n in range(N_ROWS)]
EXPECTED = [1 if "7" in row["response"] else 0 for row in ROWS]
SETTINGS = {"num_workers": 2, "max_in_flight": 4, "block_rows": 8}


def critic() -> AspectCritic:
    return AspectCritic(name="has_seven", definition="the response has a seven")


def collected(out: object, rows: list[dict], names: set[str]):
    ids = row_ids(EvaluationDataset.from_list(rows))
    return OutputDirectory(out).collect({r: i for i, r in enumerate(ids)}, names)


CELLS = [
    Cell(row=0, metric="a", outcome=Ok(value=True), usage=Usage(requests=1, input_tokens=9)),
    Cell(row=0, metric="b", outcome=Ok(value=3, reason="three", details={"k": [1, "x"]})),
    Cell(row=1, metric="a", outcome=Ok(value=1.0), seconds=0.25),
    Cell(row=1, metric="b", outcome=Ok(value="label é")),
    Cell(row=2, metric="a", outcome=Ok(value=[2, 0.5, "c"])),
    Cell(row=2, metric="b", outcome=Skipped(reason="no reference")),
    Cell(
        row=3,
        metric="a",
        outcome=Error(error_type="BadRequest", message="400: refused", attempts=3, raw="{oops"),
        usage=Usage(requests=3, cost=0.002, unpriced_requests=1),
    ),
    # Text Parquet cannot store (a lone surrogate) still comes back exactly.
    Cell(row=3, metric="b", outcome=Error(error_type="ParseError", message="bad \udcff byte")),
]


def test_every_kind_of_outcome_round_trips_through_a_parquet_part():
    records = [(f"r{n}", [c for c in CELLS if c.row == n]) for n in range(4)]
    data = encode(records)
    assert list(decode(data)) == records

    table = pq.read_table(pa.BufferReader(data))
    assert table.schema.field("value").type == pa.float64()
    assert table.schema.field("attempts").type == pa.int64()
    flat = table.to_pylist()
    assert [row["value"] for row in flat[:5]] == [1.0, 3.0, 1.0, None, None]
    refused = flat[6]  # an error is an error with its cause, not a NaN value
    assert refused["status"] == "error" and refused["value"] is None
    assert (refused["error_type"], refused["message"], refused["attempts"]) == (
        "BadRequest",
        "400: refused",
        3,
    )
    assert refused["usage"]["requests"] == 3 and flat[1]["usage"] is None
    assert flat[7]["cell_json"] is not None and flat[6]["cell_json"] is None
    assert flat[7]["message"] == "bad \\udcff byte"  # the column shows it escaped


def test_an_unreadable_part_is_counted_and_the_format_stays_the_runs(tmp_path):
    out = OutputDirectory(tmp_path)
    out.open(run_fingerprint="f", description={}, resume=True, rows_format="jsonl")
    # No row yet: the run may still change its format.
    out.open(run_fingerprint="f", description={}, resume=True, rows_format="parquet")
    assert json.loads((tmp_path / "run.json").read_text())["rows_format"] == "parquet"
    (tmp_path / "rows" / "part-w0-1-a-000001.parquet").write_bytes(encode([("a", CELLS[:1])]))
    (tmp_path / "rows" / "part-w0-1-a-000002.parquet").write_bytes(b"PAR1 not really")
    found = out.collect({"a": 0}, {"a"})
    assert found.cells[("a", "a")].outcome == Ok(value=True) and found.unreadable_lines == 1

    again = OutputDirectory(tmp_path)
    assert again.open(run_fingerprint="f", description={}, resume=True) is True
    assert again.rows_format == "parquet"  # a resume keeps the run's format
    with pytest.raises(UsageError, match=r"holds a run with parquet rows; resume it with"):
        again.open(run_fingerprint="f", description={}, resume=True, rows_format="jsonl")
    with pytest.raises(UsageError, match=r"output_format must be one of jsonl, parquet"):
        RayExecutor(output_format="csv")


def test_a_ray_run_writes_parquet_parts_with_the_local_outcomes(
    ray_cluster, judged, server, tmp_path
):
    judge = judged(latency=0.01)
    metrics = [critic(), ScriptedMetric()]
    local = evaluate(MIXED_ROWS, metrics, llm=judge, show_progress=False)
    out = tmp_path / "out"
    executor = RayExecutor(output=out, output_format="parquet", **SETTINGS)
    remote = evaluate(MIXED_ROWS, metrics, llm=judge, executor=executor, show_progress=False)

    assert remote.outcomes == local.outcomes  # errors stay errors, with their cause
    assert {cell.status for row in remote.outcomes for cell in row.values()} == {
        "ok",
        "skipped",
        "error",
    }
    parts = sorted((out / "rows").glob("part-*"))
    assert parts and all(part.suffix == ".parquet" for part in parts)
    assert len(parts) > len(worker_pids(out))  # committed as they went, not one file at the end
    table = pq.read_table(out / "rows")  # the directory reads as one table
    assert table.num_rows == 2 * len(MIXED_ROWS)
    summary = json.loads((out / "summary.json").read_text())
    by_metric = {item["name"]: item for item in summary["metrics"]}
    for name in ("has_seven", "test_scripted"):
        mine = remote.summary(name)
        assert (by_metric[name]["n_ok"], by_metric[name]["n_error"]) == (mine.n_ok, mine.n_error)
        errors = table.filter(pa.compute.equal(table["metric"], name)).to_pylist()
        assert sum(row["status"] == "error" for row in errors) == mine.n_error
    found = collected(out, MIXED_ROWS, {"has_seven", "test_scripted"})
    assert len(found.cells) == 2 * len(MIXED_ROWS) and found.duplicate_cells == 0


DRIVER = textwrap.dedent(
    """
    import sys
    from assay import evaluate
    from assay.engine.ray.executor import RayExecutor
    from assay.models import RetryPolicy, llm_factory
    from tests.engine.ray.test_output_parquet import ROWS, SETTINGS, critic

    model, out, address = sys.argv[1:4]
    judge = llm_factory(model, cache=False, retry=RetryPolicy(max_attempts=8, initial_wait=0.01, max_wait=0.2))
    evaluate(ROWS, [critic()], llm=judge, show_progress=False,
             executor=RayExecutor(address=address, output=out, output_format="parquet", **SETTINGS))
    """
)


def test_resume_over_parquet_after_a_killed_driver_asks_only_for_missing_rows(
    ray_cluster, gcs_address, judged, server, tmp_path
):
    judged(latency=0.08)
    out = tmp_path / "out"
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    driver = subprocess.Popen(
        [sys.executable, str(script), server.model_string(), str(out), gcs_address],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        wait_until(
            lambda: rows_written(out) >= 30 or driver.poll() is not None, timeout=90, what="rows"
        )
        assert driver.poll() is None, "the first run ended before its driver could be killed"
        driver.kill()  # SIGKILL
        driver.wait(timeout=30)
    finally:
        if driver.poll() is None:
            driver.kill()
    wait_until(
        lambda: not any(alive(pid) for pid in worker_pids(out)), timeout=60, what="workers to exit"
    )
    kept = collected(out, ROWS, {"has_seven"})
    kept_rows = {cell.row for cell in kept.cells.values()}
    assert 30 <= len(kept_rows) < N_ROWS
    server.reset_records()

    executor = RayExecutor(output=out, resume=True, **SETTINGS)  # the format comes from run.json
    result = evaluate(ROWS, [critic()], llm=judged(), executor=executor, show_progress=False)

    assert [row["has_seven"].value for row in result.outcomes] == EXPECTED
    asked = asked_rows({request.last_user_text for request in server.chat_requests})
    assert len(server.chat_requests) == N_ROWS - len(kept_rows)
    assert asked == set(range(N_ROWS)) - kept_rows  # exactly the rows not yet written
    assert {part.suffix for part in (out / "rows").glob("part-*")} == {".parquet"}
    final = collected(out, ROWS, {"has_seven"})
    assert len(final.cells) == N_ROWS and final.duplicate_cells == 0


def test_parquet_rows_on_an_ftp_uri(ray_cluster, judged, server, ftp_home):  # noqa: F811
    url, home = ftp_home
    rows = ROWS[:24]
    executor = RayExecutor(
        output=f"{url}/run", output_format="parquet", num_workers=1, block_rows=8
    )
    result = evaluate(rows, [critic()], llm=judged(), executor=executor, show_progress=False)

    assert [row["has_seven"].value for row in result.outcomes] == EXPECTED[:24]
    names = sorted(path.name for path in (home / "run" / "rows").iterdir())
    assert names and all(n.startswith("part-w") and n.endswith(".parquet") for n in names)
    again = collected(f"{url}/run", rows, {"has_seven"})
    assert len(again.cells) == 24 and again.duplicate_cells == 0
    assert json.loads((home / "run" / "summary.json").read_text())["metrics"][0]["n_ok"] == 24


def test_output_format_on_the_command_line(gcs_address, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in TWO_ROWS))
    out = tmp_path / "out"
    command = ["evaluate", str(data), "-m", "exact_match", "--ray", gcs_address, "--workers", "1"]
    command += ["--output", str(out), "--no-progress"]
    done = assay_cli(*command, "--output-format", "parquet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert pq.read_table(out / "rows").num_rows == 2
    assert json.loads((out / "summary.json").read_text())["metrics"][0]["n_ok"] == 2

    mixed = assay_cli(*command, "--resume", "--output-format", "jsonl", cwd=tmp_path)
    assert mixed.returncode == 2 and "holds a run with parquet rows" in mixed.stderr
    bad = assay_cli(
        "evaluate", str(data), "-m", "exact_match", "--output-format", "parquet", cwd=tmp_path
    )
    assert bad.returncode == 2 and "--output-format goes with --ray" in bad.stderr


def test_parquet_without_pyarrow_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if it were not installed
    with pytest.raises(UsageError, match=r"Parquet output of a Ray run needs .*assay\[parquet\]"):
        RayExecutor(output_format="parquet")
    RayExecutor(output_format="jsonl")  # JSONL needs nothing more
