"""Session-scope online evaluators and agent criteria against the real server on SQLite and
PostgreSQL, judged by the loopback fake OpenAI server: a session is judged once it has settled
(an evaluator with a long settle interval leaves it waiting), the scores land on the session
(`GET /sessions/{id}`), a session that grows is judged again, and the same content never twice
(a trace sent again, a backfill, a server restarted on the same database). Agent criteria judge a
trace's own span tree (step efficiency counts the repeated tool call), a trace with nothing to
convert is a `TrajectoryUnavailable` error outcome (on a trace, and on a session), and a review
queue's judge scores an agent criterion too."""

from __future__ import annotations

import json
import re
import time
import uuid
from typing import Any

import pytest

from tests.models.fake_openai import dynamic, ok
from tests.platform.conftest import start_server, stop_server
from tests.platform.test_online_evaluators import CORRECT, wait_for

GOAL = "agent_goal_accuracy_without_reference"


def judge() -> Any:
    """Goal accuracy: achieved when the conversation names Paris; yes/no criteria: yes when the
    judged response names Paris."""

    def choose(request: Any) -> Any:
        text = request.last_user_text
        conversation = re.search(r"<conversation>(.*?)</conversation>", text, re.S)
        schema = json.dumps(request.body.get("response_format") or {})
        if conversation and '"tasks"' in schema:  # task completion: the tasks asked for
            return ok(json.dumps({"tasks": ["book a flight", "book a hotel"]}))
        if conversation and "achieved" not in schema:  # task completion: one verdict a task
            return ok("1. yes\n2. no")
        if conversation:
            achieved = int("Paris" in conversation.group(1))
            return ok(
                json.dumps({"user_goal": "a capital", "end_state": "named", "achieved": achieved})
            )
        judged = re.search(r"<response>(.*?)</response>", text, re.S)
        return ok("yes" if judged and "Paris" in judged.group(1) else "no")

    return dynamic(choose)


def turn(session: str, question: str, answer: str, **fields: Any) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:6]  # no two turns ask the judge the same (no cached answer)
    return {
        "id": str(uuid.uuid4()),
        "input": f"{question} ({tag})",
        "output": answer,
        "metadata": {"env": "prod", "session_id": session},
    } | fields


def chats(fake: Any, name: str = "Chats", **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "condition": "metadata.env = 'prod'",
        "criteria": ["Correct", GOAL],
        "judge_model": fake.model_string(f"judge-{uuid.uuid4().hex[:8]}"),
        "scope": "session",
        "settle_seconds": 0,  # due at once (the restart test waits for a settle of 1 s)
    } | fields


def scored(count: int) -> Any:
    return lambda s: s["sessions"]["scored"] == count and s["sessions"]["pending"] == 0


def session_scores(live: Any, session_id: str) -> list[Any]:
    from sqlalchemy import select

    from assay.platform.server.storage import models

    with live.app.state.assay.transaction() as session:
        query = select(models.SessionScore).where(models.SessionScore.session_id == session_id)
        return list(session.scalars(query))


def session_rows(live: Any, evaluator_id: int) -> list[Any]:
    from sqlalchemy import select

    from assay.platform.server.storage import models

    S = models.SessionEvaluation
    with live.app.state.assay.transaction() as session:
        return list(session.scalars(select(S).where(S.evaluator_id == evaluator_id)))


@pytest.fixture
def api(live: Any, fake: Any) -> Any:
    fake.default = judge()
    with live.client(live.key()) as client:
        assert client.post("/criteria", json=CORRECT).status_code == 201
        yield client


