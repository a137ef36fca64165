"""Review where it teaches most (#42, 4): a judged queue records how unsure its judge was of each
trace, serves the least sure first when ordered by uncertainty, and, when it samples, keeps about
its rate of traces (the unsure ones likelier) with each one's chance stored for an unbiased,
inverse-probability-weighted estimate from the labels.

The maths are pinned on fixed numbers; the queue runs on a live server (SQLite and PostgreSQL)
whose judge is the loopback fake, scripted to be sure (5), unsure (3) or in between (4)."""

from __future__ import annotations

import json
import re
import time
import uuid

import pytest
from sqlalchemy import text

from assay.platform.server.storage.review_locks import Locks
from assay.platform.server.storage.review_sampling import (
    MIN_PROBABILITY,
    inclusion_probability,
    kept,
    most_unsure,
    uncertainty,
)
from tests.models.fake_openai import dynamic, ok

SCORES = {"sure": 5, "unsure": 3, "leaning": 4}


def test_uncertainty_is_distance_from_a_sure_answer():
    assert uncertainty({"status": "ok", "value": 1.0, "probability": 0.5}) == 1.0
    assert uncertainty({"status": "ok", "value": 1.0, "probability": 0.9}) == pytest.approx(0.2)
    assert uncertainty({"status": "ok", "value": 3.0}) == 1.0  # the middle of a 5-point scale
    assert uncertainty({"status": "ok", "value": 4.0}) == 0.5
    assert uncertainty({"status": "ok", "value": 5.0}) == 0.0
    assert uncertainty({"status": "ok", "value": 0.0}) == 0.0
    assert uncertainty({"status": "ok", "value": 0.25}) == 0.5
    assert uncertainty({"status": "error", "error_type": "X"}) is None
    assert uncertainty({"status": "ok", "value": 42.0}) is None
    assert most_unsure([{"status": "ok", "value": 5.0}, {"status": "ok", "value": 4.0}]) == 0.5
    assert most_unsure([{"status": "skipped"}]) is None


def test_the_chance_of_review_averages_to_the_rate_and_the_draw_matches_it():
    rate = 0.3
    grid = [i / 100 for i in range(101)]  # uncertainties spread evenly
    mean = sum(inclusion_probability(rate, u) for u in grid) / len(grid)
    assert mean == pytest.approx(rate, abs=1e-9)
    assert inclusion_probability(0.9, 1.0) == 1.0  # capped
    assert inclusion_probability(0.001, 0.0) == MIN_PROBABILITY  # never zero
    assert inclusion_probability(rate, None) == rate  # not judged: the plain rate
    ids = [f"trace-{i}" for i in range(4000)]
    share = sum(kept(7, t, 0.25) for t in ids) / len(ids)
    assert share == pytest.approx(0.25, abs=0.03)  # the draw is uniform
    assert [kept(7, t, 0.25) for t in ids[:50]] == [kept(7, t, 0.25) for t in ids[:50]]
    assert [kept(7, t, 0.5) for t in ids[:200]] != [kept(8, t, 0.5) for t in ids[:200]]


def _judge(request):
    judged = re.search(r"<response>(.*?)</response>", request.last_user_text, re.S)
    word = judged.group(1).strip() if judged else "sure"
    score = SCORES.get(word.split()[0], 5)
    return ok(json.dumps({"feedback": "ok", "reason": word, "score": score}))


def _setup(api, fake, queue: dict):
    criterion = api.post(
        "/criteria",
        json={
            "name": "Relevance",
            "output_type": "5-point",
            "header": "How relevant is the answer?",
            **{f"likert_score_{i}": f"level {i}" for i in range(1, 6)},
        },
    )
    assert criterion.status_code == 201, criterion.text
    made = api.post(
        "/review-queues",
        json={
            "name": "Q",
            "criteria": ["Relevance"],
            "judge_model": fake.model_string("judge"),
            **queue,
        },
    )
    assert made.status_code == 201, made.text
    return made.json()


def _traces(api, words):
    ids = []
    for word in words:
        trace_id = str(uuid.uuid4())
        body = {"id": trace_id, "input": "What is the capital of France?", "output": word}
        assert api.post("/traces", json={"traces": [body]}).status_code in (200, 201, 202)
        ids.append(trace_id)
    return ids


