"""Typed trace scores against the real server (SQLite and PostgreSQL): a number, a boolean or a
categorical label, each stored and read as itself (the API, conditions, the web UI); bad values
are a 422 naming the field, never a 500; the batch route is all or nothing and names the index
and field of the first problem; the SDK's `add_scores` and `upload_result` use it."""

from __future__ import annotations

import json
import uuid

import pytest
from sqlalchemy import select

import assay.platform as ragmetrics
from assay.platform import ValidationFailed, add_scores
from assay.platform.server.storage import models
from tests.platform.ui.conftest import make_user, sign_in


def new_trace(api, output: str = "Paris.") -> str:
    trace_id = str(uuid.uuid4())
    sent = api.post("/traces", json={"traces": [{"id": trace_id, "input": "q", "output": output}]})
    assert sent.status_code == 202, sent.text
    return trace_id


def stored(live, trace_ids: list[str]) -> list[models.TraceScore]:
    with live.app.state.assay.transaction() as session:
        return list(
            session.scalars(
                select(models.TraceScore)
                .where(models.TraceScore.trace_id.in_(trace_ids))
                .order_by(models.TraceScore.id)
            )
        )


def ids_matching(api, condition: str) -> set[str]:
    answer = api.get("/traces", params={"condition": condition})
    assert answer.status_code == 200, (condition, answer.text)
    return {t["id"] for t in answer.json()["items"]}


def test_numbers_booleans_and_labels_are_stored_and_read_as_themselves(live):
    key = live.key()
    with live.client(key) as api:
        a, b = new_trace(api), new_trace(api, "Rome.")
        for trace_id, criterion, value in (
            (a, "Quality", 0.75),
            (a, "Helpful", True),
            (a, "Tone", "friendly"),
            (b, "Quality", 2),
            (b, "Helpful", False),
            (b, "Tone", "curt"),
        ):
            answer = api.post(
                f"/traces/{trace_id}/scores",
                json={"criterion": criterion, "value": value, "reason": "by hand"},
            )
            assert answer.status_code == 201, answer.text
        assert answer.json()["label"] == "curt" and answer.json()["value"] is None

        scores = api.get(f"/traces/{a}").json()["scores"]
        assert scores["Quality"]["value"] == 0.75 and scores["Quality"]["label"] is None
        assert scores["Helpful"]["value"] == 1.0 and scores["Helpful"]["outcome"]["value"] is True
        assert scores["Tone"]["value"] is None and scores["Tone"]["label"] == "friendly"
        assert scores["Tone"]["outcome"] == {
            "status": "ok",
            "value": "friendly",
            "reason": "by hand",
        }
        rows = {(r.trace_id, r.criterion): r for r in stored(live, [a, b])}
        assert rows[(b, "Tone")].label == "curt" and rows[(b, "Tone")].value is None
        assert rows[(b, "Helpful")].value == 0.0 and rows[(b, "Helpful")].label is None
        assert rows[(b, "Quality")].value == 2.0

        # conditions read each kind as itself; a label is never a number
        assert ids_matching(api, "score_label.Tone = 'friendly'") == {a}
        assert ids_matching(api, "score_label.Tone IN ('curt', 'rude')") == {b}
        assert ids_matching(api, "score_label.Tone LIKE 'fr%'") == {a}
        assert ids_matching(api, "score.Tone IS NULL AND score.Quality > 1") == {b}
        assert ids_matching(api, "score.Helpful = 1") == {a}
        assert ids_matching(api, "score_label.Quality IS NULL") == {a, b}
        # the latest score decides: a number after a label leaves no label
        api.post(f"/traces/{a}/scores", json={"criterion": "Tone", "value": 3})
        assert ids_matching(api, "score_label.Tone = 'friendly'") == set()
        assert ids_matching(api, "score.Tone = 3") == {a}


def test_the_web_ui_shows_labels_and_booleans(live):
    user = make_user(live)
    with user.api() as api:
        trace_id = new_trace(api)
        api.post(f"/traces/{trace_id}/scores", json={"criterion": "Tone", "value": "friendly"})
        api.post(f"/traces/{trace_id}/scores", json={"criterion": "Helpful", "value": False})
        api.post(
            f"/traces/{trace_id}/scores",
            json={"criterion": "Judge", "status": "error", "reason": "Timeout: no answer"},
        )
    client = sign_in(user)
    detail = client.get(f"{user.base}/traces/{trace_id}")
    assert detail.status_code == 200
    table = detail.text.split('id="scores"')[1].split("</table>")[0]
    assert "<td>friendly</td>" in table and "<td>false</td>" in table
    assert "Timeout: no answer" in table
    listing = client.get(f"{user.base}/traces").text
    assert "Tone friendly" in listing and "Helpful false" in listing and "Judge error" in listing


BAD = [
    ({"criterion": "c", "value": ""}, "value", "non-empty"),
    ({"criterion": "c", "value": "   "}, "value", "non-empty"),
    ({"criterion": "c", "value": "x" * 201}, "value", "at most 200 characters"),
    ({"criterion": "c", "value": {"a": 1}}, "value", "not an object"),
    ({"criterion": "c", "value": [1, 2]}, "value", "not a list"),
    ({"criterion": "c", "value": None}, "value", "needs a value"),
    ({"criterion": "c"}, "value", "needs a value"),
    ({"criterion": "c", "value": 1e16}, "value", "between"),
    ({"criterion": "c", "value": "a\x00b"}, "value", "NUL"),
    ({"criterion": "c", "status": "skipped", "value": 1}, "value", "has no value"),
    ({"criterion": "", "value": 1}, "criterion", ""),
    ({"criterion": "c", "value": 1, "source": "s" * 901}, "source", "900"),
    ({"criterion": "c", "value": 1, "status": "fine"}, "status", ""),
]


