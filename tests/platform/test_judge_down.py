"""The down-for-the-run gate (`jobs/calls.py`) for online evaluators' and review queues' judges,
against the live server (SQLite and PostgreSQL) and a loopback judge that answers 500 (or closes
each connection unanswered, for a queue): the run
stops asking once the gate trips (the requests the judge server saw are counted), each trace left
says why, and, for an online evaluator (trace and session scope), a later run with the judge back
scores those traces (sessions) once.

The worker's call policy is short here (`short_calls`: 2 attempts), as in test_job_models_down.
"""

# ruff: noqa: F811  (the fixtures imported below are named again as the tests' arguments)
from __future__ import annotations

import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from assay.platform.server.storage import models
from tests.models.fake_openai import reset, server_error
from tests.platform.test_job_models_down import other, short_calls  # noqa: F401  (fixtures)
from tests.platform.test_online_evaluators import (  # noqa: F401  (api is a fixture)
    api,
    evaluator,
    judge_paris,
    stored_scores,
    trace,
    wait_for,
)
from tests.platform.test_session_evaluators import chats, session_scores, turn

TRACES = 40  # without the gate: 2 attempts each, 80 requests at the least
SESSIONS = 16  # judged 4 at a time


def _rows(live: Any, evaluator_id: int) -> list[models.OnlineEvaluation]:
    with live.app.state.assay.transaction() as session:
        R = models.OnlineEvaluation
        return list(session.scalars(select(R).where(R.evaluator_id == evaluator_id)))


def _queue_job(live: Any, queue_id: int) -> models.Job | None:
    with live.app.state.assay.transaction() as session:
        J = models.Job
        query = select(J).where(J.kind == "review_judge", J.queue_id == queue_id)
        return session.scalars(query.order_by(J.id.desc())).first()


def test_an_evaluator_stops_asking_a_dead_judge_and_its_next_run_scores_the_rest(
    live, fake, api, other, short_calls
):
    other.default = server_error(500)
    judge = f"judge-{uuid.uuid4().hex[:8]}"
    made = api.post(
        "/evaluators",
        json=evaluator(
            fake, criteria=["Correct", "Names Paris"], judge_model=other.model_string(judge)
        ),
    )
    assert made.status_code == 201, made.text
    sent = [trace() for _ in range(TRACES)]
    assert api.post("/traces", json={"traces": sent}).status_code == 202
    state = wait_for(
        api,
        "Prod",
        lambda s: s["traces"]["judge_down"] == TRACES and s["job"]["status"] != "running",
    )
    asked = len(other.chat_requests)
    # it stopped asking once the gate tripped: the first chunk's calls (16 at once), no more
    assert 2 <= asked < TRACES / 2, asked
    assert state["traces"] | {"judge_down": 0} == dict.fromkeys(state["traces"], 0)
    assert state["job"]["status"] == "failed" and "did not answer" in state["job"]["error"]
    assert judge in state["job"]["error"] and "judge_down" in state["job"]["error"]
    assert judge in state["last_error"]
    rows = _rows(live, made.json()["id"])
    assert {r.status for r in rows} == {"judge_down"} and len(rows) == TRACES
    for row in rows:  # each says why: the judge's own error, or the gate's EndpointDown
        assert "the judge did not answer" in row.reason and judge in row.reason, row.reason
        assert "ProviderError" in row.reason or "EndpointDown" in row.reason, row.reason
    assert sum("EndpointDown" in r.reason for r in rows) >= TRACES - asked
    assert stored_scores(live, [t["id"] for t in sent]) == []  # nothing stored for them

    # the judge answers again: the next run (a new trace here) scores every trace once
    other.default = judge_paris()
    one_more = trace()
    assert api.post("/traces", json={"traces": [one_more]}).status_code == 202
    done = wait_for(api, "Prod", lambda s: s["traces"]["scored"] == TRACES + 1)
    assert done["traces"]["judge_down"] == 0 and done["traces"]["pending"] == 0
    scores = stored_scores(live, [t["id"] for t in [*sent, one_more]])
    pairs = [(s.trace_id, s.criterion) for s in scores]
    assert len(pairs) == len(set(pairs)) == 2 * (TRACES + 1)  # each criterion once a trace
    assert {s.value for s in scores if s.criterion == "Correct"} == {1.0}