def test_a_settled_session_is_scored_on_the_session_and_again_when_it_grows(live, fake, api):
    made = api.post("/evaluators", json=chats(fake))
    assert made.status_code == 201, made.text
    assert (made.json()["scope"], made.json()["settle_seconds"]) == ("session", 0)
    waiting = api.post("/evaluators", json=chats(fake, "Slow", settle_seconds=3600)).json()
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    first = [
        turn(chat, "What is the capital of France?", "Paris."),
        turn(chat, "And of Italy?", "Rome."),
    ]
    assert api.post("/traces", json={"traces": first}).status_code == 202
    state = wait_for(api, "Chats", scored(1))
    assert state["sessions"]["error"] == 0 and state["traces"]["scored"] == 0

    body = api.get(f"/sessions/{chat}").json()
    scores = body["scores"]
    assert set(scores) == {"Correct", GOAL}
    assert scores["Correct"]["value"] == 0.0  # the last answer, Rome, is judged
    assert scores[GOAL]["value"] == 1.0  # the whole conversation names Paris
    assert {s["source"] for s in scores.values()} == {"evaluator:Chats@v1"}
    assert {s["traces"] for s in scores.values()} == {2}
    for one in body["traces"]:  # nothing was put on the traces themselves
        assert one["scores"] == {}
    slow = api.get(f"/evaluators/{waiting['name']}").json()["sessions"]
    assert slow == {"pending": 1, "scored": 0, "error": 0, "skipped_budget": 0, "judge_down": 0}

    asked = len(fake.chat_requests)
    again = api.post("/traces", json={"traces": first})  # the same traces: the same content
    assert again.status_code == 202
    assert (
        api.post("/evaluators/Chats/backfill", json={"since": "2020-01-01T00:00:00Z"}).json()[
            "taken"
        ]
        == 0
    )
    third = turn(chat, "Is Paris big?", "Paris is big.")
    assert api.post("/traces", json={"traces": [third]}).status_code == 202
    grown = wait_for(api, "Chats", scored(2))
    assert grown["sessions"]["error"] == 0
    assert len(fake.chat_requests) == asked + 2  # the grown session once, on two criteria
    stored = session_scores(live, chat)
    assert sorted((s.criterion, s.traces) for s in stored) == [
        ("Correct", 2),
        ("Correct", 3),
        (GOAL, 2),
        (GOAL, 3),
    ]
    latest = api.get(f"/sessions/{chat}").json()
    assert (
        latest["scores"]["Correct"]["value"] == 1.0 and latest["scores"]["Correct"]["traces"] == 3
    )
    assert len(latest["score_history"]) == 4
    # the waiting evaluator holds one content of the session: the grown one superseded the first
    slow = api.get(f"/evaluators/{waiting['name']}").json()["sessions"]
    assert slow == {"pending": 1, "scored": 0, "error": 0, "skipped_budget": 0, "judge_down": 0}
    assert sorted(r.status for r in session_rows(live, waiting["id"])) == ["pending", "superseded"]


def test_task_completion_judges_the_session_as_one_conversation(live, fake, api):
    api.post("/evaluators", json=chats(fake, name="Trips", criteria=["task_completion"]))
    trip = f"trip-{uuid.uuid4().hex[:8]}"
    turns = [
        turn(trip, "Book me a flight to Paris and a hotel there.", "Your flight is booked."),
        turn(trip, "And the hotel?", "Sorry, I could not book the hotel."),
    ]
    api.post("/traces", json={"traces": turns})
    state = wait_for(api, "Trips", scored(1))
    assert state["sessions"]["error"] == 0
    score = api.get(f"/sessions/{trip}").json()["scores"]["task_completion"]
    assert score["value"] == 0.5 and score["traces"] == 2
    assert score["outcome"]["reason"].startswith("1 of 2 task(s) done")
    (asked,) = [r for r in fake.chat_requests if "And the hotel?" in r.last_user_text][-1:]
    assert "Book me a flight to Paris" in asked.last_user_text  # both turns, one conversation
    assert "could not book the hotel" in asked.last_user_text


def test_a_session_with_nothing_to_convert_is_a_typed_error_on_the_session(live, fake, api):
    api.post("/evaluators", json=chats(fake, name="Empty", criteria=[GOAL]))
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    blank = {"id": str(uuid.uuid4()), "metadata": {"env": "prod", "session_id": chat}}
    api.post("/traces", json={"traces": [blank]})
    state = wait_for(api, "Empty", lambda s: s["sessions"]["error"] == 1)
    assert state["last_error"].startswith("TrajectoryUnavailable: session ")
    outcome = api.get(f"/sessions/{chat}").json()["scores"][GOAL]["outcome"]
    assert (outcome["status"], outcome["error_type"]) == ("error", "TrajectoryUnavailable")
    assert "no LLM call, no tool call and no input" in outcome["error_message"]


@pytest.mark.slow  # ~5 s a backend: a settle interval, two server starts and a wait
def test_a_restarted_server_does_not_score_a_session_twice(live, fake, api):
    # settled after 1 s: judged when an idle worker wakes the session, not at ingest
    api.post("/evaluators", json=chats(fake, criteria=["Correct"], settle_seconds=1))
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    traces = [turn(chat, "Capital of France?", "Paris.")]
    api.post("/traces", json={"traces": traces})
    wait_for(api, "Chats", scored(1))
    assert len(session_scores(live, chat)) == 1
    project_key = api.headers["Authorization"]
    second = start_server(live.backend, live.db_url)  # the same database, a new server
    try:
        with second.client(project_key.split(" ", 1)[1]) as other:
            other.post("/traces", json={"traces": traces})  # sent again to the new server
            taken = other.post("/evaluators/Chats/backfill", json={"since": "2020-01-01T00:00:00Z"})
            assert taken.json()["taken"] == 0
        stop_server(second)
        second = start_server(live.backend, live.db_url)  # and restarted once more
        time.sleep(2.5)  # past the settle interval and a worker's wake-up
    finally:
        stop_server(second)
    assert len(session_scores(live, chat)) == 1
    state = api.get("/evaluators/Chats").json()["sessions"]
    assert state == {"pending": 0, "scored": 1, "error": 0, "skipped_budget": 0, "judge_down": 0}


