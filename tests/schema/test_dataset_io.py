"""EvaluationDataset: sequence behaviour and lossless round trips through every format."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pandas as pd
import pytest

from assay.errors import DataError
from assay.schema import (
    AIMessage,
    EvaluationDataset,
    HumanMessage,
    MultiTurnSample,
    SingleTurnSample,
    ToolCall,
    ToolMessage,
)

TRICKY_TEXT = "He said \"hi\", then left;\nnew line, comma, 'quote'\ttab\r\nCRLF — 你好，世界 🚀"


def single_turn_rows() -> list[dict]:
    return [
        {
            "user_input": "什么是检索增强生成？",
            "retrieved_contexts": ["RAG 结合了检索和生成。", TRICKY_TEXT, "[not, a, list]"],
            "reference_contexts": ["参考上下文"],
            "retrieved_context_ids": ["doc-1", 2],
            "reference_context_ids": [2],
            "response": TRICKY_TEXT,
            "multi_responses": ["a, b", 'c "d"'],
            "reference": "检索 + 生成",
            "rubrics": {"score1_description": "完全错误", "score5_description": 'perfect, "exact"'},
            "persona_name": "Ada",
            "query_style": "formal",
            "query_length": "long",
            "metadata": {"source": "wiki", "nested": [[1, 2], {"k": ["v", None]}], "score": 0.5},
        },
        {
            "user_input": "Second question, with a comma",
            "retrieved_contexts": [],
            "response": "{'looks': 'like a dict'}",
            "reference": "0",
        },
        {"user_input": "Third", "response": "true", "metadata": {"source": "manual"}},
    ]


def multi_turn_rows() -> list[dict]:
    return [
        {
            "user_input": [
                {"type": "human", "content": '订单 3000 在哪里？ "urgent", please'},
                {
                    "type": "ai",
                    "content": "",
                    "tool_calls": [
                        {
                            "name": "track_order",
                            "args": {"order_id": "3000", "opts": {"verbose": True, "n": [1, 2]}},
                        },
                        {"name": "lookup_user", "args": {}},
                    ],
                },
                {"type": "tool", "content": "shipped,\nin transit"},
                {"type": "tool", "content": "user: Ada"},
                {"type": "ai", "content": "It has shipped.", "metadata": {"model": "m1"}},
            ],
            "reference": "Order shipped",
            "reference_tool_calls": [{"name": "track_order", "args": {"order_id": "3000"}}],
            "reference_topics": ["orders", "物流"],
            "rubrics": {"accuracy": "Correct"},
        },
        {
            "user_input": [{"type": "human", "content": "hello"}, {"type": "ai", "content": "hi!"}],
            "reference": "greeting",
        },
    ]


# -- sequence behaviour ---------------------------------------------------------------------------


def test_sequence_protocol_and_kind():
    dataset = EvaluationDataset.from_list(single_turn_rows())
    assert len(dataset) == 3
    assert isinstance(dataset[0], SingleTurnSample)
    assert dataset[-1].user_input == "Third"
    assert [s.user_input for s in dataset][1] == "Second question, with a comma"
    part = dataset[1:]
    assert isinstance(part, EvaluationDataset)
    assert [s.user_input for s in part] == ["Second question, with a comma", "Third"]
    assert dataset.kind == "single_turn"
    assert EvaluationDataset.from_list(multi_turn_rows()).kind == "multi_turn"


def test_features_in_schema_order_and_repr():
    dataset = EvaluationDataset.from_list(
        [{"reference": "r", "user_input": "q"}, {"response": "a", "retrieved_contexts": ["c"]}]
    )
    assert dataset.features() == ["user_input", "retrieved_contexts", "response", "reference"]
    assert repr(dataset) == (
        "EvaluationDataset(features=['user_input', 'retrieved_contexts', 'response', 'reference'], len=2)"
    )


def test_empty_dataset():
    dataset = EvaluationDataset.from_list([])
    assert len(dataset) == 0
    assert dataset.to_list() == []
    assert dataset.features() == []


def test_from_dict_is_from_list():
    assert (
        EvaluationDataset.from_dict(single_turn_rows()).to_list()
        == EvaluationDataset.from_list(single_turn_rows()).to_list()
    )


def test_from_list_builds_multi_turn_samples():
    dataset = EvaluationDataset.from_list(multi_turn_rows())
    first = dataset[0]
    assert isinstance(first, MultiTurnSample)
    assert [type(m) for m in first.user_input] == [
        HumanMessage,
        AIMessage,
        ToolMessage,
        ToolMessage,
        AIMessage,
    ]
    assert first.tool_calls()[0] == ToolCall(
        name="track_order", args={"order_id": "3000", "opts": {"verbose": True, "n": [1, 2]}}
    )


def test_to_list_round_trip_preserves_values():
    rows = single_turn_rows()
    assert EvaluationDataset.from_list(rows).to_list() == rows
    assert EvaluationDataset.from_list(multi_turn_rows()).to_list() == multi_turn_rows()


# -- JSONL and JSON --------------------------------------------------------------------------------


@pytest.mark.parametrize("rows", [single_turn_rows(), multi_turn_rows()], ids=["single", "multi"])
def test_jsonl_round_trip(tmp_path, rows):
    path = tmp_path / "data.jsonl"
    original = EvaluationDataset.from_list(rows)
    original.to_jsonl(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(rows)
    assert [json.loads(line) for line in lines] == rows
    loaded = EvaluationDataset.load(path)
    assert loaded.to_list() == rows
    assert [type(s) for s in loaded] == [type(s) for s in original]
    assert loaded.name == "data"


def test_jsonl_keeps_non_ascii_text_readable(tmp_path):
    path = tmp_path / "zh.jsonl"
    EvaluationDataset.from_list([{"user_input": "你好"}]).to_jsonl(path)
    assert "你好" in path.read_text(encoding="utf-8")


def test_jsonl_skips_blank_lines_and_accepts_crlf(tmp_path):
    path = tmp_path / "crlf.ndjson"
    path.write_bytes(b'{"user_input": "a"}\r\n\r\n{"user_input": "b"}\r\n')
    assert [s.user_input for s in EvaluationDataset.load(path)] == ["a", "b"]


def test_json_file_round_trip(tmp_path):
    path = tmp_path / "data.json"
    path.write_text(json.dumps(single_turn_rows(), ensure_ascii=False, indent=2), encoding="utf-8")
    assert EvaluationDataset.load(path).to_list() == single_turn_rows()


def test_load_extension_is_case_insensitive(tmp_path):
    path = tmp_path / "DATA.JSONL"
    path.write_text('{"user_input": "q"}\n', encoding="utf-8")
    assert EvaluationDataset.load(str(path))[0].user_input == "q"


# -- CSV ---------------------------------------------------------------------------------------------


def test_csv_round_trip_single_turn(tmp_path):
    path = tmp_path / "data.csv"
    EvaluationDataset.from_list(single_turn_rows()).to_csv(path)
    loaded = EvaluationDataset.load(path)
    expected = single_turn_rows()
    expected[1].pop("retrieved_contexts")  # an empty list is written as "[]"...
    loaded_rows = loaded.to_list()
    # ...and read back as an empty list (still "missing" for has())
    assert loaded_rows[1].pop("retrieved_contexts") == []
    assert loaded_rows == expected
    assert loaded[0].retrieved_contexts[1] == TRICKY_TEXT
    assert loaded[0].response == TRICKY_TEXT


def test_csv_round_trip_multi_turn(tmp_path):
    path = tmp_path / "conversations.csv"
    EvaluationDataset.from_list(multi_turn_rows()).to_csv(path)
    loaded = EvaluationDataset.load(path)
    assert loaded.kind == "multi_turn"
    assert loaded.to_list() == multi_turn_rows()
    assert loaded[0].user_input[1].tool_calls[0].args["opts"] == {"verbose": True, "n": [1, 2]}


def test_csv_written_file_is_standard_csv_with_json_cells(tmp_path):
    path = tmp_path / "data.csv"
    EvaluationDataset.from_list(single_turn_rows()).to_csv(path)
    with path.open(encoding="utf-8", newline="") as handle:
        records = list(csv.DictReader(handle))
    assert len(records) == 3
    assert (
        json.loads(records[0]["retrieved_contexts"]) == single_turn_rows()[0]["retrieved_contexts"]
    )
    assert records[0]["response"] == TRICKY_TEXT
    assert records[2]["reference"] == ""


def test_csv_ragas_style_python_reprs_load(tmp_path):
    path = tmp_path / "ragas.csv"
    rows = [
        {
            "user_input": "q",
            "retrieved_contexts": str(["a", "it's b", 'c "quoted"']),
            "retrieved_context_ids": str([1, "two"]),
            "rubrics": str({"score1": "bad", "score2": "good"}),
            "response": "r",
        }
    ]
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert "['a', " in path.read_text(encoding="utf-8")  # Python repr, not JSON
    sample = EvaluationDataset.load(path)[0]
    assert sample.retrieved_contexts == ["a", "it's b", 'c "quoted"']
    assert sample.retrieved_context_ids == [1, "two"]
    assert sample.rubrics == {"score1": "bad", "score2": "good"}


def test_csv_multi_turn_with_python_reprs(tmp_path):
    conversation = [
        {"type": "human", "content": "hi"},
        {"type": "ai", "content": "", "tool_calls": [{"name": "f", "args": {"flag": True}}]},
        {"type": "tool", "content": "done"},
    ]
    path = tmp_path / "mt.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["user_input", "reference_tool_calls"])
        writer.writerow([repr(conversation), repr([{"name": "f", "args": {"flag": True}}])])
    sample = EvaluationDataset.load(path)[0]
    assert isinstance(sample, MultiTurnSample)
    assert sample.to_dict()["user_input"] == conversation
    assert sample.reference_tool_calls == [ToolCall(name="f", args={"flag": True})]


def test_csv_empty_cells_mean_not_set_and_extra_columns_go_to_metadata(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text(
        "user_input,response,reference,source\nq1,,gold,wiki\nq2,r2,,\n", encoding="utf-8"
    )
    first, second = EvaluationDataset.load(path)
    assert first.to_dict() == {
        "user_input": "q1",
        "reference": "gold",
        "metadata": {"source": "wiki"},
    }
    assert second.to_dict() == {"user_input": "q2", "response": "r2", "metadata": {"source": ""}}


def test_csv_text_field_that_looks_like_a_list_stays_text(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text('user_input,response,reference\nq,"[1, 2]","{""a"": 1}"\n', encoding="utf-8")
    sample = EvaluationDataset.load(path)[0]
    assert sample.response == "[1, 2]"
    assert sample.reference == '{"a": 1}'


def test_csv_round_trip_of_a_question_starting_with_a_bracket(tmp_path):
    # A single-turn question is text; one that happens to begin with "[" must survive a CSV round trip.
    rows = [
        {"user_input": "[Draft] Summarise the memo", "response": "ok"},
        {"user_input": "[1, 2] plus 3?", "response": "x"},
    ]
    path = tmp_path / "brackets.csv"
    EvaluationDataset.from_list(rows).to_csv(path)
    loaded = EvaluationDataset.load(path)
    assert loaded.kind == "single_turn"
    assert loaded.to_list() == rows


# -- pandas ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rows", [single_turn_rows(), multi_turn_rows()], ids=["single", "multi"])
def test_pandas_round_trip(rows):
    frame = EvaluationDataset.from_list(rows).to_pandas()
    assert isinstance(frame, pd.DataFrame)
    assert len(frame) == len(rows)
    assert EvaluationDataset.from_pandas(frame).to_list() == rows


def test_to_pandas_columns_and_missing_cells():
    frame = EvaluationDataset.from_list(single_turn_rows()).to_pandas()
    assert set(frame.columns) == set(single_turn_rows()[0])
    assert frame.loc[0, "retrieved_contexts"] == single_turn_rows()[0]["retrieved_contexts"]
    assert pd.isna(frame.loc[2, "reference_contexts"])


def test_from_pandas_nan_cells_mean_not_set():
    frame = pd.DataFrame(
        {
            "question": ["q1", "q2", "q3"],
            "answer": ["a1", np.nan, None],
            "contexts": [["c1"], None, ["c3"]],
            "score": [1.0, float("nan"), 3.0],
        }
    )
    samples = EvaluationDataset.from_pandas(frame)
    assert samples[0].to_dict() == {
        "user_input": "q1",
        "response": "a1",
        "retrieved_contexts": ["c1"],
        "metadata": {"score": 1.0},
    }
    assert samples[1].to_dict() == {"user_input": "q2"}
    assert samples[2].to_dict() == {
        "user_input": "q3",
        "retrieved_contexts": ["c3"],
        "metadata": {"score": 3.0},
    }
    assert not samples[1].has("response")


def test_from_pandas_accepts_numpy_arrays_and_column_map():
    frame = pd.DataFrame(
        {"query": ["q"], "docs": [np.array(["d1", "d2"], dtype=object)], "row_id": [np.int64(4)]}
    )
    sample = EvaluationDataset.from_pandas(
        frame, column_map={"query": "user_input", "retrieved_contexts": "docs"}
    )[0]
    assert sample.retrieved_contexts == ["d1", "d2"]
    assert sample.metadata == {"row_id": 4}
    assert type(sample.metadata["row_id"]) is int


def test_from_pandas_errors_name_the_index():
    frame = pd.DataFrame({"user_input": ["q1", "q2"], "response": ["ok", 5]})
    with pytest.raises(DataError) as info:
        EvaluationDataset.from_pandas(frame)
    assert str(info.value) == "index 1: response must be a string, got int"


# -- Hugging Face datasets ----------------------------------------------------------------------------


def test_hf_round_trip_single_turn():
    rows = [
        {
            "user_input": "什么是 RAG？",
            "retrieved_contexts": ["检索, 增强", TRICKY_TEXT],
            "response": TRICKY_TEXT,
            "reference": "gold",
            "rubrics": {"score1": "bad", "score5": "good"},
        },
        {
            "user_input": "second",
            "retrieved_contexts": ["x"],
            "response": "y",
            "reference": "z",
            "rubrics": {"score1": "b", "score5": "g"},
        },
    ]
    hf = EvaluationDataset.from_list(rows).to_hf_dataset()
    import datasets

    assert isinstance(hf, datasets.Dataset)
    assert hf.num_rows == 2
    assert hf[0]["user_input"] == "什么是 RAG？"
    assert EvaluationDataset.from_hf_dataset(hf).to_list() == rows


def test_hf_round_trip_with_unset_fields():
    rows = [{"user_input": "q1", "response": "a"}, {"user_input": "q2", "reference": "r"}]
    hf = EvaluationDataset.from_list(rows).to_hf_dataset()
    assert EvaluationDataset.from_hf_dataset(hf).to_list() == rows


def test_hf_from_legacy_columns():
    import datasets

    hf = datasets.Dataset.from_dict(
        {"question": ["q"], "answer": ["a"], "contexts": [["c"]], "ground_truth": ["g"]}
    )
    assert EvaluationDataset.from_hf_dataset(hf).to_list() == [
        {"user_input": "q", "response": "a", "retrieved_contexts": ["c"], "reference": "g"}
    ]


def test_hf_round_trip_with_rubrics_of_different_keys():
    # Arrow stores dicts as structs with the union of keys; missing keys come back as None and must be dropped.
    rows = [
        {"user_input": "q1", "rubrics": {"accuracy": "Correct"}},
        {"user_input": "q2", "rubrics": {"tone": "Polite"}},
    ]
    hf = EvaluationDataset.from_list(rows).to_hf_dataset()
    assert EvaluationDataset.from_hf_dataset(hf).to_list() == rows


def test_hf_round_trip_multi_turn():
    rows = multi_turn_rows()
    hf = EvaluationDataset.from_list(rows).to_hf_dataset()
    assert EvaluationDataset.from_hf_dataset(hf).to_list() == rows


# -- NaN guard on the helper used by from_pandas -----------------------------------------------------


def test_nan_is_never_a_value_after_from_pandas():
    frame = pd.DataFrame({"user_input": ["q"], "reference": [math.nan]})
    sample = EvaluationDataset.from_pandas(frame)[0]
    assert sample.reference is None
    assert sample.to_dict() == {"user_input": "q"}
