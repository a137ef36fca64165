"""Online evaluators against the real server on SQLite and PostgreSQL, judged by the loopback fake
OpenAI server (yes when the judged response names Paris): traces that arrive and match are
scored once each (again-sent traces, a second backfill and a late second store score nothing);
a paused evaluator takes nothing; a backfill takes older traces; sampling at 0.5 takes the
traces the id hash picks, about half; a daily budget stops at N and says why; a change of rule
is a new version; bad bodies are 4xx naming the field."""

from __future__ import annotations

import re
import time
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from tests.models.fake_openai import dynamic, error, ok


def judge_paris() -> Any:
    def choose(request: Any) -> Any:
        if "broken" in (request.body.get("model") or ""):
            return error(400, "this judge is broken")
        judged = re.search(r"<response>(.*?)</response>", request.last_user_text, re.S)
        return ok("yes" if judged and "Paris" in judged.group(1) else "no")

    return dynamic(choose)


CORRECT = {
    "name": "Correct",
    "phase": "generation",
    "output_type": "bool",
    "criteria_type": "llm_judge",
    "header": "Does the response name the right capital?",
    "bool_true": "It names the right capital.",
    "bool_false": "It does not.",
}
NAMES_PARIS = {
    "name": "Names Paris",
    "phase": "generation",
    "output_type": "bool",
    "criteria_type": "function",
    "function_name": "string_match",
    "match_type": "regex_match",
    "match_pattern": "paris",
    "case_sensitive": False,
}


def trace(output: str = "Paris.", env: str = "prod", **fields: Any) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:8]  # no two traces ask the judge the same (no cached answer)
    return {
        "id": str(uuid.uuid4()),
        "input": f"What is the capital of France? ({tag})",
        "output": output,
        "metadata": {"env": env},
    } | fields


def evaluator(fake: Any, name: str = "Prod", **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "condition": "metadata.env = 'prod'",
        "criteria": ["Correct"],
        "judge_model": fake.model_string(f"judge-{uuid.uuid4().hex[:8]}"),
    } | fields


def stored_scores(live: Any, trace_ids: list[str]) -> list[Any]:
    from sqlalchemy import select

    from assay.platform.server.storage import models

    with live.app.state.assay.transaction() as session:
        query = select(models.TraceScore).where(models.TraceScore.trace_id.in_(trace_ids))
        return list(session.scalars(query))


def wait_for(api: Any, name: str, done: Any, timeout: float = 120) -> dict[str, Any]:
    """The evaluator's JSON once `done(it)` holds (polled), else a failure showing it. The bound
    is generous: the package's server has one worker, which a job of an earlier test (a run
    cancelled with calls in flight) can hold for a while on a loaded machine."""
    deadline = time.monotonic() + timeout
    while True:
        state = api.get(f"/evaluators/{name}").json()
        if done(state):
            return state
        assert time.monotonic() < deadline, repr(state)
        time.sleep(0.1)


def settled(state: dict[str, Any]) -> bool:
    return state["traces"]["pending"] == 0


@pytest.fixture
def api(live: Any, fake: Any) -> Any:
    fake.default = judge_paris()
    with live.client(live.key()) as client:
        for criterion in (CORRECT, NAMES_PARIS):
            assert client.post("/criteria", json=criterion).status_code == 201
        yield client


