"""Reading an output directory: a finished outcome wins over an error, a row written twice counts
once, torn and foreign lines are passed over and counted, and a directory of another run is
refused (no cluster needed)."""

from __future__ import annotations

import json

import pytest

from assay.engine.ray.output import OutputDirectory
from assay.errors import CheckpointMismatch, UsageError
from assay.schema.outcome import Cell, Error, Ok
from assay.schema.usage import Usage

pytestmark = pytest.mark.ray


def line(row_id: str, row: int, outcome, requests: int = 1) -> str:
    cell = Cell(row=row, metric="m", outcome=outcome, usage=Usage(requests=requests))
    return json.dumps({"row_id": row_id, "cells": [cell.model_dump(mode="json")]}) + "\n"


def test_reading_deduplicates_and_prefers_finished_outcomes(tmp_path):
    out = OutputDirectory(tmp_path)
    assert out.open(run_fingerprint="f", description={}, resume=True) is False
    (tmp_path / "rows" / "part-w0-1-a.jsonl").write_text(
        line("a", 0, Error(error_type="Timeout", message="slow"))
        + line("b", 1, Ok(value=1.0))
        + '{"row_id": "b", "cells": [{"row": 1, "metric": "m", "outc'  # torn by a kill
    )
    (tmp_path / "rows" / "part-w1-2-b.jsonl").write_text(
        line("a", 0, Ok(value=0.5))
        + line("b", 1, Ok(value=1.0), requests=3)
        + line("zz", 9, Ok(value=1.0))
    )
    found = out.collect({"a": 0, "b": 1}, {"m"})
    assert found.cells[("a", "m")].outcome == Ok(value=0.5)  # the retry that worked
    assert found.finished("a", "m") and found.finished("b", "m")
    assert found.duplicate_cells == 1 and found.repeated_requests == 3
    assert found.unreadable_lines == 2  # the torn line and the row of another run


def test_a_directory_of_another_run_or_without_resume_is_refused(tmp_path):
    out = OutputDirectory(tmp_path)
    out.open(run_fingerprint="first", description={}, resume=True)
    with pytest.raises(CheckpointMismatch, match="holds a run over different data or metrics"):
        out.open(run_fingerprint="second", description={}, resume=True)
    (tmp_path / "rows" / "part-w0-1-a.jsonl").write_text(line("a", 0, Ok(value=1.0)))
    with pytest.raises(UsageError, match="already holds rows of this run; pass resume=True"):
        out.open(run_fingerprint="first", description={}, resume=False)
    assert out.open(run_fingerprint="first", description={}, resume=True) is True


def test_rows_without_a_run_json_are_refused(tmp_path):
    (tmp_path / "rows").mkdir()
    (tmp_path / "rows" / "part-w0-1-a.jsonl").write_text(line("a", 0, Ok(value=1.0)))
    with pytest.raises(CheckpointMismatch, match=r"has rows but no run\.json"):
        OutputDirectory(tmp_path).open(run_fingerprint="f", description={}, resume=True)
