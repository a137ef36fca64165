"""Review queues of whole sessions (#43 §2) against the real server on SQLite and PostgreSQL,
judged by the loopback fake OpenAI server: the condition selects traces and the queue holds
their sessions, one item each; the judge scores a saved criterion on the last answer with the
earlier turns as the question and an agent criterion on the whole conversation, into the
session's scores; labels land on the session with the content they were given on, also after
the session grows; the export has the trace export's columns and a session_id; bad requests are
4xx naming the field. The SDK's `ReviewQueue(scope="session")` does the same round trip."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from assay.platform.server.storage.review import SCORE_FIELDS
from tests.platform.test_online_evaluators import CORRECT
from tests.platform.test_session_evaluators import GOAL, judge, turn


def wait_judged(api: Any, session_id: str, queue_id: int, count: int) -> dict[str, Any]:
    """The session's JSON once `count` scores of the queue's judge are on it."""
    deadline = time.monotonic() + 120
    while True:
        body = api.get(f"/sessions/{session_id}").json()
        mine = [s for s in body["score_history"] if s["source"].startswith("judge:")]
        if len(mine) >= count:
            return body
        assert time.monotonic() < deadline, body["score_history"]
        time.sleep(0.1)


def queue_scores(live: Any, queue_id: int) -> list[Any]:
    from sqlalchemy import select

    from assay.platform.server.storage import models

    S = models.SessionScore
    with live.app.state.assay.transaction() as session:
        return list(session.scalars(select(S).where(S.queue_id == queue_id).order_by(S.id)))


@pytest.fixture
def api(live: Any, fake: Any) -> Any:
    fake.default = judge()
    with live.client(live.key()) as client:
        assert client.post("/criteria", json=CORRECT).status_code == 201
        yield client


def chats_queue(fake: Any, **fields: Any) -> dict[str, Any]:
    return {
        "name": "Chats",
        "condition": "metadata.env = 'prod'",
        "criteria": ["Correct", GOAL],
        "judge_model": fake.model_string(f"judge-{uuid.uuid4().hex[:8]}"),
        "scope": "session",
    } | fields


def test_a_session_queue_holds_judges_labels_and_exports_whole_sessions(live, fake, api):
    chat, mixed, other = (f"{n}-{uuid.uuid4().hex[:8]}" for n in ("chat", "mixed", "dev"))
    first = [
        turn(chat, "What is the capital of France?", "Paris."),
        turn(chat, "And of Italy?", "Rome."),
    ]
    dev_turn = turn(mixed, "Hello?", "Hi.")
    dev_turn["metadata"]["env"] = "dev"
    lone = turn("x", "No session", "None.")
    del lone["metadata"]["session_id"]
    stored = [
        *first,
        dev_turn,
        turn(mixed, "Capital of Spain?", "Madrid."),
        {**turn(other, "Q", "A."), "metadata": {"env": "dev", "session_id": other}},
        lone,
    ]
    assert api.post("/traces", json={"traces": stored[:3]}).status_code == 202

    made = api.post("/review-queues", json=chats_queue(fake))
    assert made.status_code == 201, made.text
    queue = made.json()
    assert queue["scope"] == "session"
    assert queue["items"] == {"pending": 1, "done": 0}  # the stored prod session entered
    assert api.post("/traces", json={"traces": stored[3:]}).status_code == 202
    listed = api.get("/review-queues/Chats/sessions").json()
    # a session enters when one of its traces matches (mixed has a dev turn); a session of
    # dev turns only, and a trace naming no session, do not
    assert [i["session_id"] for i in listed["items"]] == [chat, mixed]
    assert [i["traces"] for i in listed["items"]] == [2, 2]
    assert {i["queue_item"]["status"] for i in listed["items"]} == {"pending"}

    body = wait_judged(api, chat, queue["id"], 2)
    by_name = {s["criterion"]: s for s in body["scores"].values()}
    assert by_name["Correct"]["value"] == 0.0  # the last answer, Rome, is judged
    assert by_name[GOAL]["value"] == 1.0  # the whole conversation names Paris
    assert {s["traces"] for s in by_name.values()} == {2}
    for one in body["traces"]:
        assert one["scores"] == {}  # nothing was put on the traces
    asked = [r for r in fake.chat_requests if "And of Italy?" in r.last_user_text]
    assert any("What is the capital of France?" in r.last_user_text for r in asked)
    wait_judged(api, mixed, queue["id"], 2)
    rows = queue_scores(live, queue["id"])
    assert sorted((r.session_id == chat, r.criterion) for r in rows) == [
        (False, "Correct"),
        (False, GOAL),
        (True, "Correct"),
        (True, GOAL),
    ]
    items = api.get("/review-queues/Chats/sessions").json()["items"]
    assert all(i["queue_item"]["inclusion_probability"] == 1.0 for i in items)

    label = {"criterion": "Correct", "value": False, "queue": "Chats", "comment": "Rome"}
    given = api.post(f"/sessions/{chat}/labels", json=label)
    assert given.status_code == 201, given.text
    assert (given.json()["item_done"], given.json()["traces"]) == (False, 2)
    done = api.post(f"/sessions/{chat}/labels", json=label | {"criterion": GOAL, "value": 1})
    assert done.json()["item_done"] is True
    assert api.get("/review-queues/Chats").json()["items"] == {"pending": 1, "done": 1}

    # the session grows after it was labelled: still one item, done; the labels say what they saw
    third = turn(chat, "Is Paris big?", "Paris is big.")
    assert api.post("/traces", json={"traces": [third]}).status_code == 202
    items = api.get("/review-queues/Chats/sessions").json()["items"]
    assert [(i["session_id"], i["traces"], i["queue_item"]["status"]) for i in items] == [
        (chat, 3, "done"),
        (mixed, 2, "pending"),
    ]
    seen = api.get(f"/sessions/{chat}").json()
    assert seen["labels"]["Correct"]["value"] is False
    assert seen["labels"]["Correct"]["traces"] == 2 and seen["total"] == 3
    history = api.get(f"/sessions/{chat}/labels").json()["items"]
    assert [h["criterion"] for h in history] == [GOAL, "Correct"]  # newest first

    export = api.get("/review-queues/Chats/export").json()
    assert export["next_cursor"] is None
    (correct,) = [r for r in export["rows"] if r["criterion"] == "Correct"]
    assert correct["session_id"] == chat and correct["traces"] == 2
    assert correct["trace_id"] == first[1]["id"]  # the last turn of the content labelled
    assert correct["output"] == "Rome."
    assert correct["input"].startswith("User: What is the capital of France?")
    assert correct["input"].endswith("User: " + first[1]["input"])
    assert correct["label"] is False and correct["label_comment"] == "Rome"
    assert (correct["score"], correct["score_status"]) == (0.0, "ok")
    assert correct["score_source"].startswith("judge:")
    assert {r["session_id"] for r in export["rows"]} == {chat}  # mixed has no label yet
    assert set(SCORE_FIELDS) < set(correct)  # the trace export's score columns


def test_a_session_queue_refuses_what_does_not_fit_naming_the_field(live, fake, api):
    refused = api.post("/review-queues", json=chats_queue(fake, dataset="reviewed"))
    assert refused.status_code == 422 and "dataset" in refused.text
    bad_scope = api.post("/review-queues", json=chats_queue(fake, scope="conversation"))
    assert bad_scope.status_code == 422 and "scope" in bad_scope.text
    made = api.post("/review-queues", json=chats_queue(fake, criteria=["Correct"]))
    version = made.json()["version"]
    edit = api.patch(
        "/review-queues/Chats", json={"version": version, "changes": {"scope": "trace"}}
    )
    assert edit.status_code == 422 and "scope" in edit.text
    edit = api.patch(
        "/review-queues/Chats", json={"version": version, "changes": {"dataset": "reviewed"}}
    )
    assert edit.status_code == 422 and "dataset" in edit.text
    traces = api.get("/review-queues/Chats/traces")
    assert traces.status_code == 422 and "/sessions" in traces.text

    chat = f"chat-{uuid.uuid4().hex[:8]}"
    one = turn(chat, "Capital of France?", "Paris.")
    api.post("/traces", json={"traces": [one]})
    wrong = api.post(
        f"/traces/{one['id']}/labels", json={"criterion": "Correct", "value": 1, "queue": "Chats"}
    )
    assert wrong.status_code == 422 and "/sessions/{id}/labels" in wrong.text
    absent = api.post(
        "/sessions/nobody/labels", json={"criterion": "Correct", "value": 1, "queue": "Chats"}
    )
    assert absent.status_code == 422 and "not in review queue" in absent.text
    assert (
        api.post("/sessions/nobody/labels", json={"criterion": "C", "value": 1}).status_code == 404
    )
    api.post("/review-queues", json={"name": "Traces", "condition": ""})
    to_trace_queue = api.post(
        f"/sessions/{chat}/labels", json={"criterion": "C", "value": 1, "queue": "Traces"}
    )
    assert to_trace_queue.status_code == 422 and "holds traces" in to_trace_queue.text
    assert api.get("/review-queues/Traces/sessions").status_code == 422
    nan = api.post(f"/sessions/{chat}/labels", json={"criterion": "C", "value": "x" * 5000})
    assert nan.status_code == 422 and "value" in nan.text


def test_the_sdk_makes_a_session_queue_and_labels_a_session(live, fake, sdk):
    from assay.platform import ReviewQueue, Session
    from assay.platform.sdk.client import current
    from assay.platform.sdk.errors import ValidationFailed

    with pytest.raises(ValidationFailed, match="scope"):
        ReviewQueue("q", scope="chat")
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    sent = [turn(chat, "Capital of France?", "Paris.")]
    current().request("POST", "/traces", json={"traces": sent})
    queue = ReviewQueue("Whole chats", condition="metadata.env = 'prod'", scope="session").save()
    again = ReviewQueue.download("Whole chats")
    assert again.scope == "session" and again.items == {"pending": 1, "done": 0}
    assert [s["session_id"] for s in queue.sessions] == [chat]
    queue.label(chat, "helpful", 4, comment="good")
    downloaded = Session.download(chat)
    assert downloaded.labels["helpful"]["value"] == 4
    assert downloaded.labels["helpful"]["traces"] == 1
    (row,) = queue.export()
    assert (row["session_id"], row["criterion"], row["label"]) == (chat, "helpful", 4)
    assert queue.sessions_with("done")[0]["session_id"] == chat  # no criteria: one label
    queue.scope = "trace"
    with pytest.raises(ValidationFailed, match="scope"):
        queue.save()


def test_session_items_page_sample_and_come_least_sure_first(live, fake, api):
    from assay.platform.server.storage import models
    from assay.platform.server.storage.review_locks import Locks
    from assay.platform.server.storage.review_sampling import kept
    from assay.platform.server.storage.review_sessions import SessionQueue, lock_key

    chats = [f"chat-{uuid.uuid4().hex[:8]}" for _ in range(3)]
    api.post("/traces", json={"traces": [turn(c, "Capital of France?", "Paris.") for c in chats]})
    plain = api.post("/review-queues", json={"name": "Plain", "scope": "session"}).json()
    first = api.get("/review-queues/Plain/sessions", params={"limit": 2}).json()
    rest = api.get(
        "/review-queues/Plain/sessions", params={"limit": 2, "cursor": first["next_cursor"]}
    ).json()
    assert [i["session_id"] for i in first["items"] + rest["items"]] == chats
    assert rest["next_cursor"] is None

    # sampled: each session kept by the hash draw at the chance its uncertainty gave
    sampled = api.post(
        "/review-queues", json=chats_queue(fake, name="Sampled", criteria=[GOAL], sample_rate=0.3)
    ).json()
    deadline = time.monotonic() + 120
    while True:
        items = api.get("/review-queues/Sampled/sessions").json()["items"]
        if all(i["queue_item"]["inclusion_probability"] is not None for i in items):
            break
        assert time.monotonic() < deadline, items
        time.sleep(0.1)
    for item in items:
        chance = item["queue_item"]["inclusion_probability"]
        assert chance == pytest.approx(0.3 * 0.5)  # sure of each (uncertainty 0)
        expected = "pending" if kept(sampled["id"], item["session_id"], chance) else "unsampled"
        assert item["queue_item"]["status"] == expected

    # by uncertainty: the least sure first, skipping what another reviewer holds
    project = live.app.state.assay
    with project.transaction() as session:
        people = [
            models.User(username=f"r-{uuid.uuid4().hex[:8]}", password_hash="-") for _ in range(2)
        ]
        session.add_all(people)
        session.flush()
        ids = [p.id for p in people]
        queue = session.get(models.ReviewQueue, plain["id"])
        repo = SessionQueue(session, queue.project_id)
        items, _ = repo.items(queue, status=None, limit=10, cursor=None)
        for item, unsure in zip(items, (0.2, 0.9, 0.5), strict=True):
            item.uncertainty = unsure
        session.flush()
        ranked = repo.next_free_item(queue.id, ids[0], 0, by_uncertainty=True)
        assert ranked is not None and ranked.session_id == chats[1]
        Locks(session, queue.project_id).acquire(queue.id, lock_key(ranked.id), ids[1])
        after = repo.next_free_item(queue.id, ids[0], 0, by_uncertainty=True)
        assert after is not None and after.session_id == chats[2]
        in_order = repo.next_free_item(queue.id, ids[0], items[0].id)
        assert in_order is not None and in_order.session_id == chats[2]  # chats[1] is held