def test_arriving_traces_are_scored_once_and_show_on_the_trace(live, fake, api):
    made = api.post("/evaluators", json=evaluator(fake, criteria=["Correct", "Names Paris"]))
    assert made.status_code == 201, made.text
    body = made.json()
    assert (body["status"], body["version"], body["source"]) == ("active", 1, "evaluator:Prod@v1")
    right, wrong, dev = trace("Paris."), trace("Rome."), trace("Paris.", env="dev")
    assert api.post("/traces", json={"traces": [right, wrong, dev]}).status_code == 202
    state = wait_for(api, "Prod", lambda s: s["traces"]["scored"] == 2 and settled(s))
    assert state["traces"] == {
        "pending": 0,
        "scored": 2,
        "error": 0,
        "skipped_budget": 0,
        "judge_down": 0,
    }
    done = wait_for(api, "Prod", lambda s: s["job"]["status"] == "done")  # the worker's run
    assert done["job"]["error"] is None and done["job"]["finished_at"]
    scores = stored_scores(live, [right["id"], wrong["id"], dev["id"]])
    by = {(s.trace_id, s.criterion): s for s in scores}
    assert len(scores) == 4 and {s.source for s in scores} == {"evaluator:Prod@v1"}
    assert by[(right["id"], "Correct")].value == 1.0 and by[(wrong["id"], "Correct")].value == 0.0
    assert by[(right["id"], "Names Paris")].value == 1.0
    shown = api.get(f"/traces/{right['id']}").json()["scores"]["Correct"]
    assert shown["value"] == 1.0 and shown["source"] == "evaluator:Prod@v1"
    listed = api.get("/traces", params={"condition": "score.Correct = 1"}).json()["items"]
    assert [t["id"] for t in listed] == [right["id"]]  # the explorer's condition reads them
    # sent again, backfilled again: nothing is judged or stored twice
    calls = len(fake.chat_requests)
    assert api.post("/traces", json={"traces": [right, wrong]}).json()["duplicates"] == 2
    since = (datetime.now(timezone.utc) - timedelta(hours=1)).isoformat()
    again = api.post("/evaluators/Prod/backfill", json={"since": since})
    assert again.status_code == 200 and again.json()["taken"] == 0
    time.sleep(0.5)
    assert len(stored_scores(live, [right["id"], wrong["id"]])) == 4
    assert len(fake.chat_requests) == calls


def test_a_second_store_of_the_same_rows_stores_nothing(live, fake, api):
    """What a crashed worker's late write, or a second worker on the same rows, meets."""
    from assay.platform.server.storage.evaluator_runs import EvaluationRuns, Judged

    made = api.post("/evaluators", json=evaluator(fake)).json()
    one = trace()
    api.post("/traces", json={"traces": [one]})
    wait_for(api, "Prod", lambda s: s["traces"]["scored"] == 1)
    from sqlalchemy import select

    from assay.platform.server.storage import models

    state = live.app.state.assay
    with state.transaction() as session:
        run = session.scalar(
            select(models.OnlineEvaluation).where(models.OnlineEvaluation.trace_id == one["id"])
        )
        late = Judged(
            run.id,
            one["id"],
            [
                {
                    "trace_id": one["id"],
                    "criterion": "Correct",
                    "value": 0.0,
                    "outcome": {"status": "ok", "value": 0.0},
                    "source": "evaluator:Prod@v1",
                    "queue_id": None,
                }
            ],
        )
        stored = EvaluationRuns(session, run.project_id).store(made["id"], [late])
    assert stored == {"scored": 0, "error": 0, "skipped_budget": 0, "judge_down": 0}
    assert [s.value for s in stored_scores(live, [one["id"]])] == [1.0]


def test_a_paused_evaluator_takes_nothing_until_resumed_and_backfilled(live, fake, api):
    api.post("/evaluators", json=evaluator(fake))
    paused = api.post("/evaluators/Prod/pause")
    assert paused.status_code == 200 and paused.json()["status"] == "paused"
    while_paused = trace()
    api.post("/traces", json={"traces": [while_paused]})
    time.sleep(0.5)
    assert stored_scores(live, [while_paused["id"]]) == []
    assert api.get("/evaluators/Prod").json()["traces"]["pending"] == 0
    resumed = api.post("/evaluators/Prod/resume").json()
    assert resumed["status"] == "active"
    after = trace("Rome.")
    api.post("/traces", json={"traces": [after]})
    wait_for(api, "Prod", lambda s: s["traces"]["scored"] == 1 and settled(s))
    assert stored_scores(live, [while_paused["id"]]) == []  # not taken while paused
    since = (datetime.now(timezone.utc) - timedelta(minutes=5)).isoformat()
    backfilled = api.post("/evaluators/Prod/backfill", json={"since": since}).json()
    assert backfilled["taken"] == 1
    wait_for(api, "Prod", lambda s: s["traces"]["scored"] == 2 and settled(s))
    assert [s.value for s in stored_scores(live, [while_paused["id"]])] == [1.0]


