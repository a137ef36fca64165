"""A review queue's judge asks again what it could not ask while it was down
(storage/review_judging.py), against the live server (SQLite and PostgreSQL) and a loopback
judge that can be switched down (500 on every request) and up again.

With the judge down, the items left get `EndpointDown` error scores from the queue, the calls
whose 500s tripped the gate too. A run that a new item starts before `ASSAY_JUDGE_RETRY_AFTER`
has passed leaves them waiting (no request, no new row); once it has passed, the queue's next
run (a new item here) or, separately, the idle worker's wake asks the judge again for exactly
those, and their latest score is the real one; an item with a real score or with another error
(the judge's own 400) is not asked again: the requests the judge receives are counted.
Session-scope queues do the same. The worker's call policy is short (`short_calls`: 2
attempts).
"""

# ruff: noqa: F811  (the fixtures imported below are named again as the tests' arguments)
from __future__ import annotations

import re
import time
import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy import select

from assay.platform.server.storage import models
from assay.platform.server.storage.review_judging import wake_judge_down
from tests.models.fake_openai import dynamic, error, ok, server_error
from tests.platform.test_job_models_down import other, short_calls  # noqa: F401  (fixtures)
from tests.platform.test_online_evaluators import api, trace  # noqa: F401  (api is a fixture)
from tests.platform.test_session_evaluators import turn

DOWN = 6  # items that enter while the judge is down


class Judge:
    """The fake judge's behaviour: down (500 to everything) or up (yes when the judged response
    names Paris; a 400 for a response saying "Broken", an error that is the judge's own)."""

    def __init__(self) -> None:
        self.down = False

    def behaviour(self) -> Any:
        def choose(request: Any) -> Any:
            if self.down:
                return server_error(500)
            judged = re.search(r"<response>(.*?)</response>", request.last_user_text, re.S)
            text = judged.group(1) if judged else ""
            if "Broken" in text:
                return error(400, "this judge cannot read that")
            return ok("yes" if "Paris" in text else "no")

        return dynamic(choose)


def _queue(api: Any, server: Any, name: str = "Judged", **fields: Any) -> int:
    made = api.post(
        "/review-queues",
        json={
            "name": name,
            "criteria": ["Correct"],
            "judge_model": server.model_string(f"judge-{uuid.uuid4().hex[:8]}"),
            "condition": "metadata.env = 'prod'",
        }
        | fields,
    )
    assert made.status_code == 201, made.text
    return int(made.json()["id"])


def _scores(live: Any, queue_id: int) -> dict[str, list[Any]]:
    """Per trace (or session), the queue's scores oldest first."""
    with live.app.state.assay.transaction() as session:
        found: dict[str, list[Any]] = {}
        for model, key in ((models.TraceScore, "trace_id"), (models.SessionScore, "session_id")):
            query = select(model).where(model.queue_id == queue_id).order_by(model.id)
            for row in session.scalars(query):
                found.setdefault(getattr(row, key), []).append(row)
        return found


def _jobs(live: Any, queue_id: int) -> list[models.Job]:
    with live.app.state.assay.transaction() as session:
        J = models.Job
        query = select(J).where(J.kind == "review_judge", J.queue_id == queue_id).order_by(J.id)
        return list(session.scalars(query))


def _settled(live: Any, queue_id: int, status: str) -> bool:
    """The queue's jobs are over and the last one ended `status`."""
    jobs = _jobs(live, queue_id)
    return (
        bool(jobs)
        and all(j.status in ("done", "failed") for j in jobs)
        and (jobs[-1].status == status)
    )


