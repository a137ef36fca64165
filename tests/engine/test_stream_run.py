"""A run from a .jsonl file streamed a piece at a time (issue #45, item 10): the same rows, the
same summary and the same run directory as the in-memory run, the same checks before any work,
and never more than a piece of rows in the engine at once. Its memory is measured by
`benchmarks/memory.py`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import assay.engine.run as engine_run
import assay.engine.stream_run as stream_run
from assay.engine.file_run import FileRunOptions, evaluate_file
from assay.engine.stream_run import StreamedResult
from assay.errors import DataError, UsageError

METRICS = ["exact_match", "non_llm_string_similarity"]


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch):
    monkeypatch.setattr(stream_run, "PIECE_ROWS", 7)


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def rows(n: int) -> list[dict]:
    return [
        {"id": f"r{i}", "response": f"answer {i % 5}", "reference": f"answer {i % 3}"}
        for i in range(n)
    ]


def options(tmp_path: Path, name: str, **extra) -> FileRunOptions:
    return FileRunOptions(
        output=tmp_path / f"{name}.jsonl",
        run_dir=tmp_path / f"run-{name}",
        show_progress=False,
        **extra,
    )


def test_a_streamed_run_writes_what_the_in_memory_run_writes(tmp_path):
    data = write(tmp_path / "data.jsonl", rows(50))
    whole = evaluate_file(data, METRICS, options(tmp_path, "whole"))
    streamed = evaluate_file(data, METRICS, options(tmp_path, "streamed", stream=True))
    assert isinstance(streamed.result, StreamedResult)
    assert streamed.result.summaries() == whole.result.summaries()
    assert repr(streamed.result) == repr(whole.result)
    assert (tmp_path / "streamed.jsonl").read_text() == (tmp_path / "whole.jsonl").read_text()
    # the run directories hold the same cells, so either run resumes the other's
    saved = sorted((tmp_path / "run-streamed" / "cells.jsonl").read_text().splitlines())
    assert len(saved) == 100
    resumed = evaluate_file(
        data,
        METRICS,
        FileRunOptions(run_dir=tmp_path / "run-whole", stream=True, show_progress=False),
    )
    assert resumed.result.resumed_cells == 100 and resumed.result.sent_usage().requests == 0


def test_a_streamed_resume_reads_back_only_what_it_needs_and_computes_the_rest(tmp_path):
    data = write(tmp_path / "data.jsonl", rows(30))
    first = evaluate_file(data, METRICS, options(tmp_path, "a", stream=True))
    cells = tmp_path / "run-a" / "cells.jsonl"
    lines = cells.read_text().splitlines(keepends=True)
    cells.write_text("".join(lines[:23]) + lines[23][:10])  # a torn last line, as after kill -9
    again = evaluate_file(data, METRICS, options(tmp_path, "a", stream=True))
    assert again.result.resumed_cells == 23
    assert again.result.summaries() == first.result.summaries()
    assert len(cells.read_text().splitlines()) == 60


def test_the_engine_never_holds_more_than_a_piece(tmp_path, monkeypatch):
    seen: list[int] = []
    real = engine_run._execute

    async def spy(plan, cancel, part=None):
        seen.append(len(plan.data))
        return await real(plan, cancel, part)

    monkeypatch.setattr(stream_run, "_execute", spy)
    data = write(tmp_path / "data.jsonl", rows(30))
    evaluate_file(data, METRICS, options(tmp_path, "a", stream=True))
    assert seen == [7, 7, 7, 7, 2]


def test_bad_rows_anywhere_are_refused_before_any_work(tmp_path):
    lines = [json.dumps(row) for row in rows(20)]
    lines[16] = '{"response": "x", "reference": '  # line 17, in the third piece
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"row 17|line 17"):
        evaluate_file(data, METRICS, options(tmp_path, "a", stream=True))
    assert not (tmp_path / "run-a").exists() and not (tmp_path / "a.jsonl").exists()


def test_checks_over_the_whole_file_hold_across_pieces(tmp_path):
    # a column_map column that only a later piece has is fine; one no row has is refused
    mapped = [{"response": "a", "ref": "a"} if i == 12 else {"response": "a"} for i in range(15)]
    data = write(tmp_path / "mapped.jsonl", mapped)
    run = evaluate_file(
        data, ["exact_match"], options(tmp_path, "m", stream=True, column_map={"reference": "ref"})
    )
    assert run.result.summary("exact_match").n_ok == 1
    with pytest.raises(UsageError, match="'nope'"):
        evaluate_file(
            data,
            ["exact_match"],
            options(tmp_path, "n", stream=True, column_map={"reference": "nope"}),
        )
    # a field no row of any piece has
    data = write(tmp_path / "no_reference.jsonl", [{"response": "a"}] * 10)
    with pytest.raises(UsageError, match="needs reference, which no row"):
        evaluate_file(data, ["exact_match"], options(tmp_path, "f", stream=True))
    # single-turn rows, then a conversation in a later piece
    mixed = [{"response": "a", "reference": "a"}] * 9 + [
        {"user_input": [{"type": "human", "content": "hi"}]}
    ]
    data = write(tmp_path / "mixed.jsonl", mixed)
    with pytest.raises(DataError, match="must not mix single-turn and multi-turn"):
        evaluate_file(data, ["exact_match"], options(tmp_path, "x", stream=True))
