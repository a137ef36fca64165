"""`assay evaluate` fails early and clearly and never loses results (issue #14, items 5-10).

Exit codes: 0 done, 1 results below the bar or nothing scored, 2 a usage or data error (one line).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli.test_cli import ROWS, assay


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    return path


def one_line_error(done, *needles: str, code: int = 2) -> str:
    assert done.returncode == code, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def evaluate(data: Path, *args: str, cwd: Path | None = None):
    return assay("evaluate", str(data), "--metrics", "exact_match", "--no-progress", *args, cwd=cwd)


# -- item 5: --output is checked before any work -----------------------------------------------------


def test_output_in_a_missing_directory_fails_before_any_work(data_file, tmp_path):
    run_dir = tmp_path / "run"
    done = evaluate(
        data_file, "--output", str(tmp_path / "nowhere" / "out.jsonl"), "--run-dir", str(run_dir)
    )
    one_line_error(done, "--output", "does not exist")
    assert not run_dir.exists()  # nothing was computed


def test_output_that_is_a_directory_fails_before_any_work(data_file, tmp_path):
    folder = tmp_path / "out.jsonl"
    folder.mkdir()
    run_dir = tmp_path / "run"
    one_line_error(
        evaluate(data_file, "--output", str(folder), "--run-dir", str(run_dir)), "is a directory"
    )
    assert not run_dir.exists()


def test_output_equal_to_the_input_file_is_refused(data_file):
    before = data_file.read_bytes()
    one_line_error(evaluate(data_file, "--output", str(data_file)), "input data file")
    (data_file.parent / "sub").mkdir()
    done = evaluate(Path("data.jsonl"), "--output", "./sub/../data.jsonl", cwd=data_file.parent)
    one_line_error(done, "input data file")
    link = data_file.parent / "link.jsonl"
    os.link(data_file, link)  # another name for the same file
    one_line_error(evaluate(data_file, "--output", str(link)), "input data file")
    assert data_file.read_bytes() == before


def test_output_onto_the_run_directorys_cells_is_refused(data_file, tmp_path):
    run_dir = tmp_path / "run"
    one_line_error(
        evaluate(data_file, "--run-dir", str(run_dir), "--output", str(run_dir / "cells.jsonl")),
        "--run-dir",
    )


def test_output_with_the_wrong_suffix_is_a_one_line_error(data_file, tmp_path):
    one_line_error(evaluate(data_file, "--output", str(tmp_path / "out.csv")), "--output", ".jsonl")


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_output_in_a_read_only_directory_fails_before_any_work(data_file, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        one_line_error(evaluate(data_file, "--output", str(locked / "out.jsonl")), "not writable")
    finally:
        locked.chmod(0o700)


def test_output_replaces_an_existing_file_completely(data_file, tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text("x" * 100_000)
    done = evaluate(data_file, "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["a1", "a2", "a3"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "data.jsonl",
        "out.jsonl",
    ]  # no temporary left


# -- item 6: run directories -------------------------------------------------------------------------


def test_run_dir_that_is_a_file_is_a_one_line_error(data_file, tmp_path):
    path = tmp_path / "run"
    path.write_text("notes")
    one_line_error(evaluate(data_file, "--run-dir", str(path)), "is a file, not a directory")
    assert path.read_text() == "notes"


def test_corrupt_run_json_is_a_one_line_error_saying_to_delete_it(data_file, tmp_path):
    run_dir = tmp_path / "run"
    assert evaluate(data_file, "--run-dir", str(run_dir)).returncode == 0
    (run_dir / "run.json").write_bytes(b"\x00\xff{")
    one_line_error(evaluate(data_file, "--run-dir", str(run_dir)), "run.json", "delete")


def test_a_bad_line_in_cells_is_one_warning_line_and_the_run_resumes(data_file, tmp_path):
    run_dir = tmp_path / "run"
    assert evaluate(data_file, "--run-dir", str(run_dir)).returncode == 0
    cells = run_dir / "cells.jsonl"
    lines = cells.read_bytes().splitlines(keepends=True)
    cells.write_bytes(lines[0] + b"\xff\xfe not a cell\n" + b"".join(lines[2:]))
    done = evaluate(data_file, "--run-dir", str(run_dir))
    assert done.returncode == 0, done.stderr
    warning = [line for line in done.stderr.splitlines() if "unreadable" in line]
    assert len(warning) == 1 and warning[0].startswith("warning: 1 unreadable line")
    assert "Warning:" not in done.stderr  # not Python's two-line warning format
    assert "1/3" in done.stdout or "2/3" in done.stdout


# -- item 7: text UTF-8 cannot encode ------------------------------------------------------------------


def test_a_lone_surrogate_in_the_data_is_written_to_output_and_run_dir(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(
        '{"response": "bad \\udcff", "reference": "bad \\udcff"}\n{"response": "b", "reference": "b"}\n'
    )
    out, run_dir = tmp_path / "out.jsonl", tmp_path / "run"
    done = evaluate(data, "--output", str(out), "--run-dir", str(run_dir))
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert (
        records[0]["response"] == "bad \udcff"
        and records[0]["metrics"]["exact_match"]["value"] == 1.0
    )
    again = evaluate(data, "--output", str(out), "--run-dir", str(run_dir))
    assert again.returncode == 0 and len((run_dir / "cells.jsonl").read_text().splitlines()) == 2


# -- item 8: configuration mistakes ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--budget", "-1"], "--budget"),
        (["--budget", "nan"], "--budget"),
        (["--timeout", "0"], "--timeout"),
        (["--timeout", "-3"], "--timeout"),
        (["--timeout", "nan"], "--timeout"),
        (["--concurrency", "0"], "--concurrency"),
        (["--fail-under", "nan"], "--fail-under"),
        (["--request-timeout", "0"], "--request-timeout"),
        (["--request-timeout", "-1"], "--request-timeout"),
        (["--request-timeout", "nan"], "--request-timeout"),
    ],
)
def test_bad_numbers_are_one_line_errors_before_any_work(data_file, tmp_path, args, needle):
    run_dir = tmp_path / "run"
    one_line_error(evaluate(data_file, "--run-dir", str(run_dir), *args), needle)
    assert not run_dir.exists()


@pytest.mark.parametrize("estimate", [False, True])
def test_an_empty_dataset_exits_2(tmp_path, estimate):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    one_line_error(
        evaluate(empty, *(["--estimate"] if estimate else [])), "the dataset has no rows"
    )


def test_column_map_naming_an_absent_column_exits_2(data_file):
    one_line_error(
        evaluate(data_file, "--column-map", "user_input=query"), "'query'", "columns present"
    )


def test_a_run_in_which_nothing_was_scored_exits_1(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(
        '{"response": "q", "id": 1}\n{"reference": "b"}\n'
    )  # never both fields in one row
    out = tmp_path / "out.jsonl"
    done = evaluate(data, "--output", str(out))
    assert done.returncode == 1, done.stderr
    assert "no cell was scored" in done.stderr and "Traceback" not in done.stderr
    assert len(out.read_text().splitlines()) == 2  # the results are still written


def test_fail_under_exits_1_naming_the_metric_below_the_bar(data_file, tmp_path):
    out = tmp_path / "out.jsonl"
    done = assay(
        "evaluate",
        str(data_file),
        "--metrics",
        "exact_match,string_present",
        "--no-progress",
        "--fail-under",
        "0.75",
        "--output",
        str(out),
    )
    assert done.returncode == 1, done.stderr
    failures = done.stderr.strip().splitlines()
    assert len(failures) == 1 and "exact_match" in failures[0] and "0.5000" in failures[0]
    assert "0.75" in failures[0] and "string_present" not in done.stderr
    assert out.exists()
    passed = assay(
        "evaluate",
        str(data_file),
        "--metrics",
        "exact_match",
        "--no-progress",
        "--fail-under",
        "0.5",
    )
    assert passed.returncode == 0, passed.stderr


def test_fail_under_fails_a_metric_with_no_scored_rows(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        '{"response": "a", "reference": "a", "retrieved_context_ids": [1]}\n'
        '{"response": "b", "reference": "b", "reference_context_ids": [1]}\n'
    )
    args = [
        "evaluate",
        str(rows),
        "--metrics",
        "exact_match,id_based_context_recall",
        "--no-progress",
    ]
    assert assay(*args).returncode == 0  # something was scored, and no bar was set
    done = assay(*args, "--fail-under", "0.5")
    assert done.returncode == 1, done.stderr
    failures = done.stderr.strip().splitlines()
    assert (
        len(failures) == 1
        and "id_based_context_recall" in failures[0]
        and "no scored rows" in failures[0]
    )


def test_help_documents_exit_codes_and_new_options():
    text = assay("evaluate", "--help").stdout
    assert "--fail-under" in text and "--request-timeout" in text
    assert "Exit codes" in text


# -- item 10: --request-timeout reaches the model factories ----------------------------------------------


def test_request_timeout_is_passed_to_the_factories(monkeypatch):
    import assay.models.defaults as defaults
    import assay.models.factory as factory
    from assay.engine.model_choice import ModelChoice
    from assay.metrics.registry import create_metric

    calls: list[tuple[str, dict]] = []
    monkeypatch.setattr(
        factory, "llm_factory", lambda model, **kw: calls.append((model, kw)) or "llm"
    )
    monkeypatch.setattr(
        factory, "embedding_factory", lambda model, **kw: calls.append((model, kw)) or "emb"
    )
    monkeypatch.setattr(
        defaults, "default_llm", lambda **kw: calls.append(("default", kw)) or "llm"
    )
    monkeypatch.setattr(
        defaults, "default_embeddings", lambda **kw: calls.append(("default-emb", kw)) or "emb"
    )

    def build(metrics, llm, embeddings, *, cache, request_timeout):  # as `assay evaluate` does
        choice = ModelChoice(
            llm=llm, embeddings=embeddings, cache=cache, request_timeout=request_timeout
        )
        choice.llm_for(any(m.needs_llm for m in metrics))
        choice.embeddings_for(any(m.needs_embeddings for m in metrics))

    build(
        [],
        "openai/gpt-4o-mini",
        "openai/text-embedding-3-small",
        cache=True,
        request_timeout=7.5,
    )
    assert calls == [
        ("openai/gpt-4o-mini", {"base_url": None, "cache": True, "timeout": 7.5}),
        ("openai/text-embedding-3-small", {"base_url": None, "cache": True, "timeout": 7.5}),
    ]
    calls.clear()
    build([], "openai/gpt-4o-mini", None, cache=False, request_timeout=None)
    assert calls == [
        ("openai/gpt-4o-mini", {"base_url": None, "cache": False})
    ]  # the factory's default
    calls.clear()
    judged = [create_metric("faithfulness"), create_metric("semantic_similarity")]
    build(judged, None, None, cache=True, request_timeout=3.0)
    assert calls == [
        ("default", {"cache": True, "timeout": 3.0}),
        ("default-emb", {"cache": True, "timeout": 3.0}),
    ]