def _until(check: Any, what: Any, seconds: float = 120) -> None:
    """Poll `check` (the package's one scoring worker may be busy with an earlier test's job)."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what()
        time.sleep(0.05)


def _kind(score: Any) -> str:
    return "ok" if score.outcome["status"] == "ok" else score.outcome["error_type"]


def _judge_down(live: Any, api: Any, judge: Judge, queue_id: int, sent: list[str]) -> set[str]:
    """Send the traces `sent` while the judge is down; the ids of those left `EndpointDown`."""
    judge.down = True
    assert api.post("/traces", json={"traces": sent}).status_code == 202
    ids = [t["id"] for t in sent]
    _until(
        lambda: (
            all(i in _scores(live, queue_id) for i in ids) and _settled(live, queue_id, "failed")
        ),
        lambda: (_scores(live, queue_id), _jobs(live, queue_id)),
    )
    scores = _scores(live, queue_id)
    kinds = {i: [_kind(s) for s in scores[i]] for i in ids}
    # the gate tripped after 2 failed attempts: those and the items never asked all wait
    assert all(k == ["EndpointDown"] for k in kinds.values()), kinds
    down = set(ids)
    job = _jobs(live, queue_id)[-1]
    assert "EndpointDown errors" in job.error and "ASSAY_JUDGE_RETRY_AFTER" in job.error
    return down


def test_the_next_run_asks_again_only_what_the_judge_could_not_answer(
    live, api, other, short_calls, monkeypatch
):
    judge = Judge()
    other.default = judge.behaviour()
    queue_id = _queue(api, other)
    right, broken = trace("Paris."), trace("Broken.")
    assert api.post("/traces", json={"traces": [right, broken]}).status_code == 202
    _until(lambda: _settled(live, queue_id, "done"), lambda: _jobs(live, queue_id))
    before = _scores(live, queue_id)
    assert [_kind(s) for s in before[right["id"]]] == ["ok"]
    assert [_kind(s) for s in before[broken["id"]]] == ["ProviderError"]  # the judge's 400

    sent = [trace("Paris.") for _ in range(DOWN)]
    down = _judge_down(live, api, judge, queue_id, sent)
    # items waiting for the judge are not decided yet (their uncertainty comes with the score)
    items = api.get("/review-queues/Judged/traces").json()["items"]
    undecided = {t["id"] for t in items if t["queue_item"]["inclusion_probability"] is None}
    assert undecided == down

    judge.down = False  # back; a new item starts a run before the retry is due: not asked again
    other.reset_records()
    early = trace("Paris.")
    assert api.post("/traces", json={"traces": [early]}).status_code == 202
    _until(
        lambda: early["id"] in _scores(live, queue_id) and _settled(live, queue_id, "done"),
        lambda: _jobs(live, queue_id),
    )
    assert len(other.chat_requests) == 1  # the new item only
    assert all(len(_scores(live, queue_id)[i]) == 1 for i in down)  # no row added meanwhile

    monkeypatch.setenv("ASSAY_JUDGE_RETRY_AFTER", "0")  # the retry is due now
    other.reset_records()
    late = trace("Paris.")
    assert api.post("/traces", json={"traces": [late]}).status_code == 202
    ids = [right["id"], broken["id"], early["id"], late["id"], *(t["id"] for t in sent)]
    _until(
        lambda: late["id"] in _scores(live, queue_id) and _settled(live, queue_id, "done"),
        lambda: _jobs(live, queue_id),
    )
    assert len(other.chat_requests) == len(down) + 1  # the EndpointDown items and the new one
    after = _scores(live, queue_id)
    for trace_id in ids:
        kinds = [_kind(s) for s in after[trace_id]]
        if trace_id in down:  # asked again: the real score appended, the latest
            assert kinds == ["EndpointDown", "ok"], kinds
            assert after[trace_id][-1].value == 1.0
        elif trace_id == broken["id"]:  # the judge's own 400: final, not asked again
            assert kinds == ["ProviderError"]
        else:
            assert kinds == ["ok"], kinds
    # the trace's scores read the latest, and the item is decided now
    items = api.get("/review-queues/Judged/traces").json()["items"]
    assert {item["id"] for item in items} == set(ids)
    for item in items:
        if item["id"] in down:
            assert item["scores"]["Correct"]["outcome"]["status"] == "ok", item["scores"]
            assert item["queue_item"]["inclusion_probability"] == 1.0


def test_an_idle_worker_asks_a_judge_that_is_back(live, api, other, short_calls, monkeypatch):
    judge = Judge()
    other.default = judge.behaviour()
    queue_id = _queue(api, other)
    sent = [trace("Paris.") for _ in range(DOWN)]
    down = _judge_down(live, api, judge, queue_id, sent)
    first = {i: rows[0].created_at for i, rows in _scores(live, queue_id).items()}
    transaction = live.app.state.assay.transaction
    assert wake_judge_down(transaction, timedelta(hours=1)) == 0  # stored a moment ago
    assert len(_jobs(live, queue_id)) == 1

    # still down when woken: asked again (2 attempts), fresh EndpointDown scores, not due again
    other.reset_records()
    monkeypatch.setenv("ASSAY_JUDGE_RETRY_AFTER", "0")  # the run asks what the wake found due
    assert wake_judge_down(transaction, timedelta(0)) >= 1
    _until(
        lambda: len(_jobs(live, queue_id)) == 2 and _settled(live, queue_id, "failed"),
        lambda: _jobs(live, queue_id),
    )
    assert other.chat_requests  # asked again, until the gate tripped
    scores = _scores(live, queue_id)
    again = {i for i in down if _kind(scores[i][-1]) == "EndpointDown"}
    # still one waiting row per item (updated in place, not one more per attempt), dated now
    assert all(len(scores[i]) == 1 for i in down) and again == down
    assert all(scores[i][0].created_at > first[i] for i in down), (first, scores)
    assert wake_judge_down(transaction, timedelta(hours=1)) == 0

    judge.down = False  # back; no new item: the idle worker's own look
    other.reset_records()
    from assay.platform.server.jobs import worker

    monkeypatch.setattr(worker, "DOWN_CHECK_INTERVAL", 0.2)  # the live worker is in-process
    _until(
        lambda: (
            all(_kind(_scores(live, queue_id)[i][-1]) == "ok" for i in again)
            and _settled(live, queue_id, "done")
        ),
        lambda: (_jobs(live, queue_id), other.chat_requests),
    )
    assert len(other.chat_requests) == len(again)  # each once; nothing else asked
    time.sleep(0.6)  # the worker looks every 0.2 s: nothing waits now, no job is added
    assert len(_jobs(live, queue_id)) == 3


def test_a_session_queue_asks_again_the_sessions_its_judge_could_not_judge(
    live, api, other, short_calls, monkeypatch
):
    judge = Judge()
    other.default = judge.behaviour()
    judge.down = True
    queue_id = _queue(api, other, scope="session")
    ids = [f"chat-{uuid.uuid4().hex[:8]}" for _ in range(4)]
    turns = [turn(sid, "What is the capital of France?", "Paris.") for sid in ids]
    assert api.post("/traces", json={"traces": turns}).status_code == 202
    _until(
        lambda: set(ids) <= set(_scores(live, queue_id)) and _settled(live, queue_id, "failed"),
        lambda: (_scores(live, queue_id), _jobs(live, queue_id)),
    )
    first = _scores(live, queue_id)
    down = {sid for sid in ids if _kind(first[sid][0]) == "EndpointDown"}
    assert down == set(ids) and all(len(first[sid]) == 1 for sid in ids)

    monkeypatch.setenv("ASSAY_JUDGE_RETRY_AFTER", "0")  # the retry is due at once
    # still down: a new session's run asks again, and each waits in the one row it had
    still = f"chat-{uuid.uuid4().hex[:8]}"
    assert api.post("/traces", json={"traces": [turn(still, "And Spain?", "Paris.")]}).is_success
    _until(
        lambda: (
            still in _scores(live, queue_id)
            and len(_jobs(live, queue_id)) == 2
            and _settled(live, queue_id, "failed")
        ),
        lambda: _jobs(live, queue_id),
    )
    again = _scores(live, queue_id)
    assert all(len(again[sid]) == 1 for sid in [*ids, still]), again
    assert all(again[sid][0].created_at > first[sid][0].created_at for sid in ids)
    down.add(still)

    judge.down = False  # back: a new session's arrival is the queue's next run
    other.reset_records()
    later = f"chat-{uuid.uuid4().hex[:8]}"
    assert api.post("/traces", json={"traces": [turn(later, "And Italy?", "Paris.")]}).is_success
    _until(
        lambda: later in _scores(live, queue_id) and _settled(live, queue_id, "done"),
        lambda: _jobs(live, queue_id),
    )
    assert len(other.chat_requests) == len(down) + 1
    after = _scores(live, queue_id)
    for sid in down:
        kinds = [_kind(s) for s in after[sid]]
        assert kinds == ["EndpointDown", "ok"], kinds


def test_once_the_judge_is_down_the_calls_that_found_it_down_wait_too() -> None:
    """The 5xx or timeout of a call that tripped the gate is stored as `EndpointDown` (asked
    again later), not as the item's final error; the judge's own refusal (a 400) stays final,
    and nothing is rewritten while the judge is up."""
    from types import SimpleNamespace

    from assay.platform.server.jobs.review_judge import QueueJudgeRun

    def outcomes() -> list[dict[str, Any]]:
        return [
            {"status": "error", "error_type": "ProviderError", "error_message": "HTTP 500"},
            {"status": "error", "error_type": "ModelTimeout", "error_message": "60 s"},
            {"status": "error", "error_type": "BadRequest", "error_message": "HTTP 400"},
            {"status": "error", "error_type": "EndpointDown", "error_message": "not asked"},
            {"status": "ok", "value": 1.0},
        ]

    for down in (True, False):
        run = SimpleNamespace(
            models=SimpleNamespace(is_down=lambda _m, d=down: d, gate=SimpleNamespace(skipped=0))
        )
        stored = QueueJudgeRun.waiting(run, "judge", outcomes())  # type: ignore[arg-type]
        kinds = [o.get("error_type", "ok") for o in stored]
        if down:
            assert kinds == ["EndpointDown", "EndpointDown", "BadRequest", "EndpointDown", "ok"]
            assert stored[0]["error_message"] == "ProviderError: HTTP 500"  # the cause kept
            assert run.models.gate.skipped == 3
        else:
            assert kinds == [o.get("error_type", "ok") for o in outcomes()]
            assert run.models.gate.skipped == 1
