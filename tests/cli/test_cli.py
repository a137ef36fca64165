"""The command line: a readable summary, per-row output, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROWS = [
    {
        "user_input": "Where is the Eiffel Tower?",
        "response": "The Eiffel Tower is located in Paris.",
        "reference": "The Eiffel Tower is located in Paris.",
        "id": "a1",
    },
    {
        "user_input": "Where is it?",
        "response": "The Eiffel Tower is located in India.",
        "reference": "Eiffel Tower",
        "id": "a2",
    },
    {"user_input": "No answer yet", "id": "a3", "reference": "x"},
]


def assay(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    return path


def test_evaluate_prints_summary_and_writes_rows(data_file, tmp_path):
    out = tmp_path / "results.jsonl"
    done = assay(
        "evaluate",
        str(data_file),
        "--metrics",
        "exact_match,string_present",
        "--output",
        str(out),
        "--no-progress",
    )
    assert done.returncode == 0, done.stderr
    assert "exact_match" in done.stdout and "string_present" in done.stdout
    assert "2/3" in done.stdout  # coverage: the third row has no response
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in records] == ["a1", "a2", "a3"]
    assert records[0]["metrics"]["exact_match"] == {"value": 1.0, "status": "ok", "reason": None}
    assert records[1]["metrics"]["string_present"]["value"] == 1.0
    skipped = records[2]["metrics"]["exact_match"]
    assert (
        skipped["status"] == "skipped"
        and skipped["value"] is None
        and "response" in skipped["reason"]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--metrics", "no_such_metric"], "unknown metric 'no_such_metric'"),
        (["--metrics", "exact_match(bogus=1)"], "unexpected keyword argument 'bogus'"),
        (["--metrics", "exact_match", "--column-map", "nonsense"], "is not name=name"),
        (
            ["--metrics", "factual_correctness(atomicity=high, statements=sentences)"],
            "metric 'factual_correctness': atomicity/coverage 'high'",
        ),
        (
            ["--metrics", "faithfulness(scoring=Binary)"],
            "scoring must be one of 'probability', 'binary', got 'Binary'",
        ),
    ],
)
def test_bad_arguments_are_one_line_errors(data_file, args, message):
    done = assay("evaluate", str(data_file), *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_missing_file_and_malformed_row(tmp_path):
    done = assay("evaluate", str(tmp_path / "absent.jsonl"), "--metrics", "exact_match")
    assert (
        done.returncode == 2 and "file not found" in done.stderr and "Traceback" not in done.stderr
    )

    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({"response": "a", "reference": "a"})
        + "\n"
        + json.dumps({"response": "b", "retrieved_contexts": 5})
        + "\n"
    )
    done = assay("evaluate", str(bad), "--metrics", "exact_match")
    assert done.returncode == 2
    assert "row 2: retrieved_contexts must be a list of strings, got int" in done.stderr
    assert "Traceback" not in done.stderr


def test_metric_parameters_on_the_command_line(data_file):
    from assay.cli.metric_spec import parse_metrics

    metric = parse_metrics("exact_match(name=strict_equal)")[0]
    assert metric.name == "strict_equal"
    done = assay(
        "evaluate", str(data_file), "--metrics", "exact_match(name=strict_equal)", "--no-progress"
    )
    assert done.returncode == 0 and "strict_equal" in done.stdout


def test_metric_parameters_take_python_words_as_the_results_tables_print_them():
    from assay.cli.metric_spec import parse_metrics
    from assay.errors import UsageError

    (one_list,) = parse_metrics("faithfulness(statements_per_call=None, lexical_anchor=False)")
    assert one_list.statements_per_call is None and one_list.lexical_anchor is False
    (json_style,) = parse_metrics("faithfulness(statements_per_call=null, lexical_anchor=true)")
    assert json_style.statements_per_call is None and json_style.lexical_anchor is True
    with pytest.raises(UsageError, match=r"statements_per_call must be at least 1.*'three'"):
        parse_metrics("faithfulness(statements_per_call=three)")


def test_run_dir_resume_from_cli(data_file, tmp_path):
    run_dir = tmp_path / "run"
    first = assay(
        "evaluate",
        str(data_file),
        "--metrics",
        "exact_match",
        "--run-dir",
        str(run_dir),
        "--no-progress",
    )
    assert first.returncode == 0
    cells = (run_dir / "cells.jsonl").read_text().splitlines()
    assert len(cells) == 3
    second = assay(
        "evaluate",
        str(data_file),
        "--metrics",
        "exact_match",
        "--run-dir",
        str(run_dir),
        "--no-progress",
    )
    assert second.returncode == 0
    assert (run_dir / "cells.jsonl").read_text().splitlines() == cells  # nothing recomputed


def test_version_and_metrics_listing():
    from assay import __version__

    assert assay("--version").stdout.strip() == f"assay {__version__}"
    listing = assay("metrics")
    assert listing.returncode == 0
    assert "exact_match" in listing.stdout and "response, reference" in listing.stdout