def test_backfill_since_takes_older_traces_in_its_range_only(live, fake, api):
    now = datetime.now(timezone.utc)
    old = trace(created_at=(now - timedelta(days=3)).isoformat())
    older = trace(created_at=(now - timedelta(days=10)).isoformat())
    api.post("/traces", json={"traces": [old, older]})
    api.post("/evaluators", json=evaluator(fake))
    time.sleep(0.3)
    assert stored_scores(live, [old["id"], older["id"]]) == []  # stored before: not taken
    since = (now - timedelta(days=5)).isoformat()
    answer = api.post("/evaluators/Prod/backfill", json={"since": since, "until": now.isoformat()})
    assert answer.status_code == 200 and answer.json()["taken"] == 1
    wait_for(api, "Prod", lambda s: s["traces"]["scored"] == 1 and settled(s))
    assert len(stored_scores(live, [old["id"]])) == 1
    assert stored_scores(live, [older["id"]]) == []


def test_sampling_at_half_takes_the_hashed_half_and_the_same_again(live, fake, api):
    from assay.platform.server.storage.evaluator_rules import sampled

    made = api.post("/evaluators", json=evaluator(fake, sample_rate=0.5, criteria=["Names Paris"]))
    ident = made.json()["id"]
    traces = [trace() for _ in range(60)]
    api.post("/traces", json={"traces": traces})
    expected = {t["id"] for t in traces if sampled(ident, t["id"], 0.5)}
    assert 18 <= len(expected) <= 42  # about half (binomial 60 x 0.5: 6 standard deviations)
    wait_for(api, "Prod", lambda s: s["traces"]["scored"] == len(expected) and settled(s))
    scored = {s.trace_id for s in stored_scores(live, [t["id"] for t in traces])}
    assert scored == expected
    # a new version samples the same traces: a backfill of the new version takes exactly them
    changed = api.put(
        "/evaluators/Prod", json=evaluator(fake, sample_rate=0.5, criteria=["Correct"])
    )
    assert changed.status_code == 200 and changed.json()["version"] == 2
    since = (datetime.now(timezone.utc) - timedelta(minutes=5)).isoformat()
    backfilled = api.post("/evaluators/Prod/backfill", json={"since": since}).json()
    assert backfilled["taken"] == len(expected)
    wait_for(api, "Prod", lambda s: s["traces"]["scored"] == len(expected) and settled(s))
    # (every test leaves its evaluators settled: the next test's fake is another server)


def test_a_daily_budget_stops_at_n_and_says_why(live, fake, api):
    api.post("/evaluators", json=evaluator(fake, daily_budget=3))
    traces = [trace() for _ in range(7)]
    api.post("/traces", json={"traces": traces})
    state = wait_for(api, "Prod", settled)
    assert state["traces"] == {
        "pending": 0,
        "scored": 3,
        "error": 0,
        "skipped_budget": 4,
        "judge_down": 0,
    }
    assert state["judged_today"] == 3 and state["budget_exhausted"] is True
    assert len(stored_scores(live, [t["id"] for t in traces])) == 3
    from sqlalchemy import select

    from assay.platform.server.storage import models

    with live.app.state.assay.transaction() as session:
        reasons = set(
            session.scalars(
                select(models.OnlineEvaluation.reason).where(
                    models.OnlineEvaluation.status == "skipped_budget",
                    models.OnlineEvaluation.evaluator_id == state["id"],
                )
            )
        )
    assert len(reasons) == 1 and "daily budget of 3 traces" in reasons.pop()


def test_a_broken_judge_is_a_typed_error_and_the_last_error(live, fake, api):
    api.post("/evaluators", json=evaluator(fake, judge_model=fake.model_string("broken")))
    one = trace()
    api.post("/traces", json={"traces": [one]})
    state = wait_for(api, "Prod", lambda s: s["traces"]["error"] == 1)
    assert "broken" in state["last_error"] and state["last_error_at"]
    (score,) = stored_scores(live, [one["id"]])
    assert score.value is None and score.outcome["status"] == "error"


