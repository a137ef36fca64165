"""Reading results into runs, the statistics behind the page, and the command's errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.errors import UsageError
from assay.report import build_report, load_run
from assay.report.compare import bootstrap_interval, difference, pair_rows
from assay.report.experiment import score_columns
from assay.report.model import as_number
from assay.report.stats import histogram, metric_stats
from tests.report.fixtures import ROWS, write_data, write_results, write_run_dir


def assay(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def test_evaluation_results_file(tmp_path):
    run = load_run(write_results(tmp_path / "results.jsonl"))
    assert run.kind == "evaluation results" and run.metrics == ["faithfulness", "correctness"]
    assert [row.key for row in run.rows] == ["q1", "q2", "q3", "q4"]
    assert [row.cells["faithfulness"].status for row in run.rows] == [
        "ok",
        "ok",
        "error",
        "skipped",
    ]
    assert (
        run.rows[2].cells["faithfulness"].raw == "Sure! {claims"
        and run.rows[2].cells["faithfulness"].attempts == 2
    )
    assert (
        "metrics" not in run.rows[0].fields
        and run.rows[0].fields["reference"] == ROWS[0]["reference"]
    )
    stats = metric_stats(run, "faithfulness")
    assert (stats.mean, stats.n_ok, stats.n_error, stats.n_skipped, stats.coverage_text) == (
        0.5,
        2,
        1,
        1,
        "2/4",
    )
    labels = metric_stats(run, "correctness")
    assert labels.from_labels and labels.mean == 0.75 and labels.labels == {"pass": 3, "fail": 1}


def test_run_directory_keeps_the_last_attempt_and_drops_a_torn_line(tmp_path):
    path = write_run_dir(tmp_path / "run")
    cells = (path / "cells.jsonl").read_text().splitlines()
    retried = json.loads(cells[4])  # row 2, faithfulness: an error in the fixture
    retried["outcome"] = {"status": "ok", "value": 0.25, "reason": "retried", "details": None}
    with (path / "cells.jsonl").open("a") as handle:
        handle.write(json.dumps(retried) + "\n" + '{"row": 3, "metric": "corr')  # killed mid-write
    run = load_run(path)
    assert run.kind == "run directory" and len(run.rows) == 4
    assert run.rows[2].cells["faithfulness"].value == 0.25
    assert run.rows[0].fields == {} and run.rows[0].key == "row 0"
    assert (
        run.usage["requests"] == 4 * 3 + 4 * 1 + 3 and run.usage["input_tokens"] == 4 * 1500 + 1200
    )


def test_run_directory_with_data_of_the_wrong_length(tmp_path):
    write_run_dir(tmp_path / "run")
    short = tmp_path / "short.jsonl"
    short.write_text(json.dumps(ROWS[0]) + "\n")
    with pytest.raises(UsageError, match="has 1 rows but the run has 4"):
        load_run(tmp_path / "run", data=short)
    assert [
        row.key for row in load_run(tmp_path / "run", data=write_data(tmp_path / "d.jsonl")).rows
    ] == ["q1", "q2", "q3", "q4"]


def test_plain_jsonl_rows_are_read_as_an_experiment(tmp_path):
    path = tmp_path / "scores.jsonl"
    path.write_text(
        "".join(
            json.dumps({"question": f"q{i}", "score": i / 4, "ok": "pass"}) + "\n" for i in range(5)
        )
    )
    run = load_run(path)
    assert run.kind == "experiment" and run.metrics == ["score", "ok"]
    assert run.rows[0].fields == {"question": "q0"}


def test_score_columns_by_shape():
    rows = [
        {
            "id": 1,
            "expected": 15,
            "response": "15",
            "correctness": {"value": 1.0, "reason": "right"},
            "judge": "pass",
            "judge_reason": "fine",
            "latency": 0.3,
            "category": "Billing",
            "flag": True,
        },
        {
            "id": 2,
            "expected": 40,
            "response": "5",
            "correctness": {"value": 0.0, "reason": "wrong"},
            "judge": "fail",
            "judge_reason": "no",
            "latency": 0.5,
            "category": "Bug Report",
            "flag": False,
        },
    ]
    assert score_columns(rows, inputs={"id", "expected"}) == [
        "correctness",
        "judge",
        "latency",
        "flag",
    ]


def test_as_number():
    assert [
        as_number(v) for v in (0.5, 2, True, "Pass", "no", "positive", None, [1], float("nan"))
    ] == [0.5, 2.0, 1.0, 1.0, 0.0, None, None, None, None]


def test_histogram_bins():
    bins, unit = histogram([0.0, 0.3, 0.3, 1.0, 1.0000000001])
    assert unit and [count for _, _, count in bins] == [1, 0, 0, 2, 0, 0, 0, 0, 0, 2]
    bins, unit = histogram([2.0, 4.0, 12.0])
    assert (
        not unit and bins[0][0] == 2.0 and bins[-1][1] == 12.0 and sum(c for _, _, c in bins) == 3
    )


def test_pairs_by_position_without_ids_and_the_shared_bootstrap(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("".join(json.dumps({"q": i, "s": 0.5}) + "\n" for i in range(6)))
    b.write_text(
        "".join(json.dumps({"q": i, "s": 0.5 + (0.1 if i % 2 else -0.1)}) + "\n" for i in range(7))
    )
    first, second = load_run(a), load_run(b)
    matched_by, pairs = pair_rows(first, second)
    assert matched_by == "position" and len(pairs) == 7 and pairs[-1][1] is None
    diff = difference(first, second, "s", pairs)
    assert diff.n_pairs == 6 and abs(diff.mean_delta) < 1e-12 and diff.low < 0 < diff.high
    assert diff.verdict == "no clear difference (interval includes 0)"
    low, high = bootstrap_interval([0.2] * 5)
    assert low == pytest.approx(0.2) and high == pytest.approx(0.2)


def test_the_report_and_experiments_compare_share_one_bootstrap():
    from assay.experiments.compare import bootstrap_mean_ci

    deltas = [((i * 37) % 11 - 4) / 10 for i in range(120)]  # mean about +0.06, spread 0.3
    low, high = bootstrap_interval(deltas)
    assert (low, high) == bootstrap_mean_ci(deltas, resamples=5000, seed=0, confidence=0.95)
    mean = sum(deltas) / len(deltas)
    assert low < mean < high and high - low < 0.15


def test_same_names_get_distinct_labels(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        write_results(tmp_path / folder / "results.jsonl")
    html = build_report([tmp_path / "a" / "results.jsonl", tmp_path / "b" / "results.jsonl"])
    assert "results vs results (2)" in html


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.jsonl"], "error: no such file or directory: missing.jsonl"),
        (["nothing_here"], "error: no experiment 'nothing_here'"),
        (["empty_dir"], "is a directory without run.json or cells.jsonl"),
        (["results.jsonl", "--data", "results.jsonl"], "--data only applies to a run directory"),
        (["notes.txt"], "not a results file"),
    ],
)
def test_errors_are_one_line_with_exit_code_2(tmp_path, args, message):
    write_results(tmp_path / "results.jsonl")
    (tmp_path / "empty_dir").mkdir()
    (tmp_path / "notes.txt").write_text("hello")
    done = assay("report", *args, "-o", "r.html", cwd=tmp_path)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr
    assert not (tmp_path / "r.html").exists()


def test_output_must_be_html(tmp_path):
    write_results(tmp_path / "results.jsonl")
    done = assay("report", "results.jsonl", "-o", "report.pdf", cwd=tmp_path)
    assert done.returncode == 2 and "html" in done.stderr
