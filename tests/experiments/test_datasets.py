"""Dataset: every backend gives back exactly what was saved, nested values and unicode included."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from assay import Dataset
from assay.errors import DataError, UsageError
from assay.schema.messages import HumanMessage

ROWS = [
    {
        "id": 1,
        "query": "Wie hoch ist der Eiffelturm? 埃菲尔铁塔 🗼",
        "metadata": {
            "topic": "geo",
            "tags": ["paris", "tower"],
            "depth": {"a": [1, 2.5, None, True]},
        },
        "contexts": ["line one\nline two", 'tab\there, comma, "quotes"'],
        "score": 0.75,
        "ok": False,
        "missing": None,
    },
    {
        # strings that look like other JSON values must stay strings
        "id": 2,
        "query": "42",
        "metadata": {},
        "contexts": [],
        "score": -3,
        "ok": True,
        "missing": "",
    },
    {
        "id": "three",
        "query": "true",
        "metadata": {"json_text": '{"a": 1}', "list_text": "[1, 2]", "null_text": "null"},
        "contexts": ["\u2028 separator and \x85 next-line inside"],
        "score": 1e-12,
        "ok": True,
        "missing": "  spaced  ",
    },
]

BACKENDS = ["local/csv", "local/jsonl", "inmemory", "sqlite"]
EXTENSIONS = {"local/csv": "csv", "local/jsonl": "jsonl", "sqlite": "sqlite"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_round_trip_keeps_nested_values_and_unicode(tmp_path, backend):
    dataset = Dataset("qa_v1.2", backend=backend, root_dir=tmp_path)
    for row in ROWS:
        dataset.append(row)
    dataset.save()
    if backend in EXTENSIONS:
        assert (tmp_path / "datasets" / f"qa_v1.2.{EXTENSIONS[backend]}").is_file()
    loaded = Dataset.load(name="qa_v1.2", backend=backend, root_dir=tmp_path)
    assert list(loaded) == ROWS
    assert [type(row["query"]) for row in loaded] == [str, str, str]
    assert len(loaded) == 3 and loaded[2]["id"] == "three" and loaded[-1] == ROWS[-1]
    assert loaded[0:2] == ROWS[0:2]
    assert loaded.columns == list(ROWS[0])
    assert Dataset.list_names(backend=backend, root_dir=tmp_path) == ["qa_v1.2"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_save_replaces_the_previous_version(tmp_path, backend):
    first = Dataset("d", backend=backend, root_dir=tmp_path, data=[{"a": 1}, {"a": 2}])
    first.save()
    Dataset("d", backend=backend, root_dir=tmp_path, data=[{"a": 3}]).save()
    assert list(Dataset.load("d", backend=backend, root_dir=tmp_path)) == [{"a": 3}]


def test_inmemory_keeps_objects_and_copies_on_save(tmp_path):
    message = HumanMessage(content="hi")
    dataset = Dataset(
        "mem", backend="inmemory", root_dir=tmp_path, data=[{"chat": [message], "n": {"k": 1}}]
    )
    dataset.save()
    dataset[0]["n"]["k"] = 99  # a later change does not reach the saved copy
    loaded = Dataset.load("mem", backend="inmemory", root_dir=tmp_path)
    assert loaded[0]["chat"] == [message] and loaded[0]["n"] == {"k": 1}
    assert not (tmp_path / "datasets").exists()


def test_objects_are_stored_as_json_in_file_backends(tmp_path):
    dataset = Dataset(
        "objects",
        backend="local/jsonl",
        root_dir=tmp_path,
        data=[{"chat": [HumanMessage(content="hi")], "pair": (1, 2), "path": Path("a/b")}],
    )
    dataset.save()
    row = Dataset.load("objects", backend="local/jsonl", root_dir=tmp_path)[0]
    assert row["chat"][0]["content"] == "hi" and row["pair"] == [1, 2] and row["path"] == "a/b"


def test_a_value_that_cannot_be_stored_names_row_and_column(tmp_path):
    dataset = Dataset(
        "bad", backend="local/csv", root_dir=tmp_path, data=[{"a": 1}, {"a": 2, "handle": object()}]
    )
    with pytest.raises(DataError) as caught:
        dataset.save()
    assert (
        "index 1" in str(caught.value)
        and "handle" in str(caught.value)
        and "object" in str(caught.value)
    )
    assert not (tmp_path / "datasets" / "bad.csv").exists()  # nothing half-written


def test_csv_file_is_readable_by_people(tmp_path):
    Dataset(
        "plain", root_dir=tmp_path, data=[{"q": "hello", "n": 3, "tags": ["x"], "empty": None}]
    ).save()
    text = (tmp_path / "datasets" / "plain.csv").read_text(encoding="utf-8")
    assert text.splitlines() == ["q,n,tags,empty", 'hello,3,"[""x""]",']


def test_number_like_text_is_written_plainly_and_still_reads_back_as_text(tmp_path):
    import pandas

    rows = [{"answer": "4", "n": 4, "flag": "true", "blank": ""}, {"answer": "five", "n": 5}]
    Dataset("plain_numbers", root_dir=tmp_path, data=rows).save()
    path = tmp_path / "datasets" / "plain_numbers.csv"

    assert path.read_text(encoding="utf-8").splitlines() == [
        "answer,n,flag,blank",
        "4,4,true,",
        "five,5,,",
    ]
    assert list(pandas.read_csv(path)["answer"]) == ["4", "five"]  # no literal quotes
    loaded = list(Dataset.load("plain_numbers", root_dir=tmp_path))
    assert loaded[0] == {"answer": "4", "n": 4, "flag": "true", "blank": ""}
    assert loaded[1] == {"answer": "five", "n": 5, "flag": None, "blank": None}


def test_a_csv_edited_after_saving_is_read_by_its_cells_alone(tmp_path, caplog):
    Dataset("edited", root_dir=tmp_path, data=[{"answer": "4"}, {"answer": "x"}]).save()
    path = tmp_path / "datasets" / "edited.csv"
    path.write_text("answer\n4\n7\n", encoding="utf-8")  # by hand: the sidecar no longer fits

    with caplog.at_level("WARNING"):
        loaded = list(Dataset.load("edited", root_dir=tmp_path))

    assert loaded == [{"answer": 4}, {"answer": 7}]
    assert "changed after" in caplog.text


def test_the_sidecar_goes_when_nothing_needs_it(tmp_path):
    Dataset("side", root_dir=tmp_path, data=[{"answer": "4"}]).save()
    sidecar = tmp_path / "datasets" / "side.csv.types.json"
    assert sidecar.is_file()
    Dataset("side", root_dir=tmp_path, data=[{"answer": "four"}]).save()
    assert not sidecar.exists()
    assert Dataset.list_names(root_dir=tmp_path) == ["side"]  # the sidecar is no dataset


def test_csv_written_by_hand_is_read(tmp_path):
    folder = tmp_path / "datasets"
    folder.mkdir()
    (folder / "hand.csv").write_text(
        'question,grading_notes,n\nWhat?,"- point one\n- point two",7\n', encoding="utf-8"
    )
    rows = list(Dataset.load("hand", root_dir=tmp_path))
    assert rows == [{"question": "What?", "grading_notes": "- point one\n- point two", "n": 7}]


def test_sqlite_is_a_real_database_queryable_with_json_functions(tmp_path):
    Dataset("sql", backend="sqlite", root_dir=tmp_path, data=ROWS).save()
    with sqlite3.connect(tmp_path / "datasets" / "sql.sqlite") as db:
        topics = db.execute(
            "SELECT json_extract(data, '$.metadata.topic') FROM rows ORDER BY position"
        ).fetchall()
        version = db.execute("SELECT value FROM info WHERE key = 'format_version'").fetchone()
    assert topics == [("geo",), (None,), (None,)]
    assert version == ("1",)


def test_pandas_round_trip(tmp_path):
    import pandas as pd

    frame = pd.DataFrame(
        {"q": ["a", "b"], "n": [1, 2], "x": [0.5, float("nan")], "meta": [{"k": [1]}, {"k": []}]}
    )
    dataset = Dataset.from_pandas(frame, name="frame", backend="local/jsonl", root_dir=tmp_path)
    assert dataset[1] == {"q": "b", "n": 2, "x": None, "meta": {"k": []}}
    assert type(dataset[0]["n"]) is int
    dataset.save()
    back = Dataset.load("frame", backend="local/jsonl", root_dir=tmp_path).to_pandas()
    assert list(back.columns) == ["q", "n", "x", "meta"]
    assert back["meta"].tolist() == [{"k": [1]}, {"k": []}]
    assert Dataset.from_pandas(frame, name="m").backend == "inmemory"


def test_unknown_backend_lists_the_known_ones(tmp_path):
    with pytest.raises(UsageError) as caught:
        Dataset("d", backend="gdrive", root_dir=tmp_path)
    message = str(caught.value)
    assert "unknown dataset backend 'gdrive'" in message
    for name in BACKENDS:
        assert name in message


def test_loading_a_missing_dataset_says_where_it_looked(tmp_path):
    Dataset("present", root_dir=tmp_path, data=[{"a": 1}]).save()
    with pytest.raises(UsageError) as caught:
        Dataset.load("absent", root_dir=tmp_path)
    assert "absent.csv" in str(caught.value) and "present" in str(caught.value)


@pytest.mark.parametrize("name", ["", "a/b", "..", "x\\y", 3])
def test_names_must_be_file_names(tmp_path, name):
    with pytest.raises(UsageError):
        Dataset(name, root_dir=tmp_path)


def test_rows_must_be_dicts_with_string_keys(tmp_path):
    dataset = Dataset("d", root_dir=tmp_path)
    with pytest.raises(UsageError):
        dataset.append(["not", "a", "dict"])
    with pytest.raises(UsageError):
        dataset.append({1: "x"})
    assert repr(dataset) == "Dataset(name='d', backend='local/csv', len=0)"


def test_malformed_jsonl_names_file_and_line(tmp_path):
    folder = tmp_path / "datasets"
    folder.mkdir()
    (folder / "broken.jsonl").write_text(json.dumps({"a": 1}) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        Dataset.load("broken", backend="local/jsonl", root_dir=tmp_path)
    assert "broken.jsonl" in str(caught.value) and "row 2" in str(caught.value)
