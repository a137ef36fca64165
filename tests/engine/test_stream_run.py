"""A run from a .jsonl file streamed a piece at a time (issue #45, item 10): the same rows, the
same summary and the same run directory as the in-memory run, the same checks before any work,
and never more than a piece of rows in the engine at once. Its memory is measured by
`benchmarks/memory.py`."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import assay.engine.run as engine_run
import assay.engine.stream_run as stream_run
from assay.engine.file_run import FileRunOptions, evaluate_file
from assay.engine.stream_run import StreamedResult
from assay.errors import DataError, UsageError
from assay.schema.dataset import EvaluationDataset

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


# -- CSV files (issue #45, item 10): streamed like .jsonl, read by the same strict reader --------

CSV_METRICS = [
    "exact_match",
    "non_llm_string_similarity",
    "non_llm_context_recall",
    "id_based_context_precision",
]
CSV_HEADER = [
    "id",
    "question",
    "response",
    "reference",
    "retrieved_contexts",
    "reference_contexts",
    "retrieved_context_ids",
    "reference_context_ids",
    "note",
]


def csv_rows(n: int) -> list[list[str]]:
    """Rows that exercise how CSV cells are typed: quoted multi-line text with commas and quotes,
    JSON and Python-literal lists, ids that are numbers, empty cells (absent fields), and text
    that looks like a number or a boolean in a column that is not a field (kept as text)."""
    out = []
    for i in range(n):
        contexts = (
            json.dumps([f"fact {i % 4}", "line one\nline two, with a comma"])
            if i % 3
            else str([f"fact {i % 4}"])  # a Python literal, as Ragas writes lists
        )
        out.append(
            [
                f"{i:03d}",
                f'question {i},\nasked "twice"\r\non three lines' if i % 2 else f"question {i}",
                f"answer {i % 5}",
                f"answer {i % 3}",
                "" if i % 7 == 4 else contexts,
                json.dumps([f"fact {i % 2}"]),
                json.dumps([i % 3, "doc-a"]),
                json.dumps([1, "doc-a"]),
                ["true", "4", "", "4.50"][i % 4],
            ]
        )
    return out


def write_csv(path: Path, body: list[list[str]], header: list[str] = CSV_HEADER) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(body[:10])
        handle.write("\r\n")  # a blank line is not a row, in either reader
        writer.writerows(body[10:])
    return path


def test_a_streamed_csv_run_writes_what_the_in_memory_run_writes(tmp_path, monkeypatch):
    data = write_csv(tmp_path / "data.csv", csv_rows(30))
    loaded = EvaluationDataset.load(data)
    pieces = list(EvaluationDataset.iter_csv(data, size=7))
    # the pieces joined are the dataset, typed by the same rule
    assert [len(piece) for piece in pieces] == [7, 7, 7, 7, 2]
    assert [s.to_dict() for piece in pieces for s in piece] == loaded.to_list()
    first, second = loaded[0].to_dict(), loaded[1].to_dict()
    assert second["user_input"] == 'question 1,\nasked "twice"\r\non three lines'
    assert second["retrieved_contexts"] == ["fact 1", "line one\nline two, with a comma"]
    assert first["retrieved_contexts"] == ["fact 0"]
    assert "retrieved_contexts" not in loaded[4].to_dict()
    assert second["retrieved_context_ids"] == [1, "doc-a"]
    assert first["metadata"] == {"id": "000", "note": "true"}
    assert loaded[2].to_dict()["metadata"] == {"id": "002", "note": ""}

    seen: list[int] = []
    real = engine_run._execute

    async def spy(plan, cancel, part=None):
        seen.append(len(plan.data))
        return await real(plan, cancel, part)

    whole = evaluate_file(data, CSV_METRICS, options(tmp_path, "whole"))
    monkeypatch.setattr(stream_run, "_execute", spy)
    streamed = evaluate_file(data, CSV_METRICS, options(tmp_path, "streamed", stream=True))
    assert isinstance(streamed.result, StreamedResult)
    assert seen == [7, 7, 7, 7, 2]
    assert streamed.result.summaries() == whole.result.summaries()
    skipped = streamed.result.summary("non_llm_context_recall").n_skipped
    assert skipped == 4  # rows 4, 11, 18, 25 have no retrieved_contexts
    whole_rows = [json.loads(line) for line in (tmp_path / "whole.jsonl").read_text().splitlines()]
    streamed_rows = [
        json.loads(line) for line in (tmp_path / "streamed.jsonl").read_text().splitlines()
    ]
    assert len(streamed_rows) == len(whole_rows) == 30
    for number, (mine, theirs) in enumerate(zip(streamed_rows, whole_rows, strict=True)):
        assert mine.keys() == theirs.keys(), number
        for column in theirs:
            assert mine[column] == theirs[column], (number, column)
    # the same fingerprint: the in-memory run's directory resumes as a streamed run, and back
    resumed = evaluate_file(
        data,
        CSV_METRICS,
        FileRunOptions(run_dir=tmp_path / "run-whole", stream=True, show_progress=False),
    )
    assert resumed.result.resumed_cells == 120 and resumed.result.sent_usage().requests == 0
    back = evaluate_file(data, CSV_METRICS, FileRunOptions(run_dir=tmp_path / "run-streamed"))
    assert back.result.resumed_cells == 120


def _with_line(row: int, line: str, n: int = 20) -> str:
    """A CSV of `n` plain rows (no quotes at all) whose data row `row` (1-based) is `line`."""
    lines = [f"{i},q,a,a,[],[],[],[]," for i in range(n)]
    lines[row - 1] = line
    return ",".join(CSV_HEADER) + "\n" + "\n".join(lines) + "\n"


# Each fault is in the third piece of 7 rows: only a first pass over the whole file finds it.
CSV_FAULTS = {
    # the quote swallows every later line, and the reader finds out at the end of the file
    "a quote never closed": (_with_line(17, '16,"q,a,a,[],[],[],[],'), r"row 17: .*end of data"),
    "text after a closing quote": (
        _with_line(17, '16,"q"x,a,a,[],[],[],[],'),
        r"row 17: not valid",
    ),
    "an extra field": (_with_line(17, "16,q,a,a,[],[],[],[],,extra"), r"row 17: 10 fields"),
    "a missing field": (_with_line(17, "16,q,a,a,[],[],[]"), r"row 17: 7 fields"),
    "a list that is not JSON": (
        _with_line(17, '16,q,a,a,"[oops",[],[],[],'),
        r"row 17: retrieved_contexts must be",
    ),
    "a header naming a column twice": (
        "id,response,reference,response\n" + "1,a,a,b\n" * 20,
        r"names column 'response' twice",
    ),
    "a header with no rows": (",".join(CSV_HEADER) + "\n\n", r"a header but no rows"),
}


@pytest.mark.parametrize("fault", list(CSV_FAULTS))
def test_a_streamed_csv_run_refuses_what_the_strict_reader_refuses_before_any_work(
    tmp_path, monkeypatch, fault
):
    text, expected = CSV_FAULTS[fault]
    data = tmp_path / "data.csv"
    data.write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as in_memory:
        EvaluationDataset.load(data)

    def read_whole(*args, **kwargs):
        raise AssertionError("the streamed run read the file whole")

    monkeypatch.setattr(EvaluationDataset, "from_csv", read_whole)
    with pytest.raises(DataError, match=expected) as streamed:
        evaluate_file(data, ["exact_match"], options(tmp_path, "a", stream=True))
    assert str(streamed.value) == str(in_memory.value)
    assert not (tmp_path / "run-a").exists() and not (tmp_path / "a.jsonl").exists()


def test_a_json_array_is_read_whole_even_when_streaming_is_asked(tmp_path, monkeypatch):
    data = tmp_path / "data.json"
    data.write_text(json.dumps(rows(10)), encoding="utf-8")
    monkeypatch.setattr(stream_run, "_execute", None)  # the streamed path would call it
    run = evaluate_file(data, METRICS, options(tmp_path, "j", stream=True))
    assert not isinstance(run.result, StreamedResult) and len(run.result.outcomes) == 10
    with pytest.raises(UsageError, match=r"only \.jsonl and \.csv"):
        EvaluationDataset.iter_file(data)
