"""Input files that used to end in a traceback or a misleading message (issue #14, item 9),
and column_map entries that name no column (item 8)."""

from __future__ import annotations

import json

import pytest

from assay.errors import DataError, UsageError
from assay.schema import EvaluationDataset
from assay.schema.rows import MAX_NESTING


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [MAX_NESTING + 5, 5_000, 100_000])
def test_deeply_nested_jsonl_row_is_a_data_error_naming_file_and_row(tmp_path, depth):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"response": "a"}\n' + '{"response": "b", "deep": ' + _nested(depth) + "}\n")
    with pytest.raises(DataError, match=f"nested more than {MAX_NESTING} levels") as info:
        EvaluationDataset.load(path)
    assert info.value.file == str(path) and info.value.row == 2


@pytest.mark.parametrize("depth", [MAX_NESTING + 5, 100_000])
def test_deeply_nested_json_row_is_a_data_error_naming_file_and_row(tmp_path, depth):
    path = tmp_path / "deep.json"
    path.write_text(
        '[{"response": "a", "x": "[,]"}, {"response": "b", "deep": ' + _nested(depth) + "}]"
    )
    with pytest.raises(DataError, match=f"nested more than {MAX_NESTING} levels") as info:
        EvaluationDataset.load(path)
    assert info.value.file == str(path) and info.value.row == 2


def test_deeply_nested_csv_cell_is_a_data_error(tmp_path):
    path = tmp_path / "deep.csv"
    path.write_text("response,retrieved_contexts\na,[]\nb," + _nested(5_000) + "\n")
    with pytest.raises(DataError, match=f"nested more than {MAX_NESTING} levels") as info:
        EvaluationDataset.load(path)
    assert info.value.row == 2


def test_csv_cell_larger_than_the_csv_modules_default_limit_loads(tmp_path):
    import csv

    long_context = "word " * 60_000  # 300 KB, over csv's default field limit of 128 KB
    path = tmp_path / "long.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["response", "reference"], [long_context, "x"]])
    limit = csv.field_size_limit()
    assert EvaluationDataset.load(path)[0].response == long_context
    assert csv.field_size_limit() == limit  # the process-wide setting is left as it was


def test_deeply_nested_in_memory_row_names_the_index():
    deep: list = []
    for _ in range(10_000):
        deep = [deep]
    with pytest.raises(DataError, match=f"index 1: .*nested more than {MAX_NESTING} levels"):
        EvaluationDataset.from_list([{"response": "a"}, {"response": "b", "deep": deep}])


def test_nesting_at_the_limit_is_accepted(tmp_path):
    path = tmp_path / "ok.jsonl"
    # the row object is level 1, so its field may nest MAX_NESTING - 1 deep
    path.write_text('{"response": "b", "deep": ' + _nested(MAX_NESTING - 1) + "}\n")
    dataset = EvaluationDataset.load(path)
    assert len(dataset) == 1
    dataset.to_list()  # and it serialises


def test_directory_given_as_data_says_so_and_lists_file_types(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    with pytest.raises(DataError) as info:
        EvaluationDataset.load(folder)
    message = str(info.value)
    assert "is a directory" in message and ".jsonl, .json or .csv" in message
    assert "unsupported file type ''" not in message


def test_directory_with_a_data_suffix_lists_file_types(tmp_path):
    folder = tmp_path / "data.jsonl"
    folder.mkdir()
    with pytest.raises(DataError, match=r"is a directory.*\.jsonl, \.json or \.csv"):
        EvaluationDataset.load(folder)


def test_file_without_extension_says_it_has_none(tmp_path):
    path = tmp_path / "data"
    path.write_text('{"response": "a"}\n')
    with pytest.raises(DataError, match="no file extension"):
        EvaluationDataset.load(path)


@pytest.mark.parametrize("indent", [2, None])
def test_pretty_printed_json_array_saved_as_jsonl_gets_a_hint(tmp_path, indent):
    path = tmp_path / "data.jsonl"
    rows = [{"response": "a", "reference": "a"}, {"response": "b", "reference": "b"}]
    text = json.dumps(rows, indent=indent)
    if indent is None:  # an array with one object per line
        text = "[\n" + ",\n".join(json.dumps(row) for row in rows) + "\n]\n"
    path.write_text(text)
    with pytest.raises(DataError) as info:
        EvaluationDataset.load(path)
    message = str(info.value)
    assert "row 1: not valid JSON" in message
    assert "save it as .json or one object per line" in message


def test_pretty_printed_object_saved_as_jsonl_gets_a_hint(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps({"response": "a", "reference": "a"}, indent=2))
    with pytest.raises(DataError, match="spread over several lines"):
        EvaluationDataset.load(path)


def test_a_plain_bad_line_gets_no_array_hint(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text('{"response": "a"}\n{"response": oops}\n')
    with pytest.raises(DataError) as info:
        EvaluationDataset.load(path)
    assert "row 2: not valid JSON" in str(info.value) and "several lines" not in str(info.value)


# -- column_map naming a column no row has (item 8) -------------------------------------------------


def test_column_map_naming_an_absent_column_is_a_usage_error_listing_the_columns():
    rows = [
        {"question_text": "q", "response": "a"},
        {"question_text": "q2", "response": "b", "id": 2},
    ]
    with pytest.raises(UsageError) as info:
        EvaluationDataset.from_list(rows, column_map={"user_input": "query"})
    message = str(info.value)
    assert "'query'" in message and "no row has" in message
    assert "question_text, response, id" in message


def test_column_map_in_rename_orientation_naming_an_absent_column(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("q,response\nx,y\n")
    with pytest.raises(UsageError, match=r"'query'.*q, response"):
        EvaluationDataset.load(path, column_map={"query": "user_input"})


def test_column_map_present_in_some_row_is_fine():
    dataset = EvaluationDataset.from_list(
        [{"response": "a"}, {"response": "b", "query": "q"}], column_map={"user_input": "query"}
    )
    assert dataset[1].user_input == "q"