def test_a_judge_that_is_back_is_asked_again_without_a_new_trace(
    live, fake, api, other, short_calls, monkeypatch
):
    from assay.platform.server.storage.evaluator_rules import wake_judge_down

    other.default = server_error(500)
    judge = other.model_string(f"judge-{uuid.uuid4().hex[:8]}")
    made = api.post("/evaluators", json=evaluator(fake, criteria=["Correct"], judge_model=judge))
    assert made.status_code == 201, made.text
    sent = [trace() for _ in range(4)]
    assert api.post("/traces", json={"traces": sent}).status_code == 202
    wait_for(
        api, "Prod", lambda s: s["traces"]["judge_down"] == 4 and s["job"]["status"] == "failed"
    )
    transaction = live.app.state.assay.transaction
    wake_judge_down(transaction, timedelta(hours=1))  # left a moment ago: not due yet
    time.sleep(0.5)  # the worker polls every 0.1 s: a queued job would have started
    state = api.get("/evaluators/Prod").json()
    assert state["traces"]["judge_down"] == 4 and state["job"]["status"] == "failed"

    other.default = judge_paris()  # back; no new trace, no resume: the idle worker's look
    from assay.platform.server.jobs import worker

    monkeypatch.setattr(worker, "DOWN_CHECK_INTERVAL", 0.2)  # the live worker is in-process
    monkeypatch.setenv("ASSAY_JUDGE_RETRY_AFTER", "0")
    done = wait_for(api, "Prod", lambda s: s["traces"]["scored"] == 4)
    assert done["traces"]["judge_down"] == 0 and done["traces"]["pending"] == 0
    scores = stored_scores(live, [t["id"] for t in sent])
    assert sorted(s.trace_id for s in scores) == sorted(t["id"] for t in sent)  # once each


def test_a_session_evaluator_leaves_its_sessions_for_the_next_run(
    live, fake, api, other, short_calls
):
    other.default = server_error(500)
    judge = f"judge-{uuid.uuid4().hex[:8]}"
    rule = chats(fake, criteria=["Correct"], judge_model=other.model_string(judge))
    assert api.post("/evaluators", json=rule).status_code == 201
    ids = [f"chat-{uuid.uuid4().hex[:8]}" for _ in range(SESSIONS)]
    turns = [turn(sid, "What is the capital of France?", "Paris.") for sid in ids]
    assert api.post("/traces", json={"traces": turns}).status_code == 202
    state = wait_for(
        api,
        "Chats",
        lambda s: s["sessions"]["judge_down"] == SESSIONS and s["job"]["status"] == "failed",
    )
    asked = len(other.chat_requests)
    assert 2 <= asked < SESSIONS, asked  # the first chunk's (4 at once), then nothing
    assert judge in state["job"]["error"] and judge in state["last_error"]
    assert all(session_scores(live, sid) == [] for sid in ids)

    other.default = judge_paris()  # back: a new session's arrival is the next run
    later = f"chat-{uuid.uuid4().hex[:8]}"
    sent_later = api.post("/traces", json={"traces": [turn(later, "And Italy?", "Paris.")]})
    assert sent_later.status_code == 202
    done = wait_for(api, "Chats", lambda s: s["sessions"]["scored"] == SESSIONS + 1)
    assert done["sessions"]["judge_down"] == 0 and done["sessions"]["pending"] == 0
    for sid in [*ids, later]:  # once each
        assert [s.criterion for s in session_scores(live, sid)] == ["Correct"], sid


@pytest.mark.parametrize(
    "failing, cause",
    [(lambda: server_error(500), "ProviderError"), (reset, "ModelConnectionError")],
    ids=["500", "connection-closed"],
)
def test_a_review_queue_stops_asking_a_dead_judge_and_says_why(
    live, fake, api, other, short_calls, failing, cause
):
    other.default = failing()
    judge = f"judge-{uuid.uuid4().hex[:8]}"
    made = api.post(
        "/review-queues",
        json={
            "name": "Judged",
            "criteria": ["Correct"],
            "judge_model": other.model_string(judge),
            "condition": "metadata.env = 'prod'",
        },
    )
    assert made.status_code == 201, made.text
    queue_id = made.json()["id"]
    sent = [trace() for _ in range(TRACES)]
    assert api.post("/traces", json={"traces": sent}).status_code == 202
    scores: list[Any] = []

    def judged() -> bool:
        nonlocal scores
        scores = [s for s in stored_scores(live, [t["id"] for t in sent]) if s.queue_id]
        job = _queue_job(live, queue_id)
        return len(scores) == TRACES and job is not None and job.status == "failed"

    deadline = time.monotonic() + 120  # as `wait_for`: the one worker may be busy a while
    while not judged():
        assert time.monotonic() < deadline, (len(scores), _queue_job(live, queue_id))
        time.sleep(0.1)
    asked = len(other.chat_requests)
    assert 2 <= asked < TRACES / 2, asked
    job = _queue_job(live, queue_id)
    assert job is not None and judge in job.error and "EndpointDown errors" in job.error
    for score in scores:  # every item says why it has no value
        outcome = score.outcome
        assert score.value is None and outcome["status"] == "error", outcome
        assert outcome["error_type"] in ("EndpointDown", cause), outcome
    down = [s for s in scores if s.outcome["error_type"] == "EndpointDown"]
    assert len(down) >= TRACES - asked
    for score in down:  # the model and the failure that made it down
        assert judge in score.outcome["error_message"], score.outcome
        assert cause in score.outcome["error_message"], score.outcome
