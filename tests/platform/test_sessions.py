"""Sessions against the live server on SQLite and PostgreSQL: a trace joins the session its
metadata names (`session_id`, else `conversation_id`; over OTLP `session.id`), the list gives
each session's trace count and times, latest-active first, a session gives its traces oldest
first, the condition language and the traces list filter by `session_id`, an edit of the metadata
moves a trace, and projects never see each other's sessions. The SDK's `trace_session` and
`Session` read and write the same."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from tests.platform.test_otlp import otlp_json

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)


def trace(minute: int, question: str, **metadata) -> dict:
    return {
        "id": str(uuid.uuid4()),
        "created_at": (T0 + timedelta(minutes=minute)).isoformat(),
        "input": question,
        "output": f"answer to {question}",
        "metadata": metadata,
    }


def test_sessions_group_traces_and_read_as_conversations(live):
    key = live.key()
    with live.client(key) as api:
        # sent out of order: a session's traces come back by time
        sent = [
            trace(5, "and in Rome?", session_id="chat-a"),
            trace(1, "weather in Paris?", session_id="chat-a"),
            trace(3, "hello", conversation_id="conv-b"),
            trace(2, "no session"),
            trace(9, "refund?", session_id=42),  # a number is kept as its text
        ]
        assert api.post("/traces", json={"traces": sent}).status_code == 202

        listed = api.get("/sessions").json()
        assert listed["total"] == 3 and listed["total_more"] is False
        # the session whose latest trace arrived last comes first
        assert [s["session_id"] for s in listed["items"]] == ["42", "conv-b", "chat-a"]
        chat = listed["items"][2]
        assert chat["traces"] == 2
        assert chat["first_at"].startswith("2026-11-01T09:01")
        assert chat["last_at"].startswith("2026-11-01T09:05")

        first = api.get("/sessions", params={"limit": 2}).json()
        assert [s["session_id"] for s in first["items"]] == ["42", "conv-b"]
        rest = api.get("/sessions", params={"limit": 2, "cursor": first["next_cursor"]}).json()
        assert [s["session_id"] for s in rest["items"]] == ["chat-a"]
        assert rest["items"][0]["traces"] == 2 and rest["next_cursor"] is None

        one = api.get("/sessions/chat-a").json()
        assert [t["input"] for t in one["traces"]] == ["weather in Paris?", "and in Rome?"]
        assert one["total"] == 2 and one["truncated"] is False
        assert all(t["session_id"] == "chat-a" for t in one["traces"])

        missing = api.get("/sessions/nope")
        assert missing.status_code == 404 and "nope" in missing.json()["error"]["message"]

        matched = api.get("/traces", params={"condition": "session_id = 'conv-b'"}).json()
        assert [t["input"] for t in matched["items"]] == ["hello"]
        assert matched["items"][0]["session_id"] == "conv-b"
        by_param = api.get("/traces", params={"session_id": "chat-a", "full": "true"}).json()
        assert {t["input"] for t in by_param["items"]} == {"weather in Paris?", "and in Rome?"}
        none_set = api.get("/traces", params={"condition": "session_id IS NULL"}).json()
        assert [t["input"] for t in none_set["items"]] == ["no session"]

        # an edit of the metadata moves the trace to the session it now names
        moved = sent[3]
        got = api.get(f"/traces/{moved['id']}").json()
        patched = api.patch(
            f"/traces/{moved['id']}",
            json={"version": got["version"], "changes": {"metadata": {"session_id": "chat-a"}}},
        )
        assert patched.status_code == 200, patched.text
        assert patched.json()["session_id"] == "chat-a"
        assert api.get("/sessions/chat-a").json()["total"] == 3

    with live.client(live.key()) as other:  # another project sees none of it
        assert other.get("/sessions").json() == {
            "items": [],
            "next_cursor": None,
            "total": 0,
            "total_more": False,
        }
        assert other.get("/sessions/chat-a").status_code == 404


def test_bad_session_requests_name_the_field(live):
    with live.client(live.key()) as api:
        too_long = api.get("/sessions/" + "x" * 201)
        assert too_long.status_code == 422 and "session_id" in too_long.text
        bad_cursor = api.get("/sessions", params={"cursor": "abc"})
        assert bad_cursor.status_code == 422 and "cursor" in bad_cursor.text
        bad_limit = api.get("/sessions", params={"limit": 0})
        assert bad_limit.status_code == 422 and "limit" in bad_limit.text


def test_otlp_session_id_attribute_makes_a_session(live):
    key = live.key()
    body = otlp_json(
        uuid.uuid4().hex,
        "00f067aa0ba902b7",
        **{"input.value": "hi", "output.value": "hello", "session.id": "otel-7"},
    )
    with httpx.Client(timeout=30) as http:
        sent = http.post(
            f"{live.base_url}/otlp/v1/traces",
            json=body,
            headers={"Authorization": f"Bearer {key}"},
        )
    assert sent.status_code == 200, sent.text
    with live.client(key) as api:
        one = api.get("/sessions/otel-7").json()
        assert [t["input"] for t in one["traces"]] == ["hi"]


@pytest.mark.parametrize("live", ["sqlite"], indirect=True)
def test_sdk_trace_session_and_session_download(sdk):
    from assay.platform import Session, Trace, flush, trace_function_call, trace_session

    @trace_function_call
    def answer(question: str) -> str:
        return f"answer to {question}"

    with trace_session("sdk-chat"):
        answer("first")
        assert flush(10)  # else the next traced call, within 5 s, would take it in
        answer("second")
    answer("outside")  # in no session: it does not take in "second"
    assert flush(10)
    session = Session.download("sdk-chat")
    assert [t.input for t in session.traces] == ["first", "second"]
    assert {t.session_id for t in session.traces} == {"sdk-chat"}
    assert session.total == 2 and session.first_at <= session.last_at
    assert [s["session_id"] for s in Session.list()] == ["sdk-chat"]
    assert {t.input for t in Trace.list(session_id="sdk-chat")} == {"first", "second"}
    assert sorted(t.input for t in Trace.list()) == ["first", "outside", "second"]
    with pytest.raises(ValueError, match="session_id"):
        trace_session("  ").__enter__()


def test_paging_lists_each_session_once_where_its_latest_trace_is(live, monkeypatch):
    from assay.platform.server.storage import sessions as stored

    monkeypatch.setattr(stored, "BATCH", 3)  # several reads per page
    # arrival order: a b c a d e b f g a  -> by latest arrival: a g f b e d c
    order = "abcadebfga"
    with live.client(live.key()) as api:
        sent = [trace(i, f"turn {i}", session_id=sid) for i, sid in enumerate(order)]
        for one in sent:  # one batch each: the order of arrival is the order sent
            assert api.post("/traces", json={"traces": [one]}).status_code == 202
        listed, cursor, pages = [], None, 0
        while True:
            got = api.get("/sessions", params={"limit": 2, "cursor": cursor}).json()
            listed += [(s["session_id"], s["traces"]) for s in got["items"]]
            pages += 1
            cursor = got["next_cursor"]
            if cursor is None:
                break
        assert listed == [("a", 3), ("g", 1), ("f", 1), ("b", 2), ("e", 1), ("d", 1), ("c", 1)]
        assert pages == 4