@pytest.mark.parametrize(("body", "field", "words"), BAD)
def test_a_bad_score_is_a_422_naming_its_field(live, body, field, words):
    with live.client(live.key()) as api:
        trace_id = new_trace(api)
        answer = api.post(f"/traces/{trace_id}/scores", json=body)
        assert answer.status_code == 422, answer.text
        error = answer.json()["error"]
        assert error["field"] == field and words in error["message"], error
        batch = api.post("/traces/scores", json={"scores": [{"trace_id": trace_id, **body}]})
        assert batch.status_code == 422, batch.text
        assert batch.json()["error"]["field"] == f"scores[0].{field}"
        assert stored(live, [trace_id]) == []


@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity", "1e400", "1" + "0" * 400])
def test_a_non_finite_number_is_a_422(live, raw):
    with live.client(live.key()) as api:
        trace_id = new_trace(api)
        answer = api.post(
            f"/traces/{trace_id}/scores",
            content='{"criterion": "c", "value": ' + raw + "}",
            headers={"Content-Type": "application/json"},
        )
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["field"] == "value"
        assert "finite" in answer.json()["error"]["message"]
        assert stored(live, [trace_id]) == []


def test_a_batch_is_all_or_nothing_and_names_the_index_and_field(live):
    with live.client(live.key()) as api:
        a, b = new_trace(api), new_trace(api)
        good = [
            {"trace_id": a, "criterion": "Quality", "value": 0.5},
            {"trace_id": b, "criterion": "Tone", "value": "curt", "source": "nightly"},
            {"trace_id": b, "criterion": "Judge", "status": "skipped", "reason": "no answer"},
        ]
        bad_value = [*good, {"trace_id": a, "criterion": "Tone", "value": ""}]
        answer = api.post("/traces/scores", json={"scores": bad_value})
        assert answer.status_code == 422
        assert answer.json()["error"]["field"] == "scores[3].value"
        assert (
            "scores[3].value: a label must be a non-empty string"
            in (answer.json()["error"]["message"])
        )
        unknown = str(uuid.uuid4())
        elsewhere = [*good[:1], {"trace_id": unknown, "criterion": "Quality", "value": 1}]
        answer = api.post("/traces/scores", json={"scores": elsewhere})
        assert answer.status_code == 422
        assert answer.json()["error"]["field"] == "scores[1].trace_id"
        assert unknown in answer.json()["error"]["message"]
        not_uuid = api.post(
            "/traces/scores", json={"scores": [{**good[0], "trace_id": "nope"}]}
        ).json()["error"]
        assert not_uuid["field"] == "scores[0].trace_id"
        too_many = api.post("/traces/scores", json={"scores": [good[0]] * 1001})
        assert too_many.status_code == 422 and too_many.json()["error"]["field"] == "scores"
        empty = api.post("/traces/scores", json={"scores": []})
        assert empty.status_code == 422 and empty.json()["error"]["field"] == "scores"
        assert stored(live, [a, b]) == []  # nothing half-written

        answer = api.post("/traces/scores", json={"scores": good})
        assert answer.status_code == 201 and answer.json() == {"stored": 3}
        rows = stored(live, [a, b])
        assert [(r.trace_id, r.criterion, r.value, r.label) for r in rows] == [
            (a, "Quality", 0.5, None),
            (b, "Tone", None, "curt"),
            (b, "Judge", None, None),
        ]
        assert rows[1].source.endswith(":nightly") and rows[1].source.startswith("key:")
        assert rows[2].outcome == {"status": "skipped", "value": None, "reason": "no answer"}


def test_another_projects_trace_cannot_be_scored_in_a_batch(live):
    with live.client(live.key()) as theirs, live.client(live.key()) as mine:
        their_trace = new_trace(theirs)
        answer = mine.post(
            "/traces/scores",
            json={"scores": [{"trace_id": their_trace, "criterion": "c", "value": 1}]},
        )
        assert answer.status_code == 422
        assert answer.json()["error"]["field"] == "scores[0].trace_id"
        assert stored(live, [their_trace]) == []


def test_the_sdk_adds_many_scores_at_once(live):
    key = live.key()
    assert ragmetrics.login(key, base_url=live.base_url) is True
    with live.client(key) as api:
        a, b = new_trace(api), new_trace(api)
    assert (
        add_scores(
            [
                {"trace_id": a, "criterion": "Helpful", "value": True},
                {"trace_id": b, "criterion": "Tone", "value": "friendly", "reason": "warm"},
            ]
        )
        == 2
    )
    trace = ragmetrics.Trace.download(id=b)
    assert trace.scores["Tone"]["label"] == "friendly"
    with pytest.raises(ValidationFailed) as caught:
        add_scores(
            [
                {"trace_id": a, "criterion": "Quality", "value": 1},
                {"trace_id": a, "criterion": "Quality", "value": float("nan")},
            ]
        )
    assert caught.value.field == "scores[1].value" and "finite" in str(caught.value)
    with pytest.raises(ValidationFailed, match="over the limit of 1000"):
        add_scores([{"trace_id": a, "criterion": "Quality", "value": 1}] * 1001)
    with pytest.raises(ValidationFailed, match="at least one"):
        add_scores([])
    assert [(r.criterion, r.value) for r in stored(live, [a])] == [("Helpful", 1.0)]
    json.dumps(trace.scores, allow_nan=False)
