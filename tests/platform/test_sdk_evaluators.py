"""The SDK's `OnlineEvaluator` against the real server on SQLite and PostgreSQL (the loopback fake
as the judge): save, a same-name save that is a new version only when the rule changed,
download by name and id, pause and resume, backfill(since=timedelta) scoring an older trace,
delete; bad arguments refused on construction, naming the field; a session-scope evaluator
saved and downloaded with its settle interval, its scores read from `Session.download`."""

from __future__ import annotations

import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from tests.platform.test_online_evaluators import (
    CORRECT,
    judge_paris,
    settled,
    stored_scores,
    trace,
)


def test_bad_arguments_name_the_field():
    from assay.platform import OnlineEvaluator, ValidationFailed

    cases = {
        "name": {"name": " "},
        "sample_rate": {"sample_rate": 2},
        "criteria": {"criteria": []},
        "judge_model": {"judge_model": None},
        "scope": {"scope": "conversation"},
        "daily_budget": {"daily_budget": 0},
        "settle_seconds": {"scope": "session", "settle_seconds": -1},
    }
    good = {"name": "E", "criteria": ["Correct"], "judge_model": "openai/gpt-4o-mini"}
    for field, change in cases.items():
        with pytest.raises(ValidationFailed) as refused:
            OnlineEvaluator(**(good | change))
        assert refused.value.field == field


def test_save_version_pause_backfill_and_delete(live, fake, sdk):
    from assay.platform import Criteria, NotFound, OnlineEvaluator
    from assay.platform.sdk.client import current

    fake.default = judge_paris()
    correct = Criteria.from_dict(CORRECT)
    judge = fake.model_string(f"judge-{uuid.uuid4().hex[:8]}")
    evaluator = OnlineEvaluator(
        name="Prod answers",
        condition="metadata.env = 'prod'",
        sample_rate=1.0,
        criteria=[correct],  # saved on the way
        judge_model=judge,
    )
    assert evaluator.save() is evaluator
    assert (evaluator.status, evaluator.version) == ("active", 1)
    assert evaluator.source == "evaluator:Prod answers@v1"
    same = OnlineEvaluator("Prod answers", "metadata.env = 'prod'", 1.0, ["Correct"], judge)
    assert same.save().version == 1 and same.id == evaluator.id  # nothing changed: same version
    halved = OnlineEvaluator("Prod answers", "metadata.env = 'prod'", 0.5, ["Correct"], judge)
    assert halved.save().version == 2  # a same-name save with another rule: the next version
    fetched = OnlineEvaluator.download(name="Prod answers")
    assert (fetched.sample_rate, fetched.criteria, fetched.judge_model) == (
        0.5,
        ["Correct"],
        judge,
    )
    assert OnlineEvaluator.download(id=evaluator.id).name == "Prod answers"
    with pytest.raises(NotFound):
        OnlineEvaluator.download(name="nothing")

    evaluator = OnlineEvaluator("Prod answers", "metadata.env = 'prod'", 1.0, ["Correct"], judge)
    evaluator.save()
    assert evaluator.version == 3
    assert evaluator.pause().status == "paused"
    old = trace(created_at=(datetime.now(timezone.utc) - timedelta(days=2)).isoformat())
    current().request("POST", "/traces", json={"traces": [old]})
    assert evaluator.resume().status == "active"
    assert evaluator.backfill(since=timedelta(days=3)) == 1
    deadline = datetime.now(timezone.utc) + timedelta(seconds=30)
    while not (evaluator.refresh().traces.get("scored") == 1 and settled(vars(evaluator))):
        assert datetime.now(timezone.utc) < deadline, evaluator.traces
        time.sleep(0.1)
    (score,) = stored_scores(live, [old["id"]])
    assert score.value == 1.0 and score.source == "evaluator:Prod answers@v3"
    evaluator.delete()
    with pytest.raises(NotFound):
        OnlineEvaluator.download(name="Prod answers")
    assert len(stored_scores(live, [old["id"]])) == 1  # its scores stay


def test_a_session_evaluator_scores_land_on_the_session(live, fake, sdk):
    from assay.platform import Criteria, OnlineEvaluator, Session, Trace

    fake.default = judge_paris()
    Criteria.from_dict(CORRECT).save()
    chats = OnlineEvaluator(
        name="Chats",
        criteria=["Correct", "step_efficiency"],
        judge_model=fake.model_string(f"judge-{uuid.uuid4().hex[:8]}"),
        scope="session",
        settle_seconds=0,
    ).save()
    same = OnlineEvaluator.download(name="Chats")
    assert (same.scope, same.settle_seconds, same.criteria) == (
        "session",
        0,
        ["Correct", "step_efficiency"],
    )
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    Trace(input="Capital of France?", output="Paris.", metadata={"session_id": chat}).save()
    deadline = time.monotonic() + 120
    while not chats.refresh().sessions["scored"]:
        assert time.monotonic() < deadline, chats.sessions
        time.sleep(0.1)
    session = Session.download(chat)
    assert session.scores["Correct"]["value"] == 1.0
    assert session.scores["step_efficiency"]["outcome"]["status"] == "skipped"
    assert [s["criterion"] for s in session.score_history] == ["step_efficiency", "Correct"]
