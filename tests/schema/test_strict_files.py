"""Files that Python's csv and json modules would misread are errors naming the row or header.

Each case here was read silently before: rows glued by an unclosed quote, an extra field kept as
metadata `{"None": [...]}`, a missing field, a repeated column or JSON key keeping the last
value, and a header-only file making an empty dataset.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from assay import EvaluationDataset
from assay.errors import DataError


def load(tmp_path, name: str, text: str | bytes) -> EvaluationDataset:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return EvaluationDataset.load(path)


@pytest.mark.parametrize(
    ("text", "row", "words"),
    [
        # an unclosed quote used to swallow every later line into one cell
        ('user_input,response\nq1,"r1\nq2,r2\nq3,r3\n', 1, "not valid CSV"),
        ('user_input,response\nq1,"r1"x\nq2,r2\n', 1, "not valid CSV"),
        ("user_input,response\nq1,r1\nq2,r2,extra\n", 2, "3 fields where the header has 2"),
        ("user_input,response,reference\nq1,r1,x\nq2,r2\n", 2, "2 fields where the header has 3"),
    ],
)
def test_a_misshapen_csv_row_is_an_error_naming_it(tmp_path, text, row, words):
    with pytest.raises(DataError, match=words) as info:
        load(tmp_path, "d.csv", text)
    assert info.value.row == row


def test_a_repeated_or_unnamed_csv_column_is_an_error_naming_it(tmp_path):
    with pytest.raises(DataError, match=r"names column 'response' twice \(columns 2 and 3\)"):
        load(tmp_path, "d.csv", "user_input,response,response\nq,a,b\n")
    with pytest.raises(DataError, match="column 2 of the header has no name"):
        load(tmp_path, "d.csv", "user_input,,response\nq,x,r\n")


def test_a_header_only_or_empty_csv_is_not_an_empty_dataset(tmp_path):
    with pytest.raises(DataError, match="header but no rows"):
        load(tmp_path, "d.csv", "user_input,response\n")
    with pytest.raises(DataError, match="the file is empty"):
        load(tmp_path, "d.csv", "")


def test_valid_csv_with_quoted_newlines_commas_and_blank_lines_still_reads(tmp_path):
    text = 'user_input,response\n"q, with comma","line one\nline two"\n\nq2,r2\n'
    dataset = load(tmp_path, "d.csv", text)
    assert [s.user_input for s in dataset] == ["q, with comma", "q2"]
    assert dataset[0].response == "line one\nline two"


def test_a_repeated_json_key_is_an_error_naming_the_row_and_key(tmp_path):
    jsonl = '{"user_input": "q1", "response": "a"}\n{"user_input": "q2", "response": "a", "response": "b"}\n'
    with pytest.raises(DataError, match="'response' appears twice") as info:
        load(tmp_path, "d.jsonl", jsonl)
    assert info.value.row == 2
    with pytest.raises(DataError, match="'user_input' appears twice"):
        load(tmp_path, "d.json", '[{"user_input": "q", "user_input": "p", "response": "r"}]')


def test_bytes_that_are_not_utf8_name_the_line(tmp_path):
    text = "user_input,response\nq1,r1\nq2,caf\xe9\n".encode("latin-1")
    with pytest.raises(DataError, match=r"not UTF-8 text at line 3"):
        load(tmp_path, "d.csv", text)
    with pytest.raises(DataError, match=r"not UTF-8 text at line 2"):
        load(
            tmp_path,
            "d.jsonl",
            '{"user_input": "a"}\n{"user_input": "caf\xe9"}\n'.encode("latin-1"),
        )


def test_the_cli_refuses_a_ragged_csv_before_any_work(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("response,reference\na,b\nc,d,e\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "evaluate",
            str(path),
            "--metrics",
            "exact_match",
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode != 0
    said = done.stdout + done.stderr
    assert "row 2" in said and "3 fields where the header has 2" in said, said
    assert "Traceback" not in said
    assert not out.exists()
