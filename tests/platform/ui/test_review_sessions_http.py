"""The session review pages over HTTP on SQLite and PostgreSQL: a queue made from the traces
page with "the session of each matching trace" lists sessions; the next item opens the whole
conversation with the queue's criteria; a second reviewer is kept off a held item and sent to the
next; labels sent after the session grew record the content that was shown (on the session page
and in `GET /sessions/{id}`); a missing value or a lost content is a 422 naming it."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest

from tests.platform.ui.conftest import csrf_in, five_point_criterion, ingest, make_user, sign_in


def chat_turn(session_id: str, question: str, answer: str) -> dict[str, Any]:
    return {
        "input": question,
        "output": answer,
        "metadata": {"env": "prod", "session_id": session_id},
    }


def test_a_session_queue_is_reviewed_a_whole_conversation_at_a_time(live):
    user = make_user(live)
    five_point_criterion(user)
    chat, second = (f"{n}-{uuid.uuid4().hex[:6]}" for n in ("chat", "later"))
    ingest(
        user,
        chat_turn(chat, "Book me a flight to Paris.", "Your flight is booked."),
        chat_turn(chat, "And a hotel?", "Sorry, no hotel is free."),
        chat_turn(second, "Capital of Spain?", "Madrid."),
    )
    client = sign_in(user)
    traces_page = client.get(f"{user.base}/traces")
    assert 'name="scope"' in traces_page.text and 'value="session"' in traces_page.text
    made = client.post(
        f"{user.base}/queues",
        data={
            "csrf_token": csrf_in(traces_page.text),
            "name": "Whole chats",
            "condition": "metadata.env = 'prod'",
            "criteria": "Helpfulness",
            "scope": "session",
        },
    )
    assert made.status_code == 303, made.text
    queue_url = made.headers["location"]
    queue_page = client.get(queue_url).text
    assert chat in queue_page and second in queue_page and "Whole sessions" in queue_page
    assert 'data-scope="session"' in client.get(f"{user.base}/queues").text

    opened = client.get(queue_url + "/next")
    assert opened.status_code == 303
    item_url = opened.headers["location"]
    assert re.search(r"/queues/\d+/sessions/\d+$", item_url)
    page = client.get(item_url).text
    assert "Book me a flight to Paris." in page and "Sorry, no hotel is free." in page
    shown = re.search(r'name="content_key" value="(\d+:\d+)"', page)
    assert shown is not None and shown.group(1).startswith("2:")
    assert "Helpfulness" in page and "level 3" in page and 'id="lock-note"' in page

    missing = client.post(
        item_url, data={"csrf_token": csrf_in(page), "content_key": shown.group(1)}
    )
    assert missing.status_code == 422 and "choose a value for Helpfulness" in missing.text
    lost = client.post(item_url, data={"csrf_token": csrf_in(page), "c0": "2", "content_key": "x"})
    assert lost.status_code == 422 and "content_key" in lost.text

    # the session grows while the page is open: the label is of the two turns shown
    ingest(user, chat_turn(chat, "Any other hotel?", "Yes, one."))
    sent = client.post(
        item_url,
        data={
            "csrf_token": csrf_in(page),
            "c0": "2",
            "comment": "no hotel",
            "content_key": shown.group(1),
        },
    )
    assert sent.status_code == 303 and "/next?after=" in sent.headers["location"]
    with user.api() as api:
        body = api.get(f"/sessions/{chat}").json()
        label = body["labels"]["Helpfulness"]
        assert (label["value"], label["traces"], label["comment"]) == (2, 2, "no hotel")
        assert label["author"] == f"user:{user.username}" and body["total"] == 3
        items = api.get("/review-queues/Whole chats/sessions").json()["items"]
    assert [i["queue_item"]["status"] for i in items] == ["done", "pending"]
    session_page = client.get(f"{user.base}/sessions/{chat}").text
    assert 'id="session-labels"' in session_page
    assert "on 2 turns (the session has 3 now)" in session_page

    assert client.get(queue_url + "/sessions/999999").status_code == 404


def session_queue(user: Any) -> tuple[str, str]:
    """A session queue of two sessions (made through the API); its page's URL and a session."""
    five_point_criterion(user)
    chat, later = (f"{n}-{uuid.uuid4().hex[:6]}" for n in ("chat", "later"))
    ingest(user, chat_turn(chat, "Q1", "A1."), chat_turn(later, "Q2", "A2."))
    with user.api() as api:
        queue = api.post(
            "/review-queues",
            json={"name": "Chats", "criteria": ["Helpfulness"], "scope": "session"},
        ).json()
    return f"{user.base}/queues/{queue['id']}", chat


@pytest.mark.slow  # two reviewers signed in (argon2 for each): ~5 s a backend
def test_a_held_session_item_is_refused_to_another_reviewer_until_it_is_released(live):
    user = make_user(live, fresh=True)
    other = make_user(live, user.project, fresh=True)
    queue_url, _chat = session_queue(user)
    client, theirs = sign_in(user), sign_in(other)
    item_url = client.get(queue_url + "/next").headers["location"]
    assert 'id="lock-note"' in client.get(item_url).text
    # another reviewer sees the item held, and their next item is the other session
    assert 'id="lock-warning"' in theirs.get(item_url).text
    elsewhere = theirs.get(queue_url + "/next").headers["location"]
    assert elsewhere != item_url and "/sessions/" in elsewhere
    refused = theirs.post(
        item_url,
        data={"csrf_token": csrf_in(theirs.get(elsewhere).text), "c0": "4", "content_key": "1:1"},
    )
    assert refused.status_code == 409

    skipped = theirs.post(
        elsewhere + "/skip", data={"csrf_token": csrf_in(theirs.get(elsewhere).text)}
    )
    assert skipped.status_code == 303
    assert 'id="lock-note"' in client.get(elsewhere).text  # released: the first reviewer holds it