def _tool_call(ident: str) -> dict[str, Any]:
    return {
        "id": ident,
        "type": "function",
        "function": {"name": "lookup_order", "arguments": '{"order_id": 7}'},
    }


def looping_agent() -> dict[str, Any]:
    """A trace whose agent calls the same tool twice: step efficiency 0.5."""
    question = {"role": "user", "content": "Where is my order 7?"}
    sent = [question]
    spans = []
    for step, ident in enumerate(("c1", "c2")):
        spans.append(
            {"id": f"s{step}", "kind": "llm", "input": list(sent), "output": [_tool_call(ident)]}
        )
        sent += [
            {"role": "assistant", "content": None, "tool_calls": [_tool_call(ident)]},
            {"role": "tool", "tool_call_id": ident, "content": "shipped"},
        ]
    spans.append({"id": "s2", "kind": "llm", "input": list(sent), "output": "It has shipped."})
    return {
        "id": str(uuid.uuid4()),
        "input": "Where is my order 7?",
        "output": "It has shipped.",
        "metadata": {"env": "agents"},
        "spans": spans,
    }


def test_agent_criteria_judge_a_trace_trajectory_or_say_why_not(live, fake, api):
    body = {
        "name": "Agents",
        "condition": "metadata.env = 'agents'",
        "criteria": ["step_efficiency", GOAL],
        "judge_model": fake.model_string(f"judge-{uuid.uuid4().hex[:8]}"),
    }
    assert api.post("/evaluators", json=body).status_code == 201
    agent = looping_agent()
    plain = {
        "id": str(uuid.uuid4()),
        "input": "Capital of France?",
        "output": "Paris.",
        "metadata": {"env": "agents"},
    }
    empty = {"id": str(uuid.uuid4()), "metadata": {"env": "agents"}}
    api.post("/traces", json={"traces": [agent, plain, empty]})
    state = wait_for(
        api,
        "Agents",
        lambda s: s["traces"]["pending"] == 0 and s["traces"]["scored"] + s["traces"]["error"] == 3,
    )
    assert (state["traces"]["scored"], state["traces"]["error"]) == (2, 1)
    assert state["last_error"].startswith("TrajectoryUnavailable: ")
    looped = api.get(f"/traces/{agent['id']}").json()["scores"]
    assert looped["step_efficiency"]["value"] == 0.5
    single = api.get(f"/traces/{plain['id']}").json()["scores"]
    assert single[GOAL]["value"] == 1.0  # a plain call is a one-turn trajectory
    assert single["step_efficiency"]["outcome"]["status"] == "skipped"  # no tool call to count
    broken = api.get(f"/traces/{empty['id']}").json()["scores"]
    outcome = broken["step_efficiency"]["outcome"]
    assert (outcome["status"], outcome["error_type"]) == ("error", "TrajectoryUnavailable")
    assert "no LLM call, no tool call and no input" in outcome["error_message"]


def test_a_review_queue_judge_scores_an_agent_criterion(live, fake, api):
    unknown = api.post(
        "/review-queues",
        json={"name": "Q0", "criteria": ["no_such_metric"], "judge_model": fake.model_string("j")},
    )
    assert unknown.status_code == 422 and unknown.json()["error"]["field"] == "criteria[0]"
    assert "step_efficiency" in unknown.json()["error"]["message"]
    agent = looping_agent()
    api.post("/traces", json={"traces": [agent]})
    queue = {
        "name": "Agent review",
        "condition": "metadata.env = 'agents'",
        "criteria": ["step_efficiency"],
        "judge_model": fake.model_string(f"judge-{uuid.uuid4().hex[:8]}"),
    }
    assert api.post("/review-queues", json=queue).status_code == 201, queue
    deadline = time.monotonic() + 120
    while True:
        scores = api.get(f"/traces/{agent['id']}").json()["scores"]
        if "step_efficiency" in scores:
            break
        assert time.monotonic() < deadline, scores
        time.sleep(0.1)
    assert scores["step_efficiency"]["value"] == 0.5
