"""Labels exported from the platform's review queues, read by `load_labels`: the export a real
server writes (uvicorn on 127.0.0.1 over SQLite), saved as the API's page or as the list
`ReviewQueue.export()` returns (.json and .jsonl), and the edge cases of the format."""

from __future__ import annotations

import json
import uuid

import pytest

from assay.alignment import from_review_export, load_labels
from assay.errors import DataError


@pytest.fixture
def live(tmp_path, monkeypatch):
    from tests.platform.conftest import start_server, stop_server

    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "home" / "cache"))
    for name in ("ASSAY_SECRET_KEY", "ASSAY_DB_URL", "ASSAY_API_KEY", "ASSAY_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    server = start_server("sqlite", f"sqlite:///{tmp_path / 'assay.sqlite'}")
    try:
        yield server
    finally:
        stop_server(server)


def trace(output: str, contexts: list[str]) -> dict:
    return {"id": str(uuid.uuid4()), "input": "Where is the meeting?", "output": output} | {
        "contexts": contexts,
        "metadata": {},
        "tags": [],
    }


def test_the_export_a_real_server_writes_loads_as_labels(live, tmp_path):
    traces = [
        trace("The meeting is in Paris.", ["The meeting is in Paris."]),
        trace("The meeting is in Rome.", ["The meeting is in Paris."]),
        trace("It is in Paris, on Monday.", ["The meeting is in Paris on Monday."]),
    ]
    with live.client(live.key()) as api:
        made = api.post("/review-queues", json={"name": "Faith", "criteria": ["faithful"]})
        assert made.status_code == 201, made.text
        assert api.post("/traces", json={"traces": traces}).status_code == 202
        score = {"criterion": "faithful", "value": 0.2, "source": "judge:test"}
        api.post(f"/traces/{traces[1]['id']}/scores", json=score)
        for item, value, comment in zip(
            traces, ["yes", "no", "yes"], ["", "Rome is not in the source", ""], strict=True
        ):
            label = {"criterion": "faithful", "value": value, "queue": "Faith", "comment": comment}
            answer = api.post(f"/traces/{item['id']}/labels", json=label)
            assert answer.status_code == 201, answer.text
        page = api.get("/review-queues/Faith/export").json()
    (tmp_path / "page.json").write_text(json.dumps(page))
    (tmp_path / "rows.json").write_text(json.dumps(page["rows"]))  # ReviewQueue.export()
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in page["rows"]))
    loaded = [load_labels(tmp_path / name) for name in ("page.json", "rows.json", "rows.jsonl")]
    for labels in loaded:
        by_trace = {e.group: e for e in labels}  # a trace is a group
        assert set(by_trace) == {t["id"] for t in traces} and len(labels) == 3
        assert [by_trace[t["id"]].label for t in traces] == ["yes", "no", "yes"]
        second = by_trace[traces[1]["id"]]
        assert second.fields == {
            "user_input": "Where is the meeting?",
            "response": "The meeting is in Rome.",
            "retrieved_contexts": ["The meeting is in Paris."],
        }
        assert second.judge_value == 0.2 and second.author.startswith("key:")
        assert by_trace[traces[0]["id"]].judge_value is None
    train, test = loaded[0].train_test_split(test_size=0.34, seed=1)
    assert {e.group for e in train}.isdisjoint({e.group for e in test})


def row(**changes):
    base = {
        "trace_id": "t1",
        "input": "Q?",
        "output": "A.",
        "contexts": ["A."],
        "criterion": "c",
        "label": 1,
        "label_author": "user:ann",
        "score": 0.7,
        "score_status": "ok",
        "score_source": "review_judge",
    }
    return base | changes


def test_a_partial_page_is_read_and_said_to_be_partial():
    data = from_review_export({"rows": [row()], "next_cursor": "abc"})
    assert len(data) == 1 and "next_cursor 'abc'" in data.notes[0]
    assert not from_review_export({"rows": [row()], "next_cursor": None}).notes


def test_scores_that_failed_are_not_judge_values_and_comments_are_reasons():
    data = from_review_export(
        [
            row(),
            row(trace_id="t2", score=None, score_status="error"),
            row(trace_id="t3", label_comment="the date is wrong"),
        ]
    )
    assert [e.judge_value for e in data] == [0.7, None, 0.7]
    assert data[0].judge_reason is None  # score_source says who scored, not why
    assert data[2].reason == "the date is wrong"


def test_an_empty_output_names_the_row_and_field(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row()) + "\n" + json.dumps(row(trace_id="t2", output="")) + "\n")
    with pytest.raises(DataError) as caught:
        load_labels(path)
    assert caught.value.field == "output" and caught.value.row == 2
    assert str(path) in str(caught.value)
    with pytest.raises(DataError, match="index 1"):
        from_review_export([row(), row(trace_id="t2", output=None)])


def test_an_empty_input_is_left_out_not_kept_as_an_empty_question():
    [example] = from_review_export([row(input="")])
    assert "user_input" not in example.fields


def test_a_judge_label_score_comes_along_as_the_judge_value():
    data = from_review_export(
        [
            row(score=None, score_label="relevant"),
            row(trace_id="t2", score=None, score_label="off-topic", score_status="error"),
        ]
    )
    assert [e.judge_value for e in data] == ["relevant", None]