def test_bad_bodies_are_4xx_naming_the_field(live, fake, api):
    good = evaluator(fake)
    cases = {
        "sample_rate": good | {"sample_rate": 1.5},
        "criteria": good | {"criteria": []},
        "criteria[1]": good | {"criteria": ["Correct", "Nope"]},
        "condition": good | {"condition": "model = "},
        "scope": good | {"scope": "conversation"},
        "settle_seconds": good | {"scope": "session", "settle_seconds": -1},
        "daily_budget": good | {"daily_budget": 0},
        "judge_model": good | {"judge_model": " "},
    }
    unknown_provider = api.post("/evaluators", json=good | {"judge_model": "nosuch/model-1"})
    assert unknown_provider.status_code == 422, unknown_provider.text  # refused when saved
    assert unknown_provider.json()["error"]["field"] == "judge_model"
    for field, body in cases.items():
        answer = api.post("/evaluators", json=body)
        assert answer.status_code == 422, (field, answer.text)
        assert answer.json()["error"]["field"] == field, answer.json()
    assert api.post("/evaluators", json=good).status_code == 201
    taken = api.post("/evaluators", json=good)
    assert taken.status_code == 409 and taken.json()["error"]["existing_id"]
    assert api.get("/evaluators/Nope").status_code == 404
    renamed = api.put("/evaluators/Prod", json=good | {"name": "Other"})
    assert renamed.status_code == 422 and renamed.json()["error"]["field"] == "name"
    backwards = api.post(
        "/evaluators/Prod/backfill",
        json={"since": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z"},
    )
    assert backwards.status_code == 422 and backwards.json()["error"]["field"] == "until"
    unchanged = api.put("/evaluators/Prod", json=good | {"daily_budget": 5})
    assert unchanged.json()["version"] == 1  # a budget does not decide a score
    with live.client(None) as anonymous:
        assert anonymous.get("/evaluators").status_code == 401
    read_only = live.key(scopes=("read",))
    with live.client(read_only) as reader:
        assert reader.post("/evaluators", json=good | {"name": "X"}).status_code == 403
    listed = api.get("/evaluators").json()["items"]
    assert [e["name"] for e in listed] == ["Prod"]
    assert api.delete("/evaluators/Prod").status_code == 204
    assert api.get("/evaluators/Prod").status_code == 404


def test_traces_from_an_otlp_export_are_taken_too(live, fake, api):
    from tests.platform.test_otlp import otlp_json

    api.post("/evaluators", json=evaluator(fake, condition="", criteria=["Names Paris"]))
    trace_hex = uuid.uuid4().hex
    body = otlp_json(
        trace_hex, "00f067aa0ba902b7", **{"input.value": "hi", "output.value": "Paris"}
    )
    sent = api.post(f"{live.base_url}/otlp/v1/traces", json=body)
    assert sent.status_code == 200, sent.text
    wait_for(api, "Prod", lambda s: s["traces"]["scored"] == 1 and settled(s))
    (score,) = stored_scores(live, [str(uuid.UUID(hex=trace_hex))])
    assert score.value == 1.0 and score.source == "evaluator:Prod@v1"


def test_a_backfill_goes_page_by_page_and_takes_every_page(live, fake, api, monkeypatch):
    from assay.platform.server.storage import evaluators as storage

    monkeypatch.setattr(storage, "BACKFILL_PAGE", 2)  # one transaction a page, 3 pages here
    day_ago = (datetime.now(timezone.utc) - timedelta(days=1)).isoformat()
    old = [trace(created_at=day_ago) for _ in range(5)]
    api.post("/traces", json={"traces": old})
    api.post("/evaluators", json=evaluator(fake, criteria=["Names Paris"]))
    since = (datetime.now(timezone.utc) - timedelta(days=2)).isoformat()
    answer = api.post("/evaluators/Prod/backfill", json={"since": since})
    assert answer.status_code == 200 and answer.json()["taken"] == 5
    wait_for(api, "Prod", lambda s: s["traces"]["scored"] == 5 and settled(s))
    assert len(stored_scores(live, [t["id"] for t in old])) == 5