def _items(api, n):
    deadline = time.monotonic() + 60
    while True:
        got = api.get("/review-queues/Q/traces", params={"limit": 500}).json()["items"]
        decided = [t for t in got if t["queue_item"]["inclusion_probability"] is not None]
        if len(decided) == n:
            return {t["id"]: t["queue_item"] for t in got}
        assert time.monotonic() < deadline, f"{len(decided)} of {n} items decided"
        time.sleep(0.1)


def test_a_queue_by_uncertainty_serves_the_least_sure_first(live, fake):
    fake.default = dynamic(_judge)
    with live.client(live.key()) as api:
        made = _setup(api, fake, {"order": "uncertainty"})
        assert made["order"] == "uncertainty" and made["sample_rate"] is None
        sure, leaning, unsure = _traces(api, ["sure", "leaning", "unsure"])
        items = _items(api, 3)
        assert [items[t]["uncertainty"] for t in (sure, leaning, unsure)] == [0.0, 0.5, 1.0]
        assert {i["status"] for i in items.values()} == {"pending"}
        assert {i["inclusion_probability"] for i in items.values()} == {1.0}
        state = live.app.state.assay
        with state.transaction() as session:
            project_id = session.execute(
                text("SELECT project_id FROM review_queues WHERE id = :q"), {"q": made["id"]}
            ).scalar_one()
            locks = Locks(session, project_id)
            first = locks.next_free_item(made["id"], 1, 0, by_uncertainty=True)
            assert first is not None and first.trace_id == unsure
            second = locks.next_free_item(made["id"], 1, first.id, by_uncertainty=True)
            assert second is not None and second.trace_id == leaning  # the one left is skipped
            arrival = locks.next_free_item(made["id"], 1, 0)
            assert arrival is not None and arrival.trace_id == sure  # the plain order is kept


def test_a_sampling_queue_keeps_about_its_rate_and_stores_each_chance(live, fake):
    fake.default = dynamic(_judge)
    words = ["sure", "leaning", "unsure"] * 10
    with live.client(live.key()) as api:
        made = _setup(api, fake, {"sample_rate": 0.5})
        ids = _traces(api, words)
        items = _items(api, len(ids))
        for trace_id, word in zip(ids, words, strict=True):
            item = items[trace_id]
            chance = inclusion_probability(0.5, {"sure": 0.0, "leaning": 0.5, "unsure": 1.0}[word])
            assert item["inclusion_probability"] == pytest.approx(chance)
            expected = "pending" if kept(made["id"], trace_id, chance) else "unsampled"
            assert item["status"] == expected
        counts = api.get("/review-queues/Q").json()["items"]
        assert counts["unsampled"] == sum(i["status"] == "unsampled" for i in items.values())
        assert counts["pending"] + counts["unsampled"] == len(ids)
        # every unsure trace is kept (chance 0.75 each is not certain, but sure ones are rarer)
        kept_by_word = {
            w: sum(
                items[t]["status"] == "pending" for t, x in zip(ids, words, strict=True) if x == w
            )
            for w in SCORES
        }
        assert kept_by_word["unsure"] >= kept_by_word["sure"]
        # a label exported carries the chance its trace had, for inverse-probability weights
        target = next(t for t in ids if items[t]["status"] == "pending")
        labelled = api.post(
            f"/traces/{target}/labels",
            json={"criterion": "Relevance", "value": 4, "queue": "Q"},
        )
        assert labelled.status_code in (200, 201), labelled.text
        rows = api.get("/review-queues/Q/export").json()["rows"]
        assert [r["inclusion_probability"] for r in rows] == [
            items[target]["inclusion_probability"]
        ]
        assert rows[0]["uncertainty"] == items[target]["uncertainty"]


def test_ordering_or_sampling_needs_a_judge(live):
    with live.client(live.key()) as api:
        for body, field in (
            ({"name": "A", "order": "uncertainty"}, "order"),
            ({"name": "B", "sample_rate": 0.5}, "sample_rate"),
        ):
            refused = api.post("/review-queues", json=body)
            assert refused.status_code == 422 and refused.json()["error"]["field"] == field
        for rate in (0, 1.5, "half"):
            refused = api.post("/review-queues", json={"name": "C", "sample_rate": rate})
            assert refused.status_code == 422, refused.text
            assert "sample_rate" in refused.json()["error"]["field"]
        assert api.get("/review-queues").json()["items"] == []
