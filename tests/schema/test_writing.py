"""Writing never crashes on odd text and never leaves a half-written file (issue #14, items 5 and 7).

A JSON file may legally hold a lone surrogate (`"\\udcff"`), which UTF-8 cannot encode: such lines
are written with JSON escapes, so they read back identically, while other lines stay readable.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import DataError
from assay.schema import EvaluationDataset, EvaluationResult
from assay.schema.outcome import Error, Ok

LONE = json.loads('"bad \\udcff byte"')  # what json.loads makes of a valid "\udcff" escape


def _surrogate_file(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text(
        '{"response": "bad \\udcff byte", "reference": "r", "note": "\\ud800"}\n'
        '{"response": "你好", "reference": "r"}\n',
        encoding="utf-8",
    )
    return path


def test_loading_a_lone_surrogate_escape_keeps_the_text(tmp_path):
    dataset = EvaluationDataset.load(_surrogate_file(tmp_path))
    assert dataset[0].response == LONE and dataset[0].metadata == {"note": "\ud800"}


def test_dataset_to_jsonl_round_trips_lone_surrogates(tmp_path):
    dataset = EvaluationDataset.load(_surrogate_file(tmp_path))
    out = tmp_path / "copy.jsonl"
    dataset.to_jsonl(out)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert "\\udcff" in lines[0]  # escaped where UTF-8 cannot hold it ...
    assert "你好" in lines[1]  # ... and readable everywhere else
    assert EvaluationDataset.load(out).to_list() == dataset.to_list()


def _result(dataset: EvaluationDataset) -> EvaluationResult:
    outcomes = [
        {"m": Ok(value=1.0, reason=f"echo {LONE}", details={"raw": LONE})},
        {"m": Error(error_type="X", message="fail \udcff", raw="\ud800")},
    ]
    return EvaluationResult(dataset, [{"name": "m"}], outcomes)


def test_result_to_jsonl_round_trips_lone_surrogates(tmp_path):
    result = _result(EvaluationDataset.load(_surrogate_file(tmp_path)))
    out = tmp_path / "results.jsonl"
    result.to_jsonl(out)
    assert out.stat().st_size > 0
    assert [
        json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()
    ] == result.row_records()


def test_csv_with_a_lone_surrogate_in_a_list_cell_round_trips(tmp_path):
    dataset = EvaluationDataset.from_list([{"response": "a", "retrieved_contexts": [LONE, "ok"]}])
    out = tmp_path / "data.csv"
    dataset.to_csv(out)
    assert EvaluationDataset.load(out).to_list() == dataset.to_list()


def test_csv_cannot_hold_a_lone_surrogate_in_a_text_cell_and_says_so(tmp_path):
    dataset = EvaluationDataset.from_list([{"response": "fine"}, {"response": LONE}])
    out = tmp_path / "data.csv"
    out.write_text("previous contents")
    with pytest.raises(DataError, match="index 1: response") as info:
        dataset.to_csv(out)
    assert "to_jsonl" in str(info.value)
    assert out.read_text() == "previous contents"  # nothing half-written
    assert [p.name for p in tmp_path.iterdir()] == ["data.csv"]  # no temporary file left behind


def test_a_failed_write_leaves_the_previous_file_and_no_temporary(tmp_path, monkeypatch):
    dataset = EvaluationDataset.from_list([{"response": "a"}, {"response": "b"}])
    result = EvaluationResult(
        dataset, [{"name": "m"}], [{"m": Ok(value=1.0)}, {"m": Ok(value=0.0)}]
    )
    out = tmp_path / "results.jsonl"
    out.write_text("previous run\n")
    records = result.row_records()
    records[1]["unserialisable"] = object()
    monkeypatch.setattr(EvaluationResult, "iter_row_records", lambda self: iter(records))
    with pytest.raises(TypeError):
        result.to_jsonl(out)
    assert out.read_text() == "previous run\n"
    assert [p.name for p in tmp_path.iterdir()] == ["results.jsonl"]


def test_written_files_respect_the_umask(tmp_path):
    import os
    import stat

    dataset = EvaluationDataset.from_list([{"response": "a"}])
    dataset.to_jsonl(tmp_path / "a.jsonl")
    dataset.to_csv(tmp_path / "a.csv")
    umask = os.umask(0)
    os.umask(umask)
    for name in ("a.jsonl", "a.csv"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o666 & ~umask


def test_writing_through_a_symbolic_link_keeps_the_link(tmp_path):
    target = tmp_path / "real.jsonl"
    target.write_text("old\n")
    link = tmp_path / "latest.jsonl"
    link.symlink_to(target)
    EvaluationDataset.from_list([{"response": "a"}]).to_jsonl(link)
    assert link.is_symlink() and json.loads(target.read_text()) == {"response": "a"}
