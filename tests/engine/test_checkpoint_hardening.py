"""Run directories that used to end in a traceback and no resume (issue #14, items 6 and 7)."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

from assay import CheckpointMismatch, UsageError, evaluate
from assay.metrics.base import Metric
from assay.schema.outcome import Cell, MetricResult

CALLS: list[str] = []


@dataclass(kw_only=True)
class Echo(Metric):
    """Scores len(response), says the response back in its reason, and logs every call."""

    name: str = "test_echo"
    required_fields = ("response",)

    async def _ascore(self, *, response: str) -> MetricResult:
        CALLS.append(response)
        return MetricResult(
            float(len(response)), reason=f"saw {response}", details={"text": response}
        )


@pytest.fixture(autouse=True)
def _clear_calls():
    CALLS.clear()


ROWS = [{"response": "x" * n} for n in range(1, 7)]


def run(run_dir: Path, rows=ROWS):
    return evaluate(rows, [Echo()], run_dir=run_dir, show_progress=False, max_concurrency=1)


# -- the run directory itself --------------------------------------------------------------------


def test_run_dir_that_is_a_file_is_a_usage_error(tmp_path):
    path = tmp_path / "run"
    path.write_text("my notes")
    with pytest.raises(UsageError, match="is a file, not a directory") as info:
        run(path)
    assert "\n" not in str(info.value)
    assert path.read_text() == "my notes" and CALLS == []


def test_run_dir_below_a_file_is_a_usage_error(tmp_path):
    (tmp_path / "notes").write_text("x")
    with pytest.raises(UsageError, match="notes"):
        run(tmp_path / "notes" / "run")
    assert CALLS == []


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"\xff\xfe garbage", b"[1, 2, 3]", b'{"something": "else"}', b""],
    ids=["bad-json", "bad-utf8", "a-list", "no-fingerprint", "empty"],
)
def test_corrupt_run_json_says_what_to_do(tmp_path, content):
    run(tmp_path)
    (tmp_path / "run.json").write_bytes(content)
    cells = (tmp_path / "cells.jsonl").read_bytes()
    CALLS.clear()
    with pytest.raises(CheckpointMismatch) as info:
        run(tmp_path)
    message = str(info.value)
    assert "run.json" in message and "delete" in message and "\n" not in message
    assert CALLS == [] and (tmp_path / "cells.jsonl").read_bytes() == cells  # nothing touched


def test_run_json_that_is_a_directory(tmp_path):
    (tmp_path / "run.json").mkdir()
    with pytest.raises(CheckpointMismatch, match=r"run\.json"):
        run(tmp_path)


def test_saved_cells_without_run_json_are_not_adopted(tmp_path):
    run(tmp_path)
    (tmp_path / "run.json").unlink()
    cells = (tmp_path / "cells.jsonl").read_bytes()
    with pytest.raises(CheckpointMismatch, match=r"no run\.json"):
        run(tmp_path, [{"response": "other data"}])
    assert (tmp_path / "cells.jsonl").read_bytes() == cells


# -- bad lines in cells.jsonl ----------------------------------------------------------------------


def _lines(run_dir: Path) -> list[bytes]:
    return (run_dir / "cells.jsonl").read_bytes().splitlines(keepends=True)


@pytest.mark.parametrize(
    "bad",
    [
        b'{"row": 1, "metric": "test_echo", "outc\xff\xfeome": 1}\n',  # invalid UTF-8 in the middle
        b'{"row": 1, "metric": "test_echo", "outcome": \n',  # not JSON
        b"[1, 2, 3]\n",  # JSON, not an object
        b'{"row": 1, "metric": "test_echo", "outcome": {"status": "ok", "value": "NaN?"}, "x": 1}\n',  # wrong shape
        b'{"row": 1, "metric": "test_echo"}\n',  # fields missing
    ],
    ids=["bad-utf8", "bad-json", "not-object", "wrong-shape", "missing-fields"],
)
def test_a_bad_line_in_the_middle_is_skipped_and_its_cell_recomputed(tmp_path, bad):
    run(tmp_path)
    lines = _lines(tmp_path)
    lines[1] = bad  # the cell of one row becomes unreadable; the lines after it stay good
    (tmp_path / "cells.jsonl").write_bytes(b"".join(lines))
    CALLS.clear()
    with pytest.warns(UserWarning, match="1 unreadable line in .*cells.jsonl"):
        result = run(tmp_path)
    assert result["test_echo"] == [float(n) for n in range(1, 7)]
    assert CALLS == ["x" * 2]  # only the unreadable cell was computed again
    # the file is readable again (the report reads it too), the bad line is kept aside, not lost
    for line in (tmp_path / "cells.jsonl").read_text(encoding="utf-8").splitlines():
        Cell.model_validate(json.loads(line))
    assert (tmp_path / "cells.jsonl.unreadable").read_bytes() == bad
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(tmp_path)  # a third run has nothing to warn about and nothing to compute
    assert CALLS == ["x" * 2]


def test_cells_of_rows_or_metrics_the_run_does_not_have_are_skipped(tmp_path):
    run(tmp_path)
    good = json.loads(_lines(tmp_path)[0])
    foreign = [{**good, "row": 99}, {**good, "row": -1}, {**good, "metric": "other"}]
    with (tmp_path / "cells.jsonl").open("a") as handle:
        handle.writelines(json.dumps(cell) + "\n" for cell in foreign)
    CALLS.clear()
    with pytest.warns(UserWarning, match="3 unreadable lines"):
        result = run(tmp_path)
    assert CALLS == [] and result.metric_names == ["test_echo"]
    assert all(set(row) == {"test_echo"} for row in result.outcomes)


def test_torn_last_line_is_still_cut_without_a_warning(tmp_path):
    run(tmp_path)
    lines = _lines(tmp_path)
    (tmp_path / "cells.jsonl").write_bytes(b"".join(lines[:-1]) + lines[-1][:10])
    CALLS.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = run(tmp_path)
    assert CALLS == ["x" * 6] and result["test_echo"][-1] == 6.0


def test_a_bad_line_and_a_torn_last_line_together(tmp_path):
    run(tmp_path)
    lines = _lines(tmp_path)
    lines[0] = b"\xff\n"
    lines[-1] = lines[-1][:5]
    (tmp_path / "cells.jsonl").write_bytes(b"".join(lines))
    CALLS.clear()
    with pytest.warns(UserWarning, match="1 unreadable line"):
        run(tmp_path)
    assert sorted(CALLS) == ["x", "x" * 6]


# -- odd text in cells (item 7) ---------------------------------------------------------------------


def test_lone_surrogates_in_the_data_are_checkpointed_and_resumed(tmp_path):
    rows = [{"response": json.loads('"bad \\udcff"')}, {"response": "fine 你好"}]
    first = run(tmp_path, rows)
    assert first.outcome(0, "test_echo").reason == "saw bad \udcff"
    assert "你好" in (tmp_path / "cells.jsonl").read_text(
        encoding="utf-8"
    )  # readable where it can be
    CALLS.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = run(tmp_path, rows)
    assert CALLS == []  # both cells read back
    assert again.outcome(0, "test_echo").details == {"text": "bad \udcff"}


def test_line_separators_inside_text_do_not_split_a_cell(tmp_path):
    rows = [{"response": "a\u2028b\x85c\u2029d\x1ce"}, {"response": "plain"}]
    run(tmp_path, rows)
    CALLS.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = run(tmp_path, rows)
    assert CALLS == [] and again.outcome(0, "test_echo").reason == "saw a\u2028b\x85c\u2029d\x1ce"
