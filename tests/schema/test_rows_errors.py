"""Row mapping (legacy names, column_map, metadata) and DataErrors that locate the problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import AssayError, DataError
from assay.schema import EvaluationDataset, MultiTurnSample, SingleTurnSample

CONVERSATION = [{"type": "human", "content": "hi"}, {"type": "ai", "content": "hello"}]


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text(
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8"
    )
    return path


def good_row(i: int) -> dict:
    return {
        "user_input": f"question {i}",
        "retrieved_contexts": [f"context {i}"],
        "response": f"answer {i}",
    }


# -- the DataError type -------------------------------------------------------------------------


def test_data_error_is_an_assay_error_and_a_value_error():
    error = DataError("bad", file="f.jsonl", row=3, field="response")
    assert isinstance(error, AssayError)
    assert isinstance(error, ValueError)
    assert str(error) == "f.jsonl: row 3: bad"
    assert (error.file, error.row, error.field, error.detail) == ("f.jsonl", 3, "response", "bad")


def test_data_error_index_wording_and_bare_message():
    assert str(DataError("bad", row=0, row_is_index=True)) == "index 0: bad"
    assert str(DataError("bad")) == "bad"


# -- type errors in files ---------------------------------------------------------------------------


def test_jsonl_row_17_with_int_contexts_names_file_row_and_field(tmp_path):
    rows = (
        [good_row(i) for i in range(1, 17)]
        + [{**good_row(17), "retrieved_contexts": 5}]
        + [good_row(18)]
    )
    path = write_jsonl(tmp_path / "eval_set.jsonl", rows)
    with pytest.raises(DataError) as info:
        EvaluationDataset.load(path)
    error = info.value
    message = str(error)
    assert "eval_set.jsonl" in message
    assert "row 17" in message
    assert "retrieved_contexts must be a list of strings, got int" in message
    assert error.file == str(path)
    assert error.row == 17
    assert error.field == "retrieved_contexts"


def test_list_containing_an_int_names_the_item(tmp_path):
    path = write_jsonl(
        tmp_path / "d.jsonl", [good_row(1), {**good_row(2), "retrieved_contexts": ["a", "b", 3]}]
    )
    with pytest.raises(DataError) as info:
        EvaluationDataset.from_jsonl(path)
    assert "row 2" in str(info.value)
    assert (
        "retrieved_contexts must be a list of strings, got a list containing int (item 2)"
        in str(info.value)
    )
    assert info.value.field == "retrieved_contexts"


def test_list_containing_a_dict_names_the_item():
    # A dict inside a list of strings is as wrong as an int; the message should say so.
    with pytest.raises(DataError) as info:
        EvaluationDataset.from_list([{"retrieved_contexts": ["a", {"text": "b"}]}])
    assert "dict" in info.value.detail
    assert "item 1" in info.value.detail


def test_rubrics_with_a_non_string_value_names_the_problem():
    with pytest.raises(DataError) as info:
        EvaluationDataset.from_list([{"user_input": "q", "rubrics": {"accuracy": 5}}])
    assert info.value.field == "rubrics"
    # "expected an object ..., got dict" would contradict itself; the message must name the bad value.
    assert "got dict" not in info.value.detail
    assert "accuracy" in info.value.detail or "int" in info.value.detail


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        (
            "user_input",
            42,
            "user_input must be a string (or, for a conversation, a list of messages), got int",
        ),
        ("response", ["a"], "response must be a string, got a list"),
        ("reference", True, "reference must be a string, got bool"),
        (
            "retrieved_context_ids",
            [1.5],
            "retrieved_context_ids must be a list of strings or integers, got a list containing float (item 0)",
        ),
    ],
)
def test_type_errors_describe_expected_and_actual(field, value, expected):
    rows = [{"user_input": "q", field: value}] if field != "user_input" else [{field: value}]
    with pytest.raises(DataError) as info:
        EvaluationDataset.from_list(rows)
    assert info.value.detail == expected
    assert info.value.field == field


def test_null_values_mean_not_set():
    sample = EvaluationDataset.from_list(
        [{"user_input": "q", "response": None, "multi_responses": None}]
    )[0]
    assert sample.to_dict() == {"user_input": "q"}


def test_bad_json_line_names_its_line(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text(
        json.dumps(good_row(1)) + "\n\n" + json.dumps(good_row(2)) + "\n" + '{"user_input": "q",\n',
        encoding="utf-8",
    )
    with pytest.raises(DataError) as info:
        EvaluationDataset.load(path)
    assert info.value.row == 4  # the blank line still counts
    assert "row 4" in str(info.value)
    assert "not valid JSON" in str(info.value)
    assert "broken.jsonl" in str(info.value)


def test_jsonl_line_that_is_not_an_object(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [good_row(1), ["a", "list"]])
    with pytest.raises(DataError) as info:
        EvaluationDataset.load(path)
    assert info.value.row == 2
    assert "must be an object" in str(info.value)


def test_json_file_errors(tmp_path):
    not_a_list = tmp_path / "obj.json"
    not_a_list.write_text(json.dumps({"user_input": "q"}), encoding="utf-8")
    with pytest.raises(DataError, match="must be a list of objects"):
        EvaluationDataset.load(not_a_list)

    broken = tmp_path / "broken.json"
    broken.write_text('[\n{"user_input": "q"},\n{oops}\n]', encoding="utf-8")
    with pytest.raises(DataError, match="not valid JSON") as info:
        EvaluationDataset.load(broken)
    assert "line 3" in str(info.value)

    bad_item = tmp_path / "item.json"
    bad_item.write_text(json.dumps([good_row(1), {"response": 7}]), encoding="utf-8")
    with pytest.raises(DataError) as info:
        EvaluationDataset.load(bad_item)
    assert info.value.row == 2
    assert info.value.field == "response"
    assert "item.json: row 2: response must be a string, got int" in str(info.value)


def test_csv_undecodable_list_cell_names_row_and_column(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text('user_input,retrieved_contexts\nq1,"[""a""]"\nq2,"[a, b"\n', encoding="utf-8")
    with pytest.raises(DataError) as info:
        EvaluationDataset.load(path)
    error = info.value
    assert error.row == 2
    assert error.field == "retrieved_contexts"
    assert "data.csv: row 2: retrieved_contexts" in str(error)
    assert "'[a, b'" in str(error)


def test_csv_cell_that_is_a_plain_string_in_a_list_column(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("user_input,retrieved_contexts\nq1,just some text\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        EvaluationDataset.load(path)
    assert (info.value.row, info.value.field) == (1, "retrieved_contexts")


def test_csv_cell_that_python_cannot_evaluate_is_a_data_error(tmp_path):
    # ast.literal_eval raises TypeError (not ValueError) for "{[1]: 2}": it must still become a DataError.
    path = tmp_path / "data.csv"
    path.write_text('user_input,retrieved_contexts\nq1,"{[1]: 2}"\n', encoding="utf-8")
    with pytest.raises(DataError) as info:
        EvaluationDataset.load(path)
    assert (info.value.row, info.value.field) == (1, "retrieved_contexts")


def test_csv_decoded_cell_of_the_wrong_shape_names_row_and_field(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text('user_input,retrieved_contexts\nq1,"[""a""]"\nq2,"[1, 2]"\n', encoding="utf-8")
    with pytest.raises(DataError) as info:
        EvaluationDataset.load(path)
    assert info.value.row == 2
    assert (
        "retrieved_contexts must be a list of strings, got a list containing int (item 0)"
        in str(info.value)
    )


# -- file-level errors ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["missing.jsonl", "missing.csv", "missing.json"])
def test_missing_file(tmp_path, name):
    path = tmp_path / name
    with pytest.raises(DataError, match="file not found") as info:
        EvaluationDataset.load(path)
    assert info.value.file == str(path)


def test_directory_instead_of_file(tmp_path):
    folder = tmp_path / "data.jsonl"
    folder.mkdir()
    with pytest.raises(DataError, match="directory") as info:
        EvaluationDataset.load(folder)
    assert info.value.file == str(folder)


@pytest.mark.parametrize("name", ["data.txt", "data.parquet", "data"])
def test_unsupported_extension(tmp_path, name):
    path = tmp_path / name
    path.write_text("user_input\nq\n", encoding="utf-8")
    with pytest.raises(DataError, match="unsupported file type") as info:
        EvaluationDataset.load(path)
    assert info.value.file == str(path)


@pytest.mark.parametrize("name", ["latin.jsonl", "latin.csv", "latin.json"])
def test_non_utf8_file(tmp_path, name):
    path = tmp_path / name
    if name.endswith(".csv"):
        text = "user_input,response\ncafé,crème\n"
    elif name.endswith(".jsonl"):
        text = '{"user_input": "café"}\n'
    else:
        text = '[{"user_input": "café"}]'
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(DataError, match="not UTF-8") as info:
        EvaluationDataset.load(path)
    assert info.value.file == str(path)


def test_csv_with_utf8_bom_keeps_its_first_column(tmp_path):
    # Spreadsheet programs write a byte-order mark; the first header must still be recognised.
    path = tmp_path / "excel.csv"
    path.write_bytes("\ufeffuser_input,response\nq,r\n".encode())
    dataset = EvaluationDataset.load(path)
    assert dataset[0].user_input == "q"
    assert dataset[0].metadata is None


# -- mixed kinds and in-memory indexes -------------------------------------------------------------


def test_mixed_single_and_multi_turn_file_names_the_offending_row(tmp_path):
    path = write_jsonl(
        tmp_path / "mixed.jsonl", [good_row(1), good_row(2), {"user_input": CONVERSATION}]
    )
    with pytest.raises(DataError) as info:
        EvaluationDataset.load(path)
    assert info.value.row == 3
    assert "row 3" in str(info.value)
    assert "mixed.jsonl" in str(info.value)
    assert "MultiTurnSample" in str(info.value) and "SingleTurnSample" in str(info.value)


def test_mixed_multi_then_single_from_list_names_index():
    with pytest.raises(DataError) as info:
        EvaluationDataset.from_list([{"user_input": CONVERSATION}, {"user_input": "plain"}])
    assert info.value.row == 1
    assert str(info.value).startswith("index 1: ")
    assert info.value.file is None


def test_from_list_errors_say_index():
    rows = [good_row(0), good_row(1), {**good_row(2), "retrieved_contexts": 5}]
    with pytest.raises(DataError) as info:
        EvaluationDataset.from_list(rows)
    assert str(info.value) == "index 2: retrieved_contexts must be a list of strings, got int"
    assert info.value.row == 2
    assert info.value.file is None


def test_from_list_rejects_a_row_that_is_not_a_mapping():
    with pytest.raises(
        DataError, match="index 1: a row must be an object with named fields, got str"
    ):
        EvaluationDataset.from_list([good_row(0), "user_input"])


def test_constructor_rejects_mixed_samples_and_foreign_objects():
    single = SingleTurnSample(user_input="q")
    multi = MultiTurnSample(user_input=CONVERSATION)
    with pytest.raises(DataError, match="index 1") as info:
        EvaluationDataset([single, multi])
    assert info.value.row == 1
    with pytest.raises(DataError, match="index 0"):
        EvaluationDataset([{"user_input": "q"}])


def test_single_turn_field_in_a_conversation_row_is_named():
    with pytest.raises(DataError) as info:
        EvaluationDataset.from_list([{"user_input": CONVERSATION, "response": "x"}])
    assert info.value.field == "response"
    assert "response is not a field of MultiTurnSample" in str(info.value)


def test_message_order_error_from_rows_names_index_and_field():
    rows = [{"user_input": CONVERSATION}, {"user_input": [{"type": "tool", "content": "x"}]}]
    with pytest.raises(DataError) as info:
        EvaluationDataset.from_list(rows)
    assert info.value.row == 1
    assert info.value.field == "user_input"
    assert "ToolMessage must be preceded by an AIMessage" in str(info.value)


def test_unknown_message_type_names_the_message_position():
    with pytest.raises(DataError) as info:
        EvaluationDataset.from_list(
            [{"user_input": [*CONVERSATION, {"type": "robot", "content": "x"}]}]
        )
    assert "user_input[2]" in str(info.value)
    assert "robot" in str(info.value)


def test_unknown_key_inside_a_message_is_named():
    with pytest.raises(DataError) as info:
        EvaluationDataset.from_list(
            [{"user_input": [{"type": "human", "content": "hi", "role": "user"}]}]
        )
    # user_input *is* a field of MultiTurnSample; the error must point at the stray key.
    assert "role" in info.value.detail
    assert "user_input is not a field" not in info.value.detail


def test_missing_key_inside_a_tool_call_is_named():
    rows = [{"user_input": CONVERSATION, "reference_tool_calls": [{"args": {"q": 1}}]}]
    with pytest.raises(DataError) as info:
        EvaluationDataset.from_list(rows)
    assert info.value.field == "reference_tool_calls"
    # reference_tool_calls was given; what is missing is the call's name.
    assert "reference_tool_calls is required" not in info.value.detail
    assert "name" in info.value.detail


# -- legacy names, column_map, metadata ---------------------------------------------------------


def test_legacy_column_names_are_mapped():
    dataset = EvaluationDataset.from_list(
        [{"question": "q", "answer": "a", "contexts": ["c1", "c2"], "ground_truth": "gt"}]
    )
    assert dataset[0].to_dict() == {
        "user_input": "q",
        "response": "a",
        "retrieved_contexts": ["c1", "c2"],
        "reference": "gt",
    }


def test_legacy_column_names_in_csv(tmp_path):
    path = tmp_path / "legacy.csv"
    path.write_text('question,answer,contexts,ground_truth\nq,a,"[""c1""]",gt\n', encoding="utf-8")
    sample = EvaluationDataset.load(path)[0]
    assert (sample.user_input, sample.response, sample.retrieved_contexts, sample.reference) == (
        "q",
        "a",
        ["c1"],
        "gt",
    )


@pytest.mark.parametrize(
    ("legacy", "modern"),
    [
        ("question", "user_input"),
        ("answer", "response"),
        ("contexts", "retrieved_contexts"),
        ("ground_truth", "reference"),
    ],
)
def test_legacy_and_modern_name_together_clash(legacy, modern):
    value = ["x"] if modern == "retrieved_contexts" else "x"
    with pytest.raises(DataError) as info:
        EvaluationDataset.from_list([{legacy: value, modern: value}])
    assert info.value.field == modern
    assert "map twice" in str(info.value)


def test_column_map_field_to_column_orientation():
    dataset = EvaluationDataset.from_list(
        [{"query": "q", "docs": ["d"], "output": "o"}],
        column_map={"user_input": "query", "retrieved_contexts": "docs", "response": "output"},
    )
    assert dataset[0].to_dict() == {"user_input": "q", "retrieved_contexts": ["d"], "response": "o"}


def test_column_map_column_to_field_orientation():
    dataset = EvaluationDataset.from_list(
        [{"query": "q", "docs": ["d"], "output": "o"}],
        column_map={"query": "user_input", "docs": "retrieved_contexts", "output": "response"},
    )
    assert dataset[0].to_dict() == {"user_input": "q", "retrieved_contexts": ["d"], "response": "o"}


def test_column_map_when_loading_csv(tmp_path):
    path = tmp_path / "custom.csv"
    path.write_text('query,docs,expected\nq,"[""d1"", ""d2""]",e\n', encoding="utf-8")
    dataset = EvaluationDataset.load(
        path,
        column_map={"user_input": "query", "docs": "retrieved_contexts", "reference": "expected"},
    )
    assert dataset[0].to_dict() == {
        "user_input": "q",
        "retrieved_contexts": ["d1", "d2"],
        "reference": "e",
    }


def test_column_map_reads_in_ragas_direction_even_between_field_names():
    """Issue #15, 6: the key is the name Ragas expects, the value the dataset's column, also when
    both are field or legacy names (Ragas' own example: {"contexts": "contexts_v1"})."""
    dataset = EvaluationDataset.from_list(
        [
            {
                "question": "q",
                "contexts_v1": ["c"],
                "reference": "the answer",
                "ground_truth": "gold",
            }
        ],
        column_map={"contexts": "contexts_v1", "answer": "reference"},
    )
    assert dataset[0].to_dict() == {
        "user_input": "q",
        "retrieved_contexts": ["c"],
        "response": "the answer",
        "reference": "gold",
    }
    swapped = EvaluationDataset.from_list(
        [{"user_input": "A", "response": "Q"}],
        column_map={"user_input": "response", "response": "user_input"},
    )
    assert swapped[0].to_dict() == {"user_input": "Q", "response": "A"}


def test_column_map_entry_naming_no_field_is_a_data_error():
    with pytest.raises(DataError) as info:
        EvaluationDataset.from_list([{"query": "q"}], column_map={"query": "prompt"})
    assert info.value.field == "column_map"
    assert "'query'" in str(info.value) and "'prompt'" in str(info.value)


def test_column_map_onto_an_existing_column_clashes():
    with pytest.raises(DataError, match="map twice") as info:
        EvaluationDataset.from_list(
            [{"user_input": "a", "query": "b"}], column_map={"user_input": "query"}
        )
    assert info.value.field == "user_input"


def test_unknown_columns_are_kept_in_metadata():
    dataset = EvaluationDataset.from_list(
        [{"user_input": "q", "id": 7, "source": "wiki", "tags": ["a"], "metadata": {"owner": "me"}}]
    )
    sample = dataset[0]
    assert sample.metadata == {"id": 7, "source": "wiki", "tags": ["a"], "owner": "me"}
    assert sample.get_features() == ["user_input"]


def test_unknown_columns_with_a_non_object_metadata_is_an_error():
    with pytest.raises(DataError) as info:
        EvaluationDataset.from_list([{"user_input": "q", "id": 1, "metadata": "oops"}])
    assert info.value.field == "metadata"


def test_rubric_key_in_a_row_sets_rubrics():
    # SingleTurnSample(rubric=...) is accepted (the spec's doc example); the same key in a row must be too,
    # not be swallowed into metadata.
    row = {"user_input": "q", "rubric": {"accuracy": "Correct"}}
    assert SingleTurnSample(**row).rubrics == {"accuracy": "Correct"}
    sample = EvaluationDataset.from_list([row])[0]
    assert sample.rubrics == {"accuracy": "Correct"}
    assert sample.metadata is None
