"""`GET /api/v1/dashboard` against a live server on SQLite and PostgreSQL: the figures of known
traces (volume, errors, latency percentiles against numpy, tokens, cost, scores against
`statistics.mean` over the latest score of each trace, labels) overall, per bucket and per
model; a condition; the project filter; and bad parameters answered with a 422 naming them."""

from __future__ import annotations

import random
import statistics
import uuid
from collections import Counter
from datetime import datetime, timedelta, timezone

import numpy
import pytest

from assay.stats.bootstrap import bootstrap_mean_ci

MODELS = ("model-a", "model-b", None)


def known_traces(now: datetime, count: int = 60, seed: int = 7) -> list[dict]:
    """Traces over the last six and a half days with spread latencies, some failed, some
    without latency, tokens or cost."""
    rng = random.Random(seed)
    traces = []
    for index in range(count):
        trace = {
            "id": str(uuid.uuid4()),
            "created_at": (now - timedelta(hours=rng.uniform(0.5, 156))).isoformat(),
            "input": f"question {index}",
            "output": f"answer {index}",
            "metadata": {"cost": round(rng.uniform(0.001, 0.05), 5)} if index % 4 else {},
            "usage": {"input_tokens": rng.randint(10, 900), "output_tokens": rng.randint(1, 300)},
        }
        if MODELS[index % 3]:
            trace["model"] = MODELS[index % 3]
        if index % 9:
            trace["latency_ms"] = round(rng.lognormvariate(6, 0.8), 3)
        if index % 7 == 0:
            trace["error"] = "RateLimitError: slow down"
        traces.append(trace)
    return traces


def day_of(trace: dict) -> str:
    return trace["created_at"][:10]


@pytest.fixture(scope="module")
def seeded(live):
    """A project holding `known_traces`, their scores (a second, later batch replaces some) and
    labels; another project holds traces that must never be counted."""
    now = datetime.now(timezone.utc)
    traces = known_traces(now)
    api = live.client(live.key())
    assert api.post("/traces", json={"traces": traces}).status_code == 202
    rng = random.Random(3)
    first = [
        {"trace_id": t["id"], "criterion": "helpful", "value": rng.randint(1, 5)} for t in traces
    ]
    first += [
        {"trace_id": t["id"], "criterion": "correct", "value": bool(i % 3)}
        for i, t in enumerate(traces[:40])
    ]
    first += [{"trace_id": traces[0]["id"], "criterion": "tone", "value": "friendly"}]
    assert api.post("/traces/scores", json={"scores": first}).status_code == 201
    later = [{"trace_id": t["id"], "criterion": "helpful", "value": 5} for t in traces[:10]]
    later += [{"trace_id": traces[10]["id"], "criterion": "helpful", "status": "error",
               "reason": "judge timed out"}]  # fmt: skip
    assert api.post("/traces/scores", json={"scores": later}).status_code == 201
    for trace in traces[:5]:
        answer = api.post(
            f"/traces/{trace['id']}/labels", json={"criterion": "helpful", "value": 4}
        )
        assert answer.status_code == 201, answer.text
    other = live.client(live.key())
    assert other.post("/traces", json={"traces": known_traces(now, 30, seed=1)}).status_code == 202
    helpful = {s["trace_id"]: float(s["value"]) for s in first if s["criterion"] == "helpful"}
    helpful.update({s["trace_id"]: 5.0 for s in later if s.get("value") is not None})
    del helpful[traces[10]["id"]]  # its latest score is an error: no number
    return api, traces, helpful, first


def test_the_figures_of_known_traces(seeded):
    api, traces, helpful, first = seeded
    answer = api.get("/dashboard", params={"range": "7d"})
    assert answer.status_code == 200, answer.text
    got = answer.json()
    failed = [t for t in traces if t.get("error")]
    latencies = [t["latency_ms"] for t in traces if "latency_ms" in t]
    assert got["traces"] == len(traces) and got["errors"] == len(failed)
    assert got["error_rate"] == pytest.approx(len(failed) / len(traces))
    for p in (50, 95, 99):
        assert got["latency_ms"][f"p{p}"] == pytest.approx(numpy.percentile(latencies, p))
    assert got["latency_ms"]["n"] == len(latencies)
    assert got["tokens"] == {
        "input": sum(t["usage"]["input_tokens"] for t in traces),
        "output": sum(t["usage"]["output_tokens"] for t in traces),
    }
    costs = [t["metadata"]["cost"] for t in traces if "cost" in t["metadata"]]
    assert got["cost"] == pytest.approx(sum(costs)) and got["traces_with_cost"] == len(costs)

    scores = got["scores"]
    assert set(scores) == {"helpful", "correct"}  # "tone" is a label: no mean
    assert scores["helpful"]["n"] == len(helpful)
    assert scores["helpful"]["mean"] == pytest.approx(statistics.mean(helpful.values()))
    low, high = bootstrap_mean_ci(sorted(helpful.values()), resamples=2000)
    assert (scores["helpful"]["low"], scores["helpful"]["high"]) == pytest.approx((low, high))
    assert low < scores["helpful"]["mean"] < high
    correct = [float(s["value"]) for s in first if s["criterion"] == "correct"]
    assert scores["correct"]["mean"] == pytest.approx(statistics.mean(correct))
    assert scores["correct"]["n"] == 40
    assert got["labels"] == {"helpful": 5}


def test_buckets_by_day_and_by_model(seeded):
    api, traces, helpful, _first = seeded
    got = api.get("/dashboard", params={"range": "7d"}).json()
    assert got["bucket"] == "day"
    series = got["series"]
    days = [b["start"][:10] for b in series]
    assert days == sorted(set(days)) and len(days) in (7, 8)  # today's and 7 days before
    per_day = Counter(day_of(t) for t in traces)
    assert {b["start"][:10]: b["traces"] for b in series if b["traces"]} == dict(per_day)
    assert sum(b["traces"] for b in series) == len(traces)
    empty = [b for b in series if b["start"][:10] not in per_day]
    assert all(b["traces"] == 0 and b["latency_ms"]["p50"] is None for b in empty)
    busiest = max(series, key=lambda b: b["traces"])
    day_latencies = [
        t["latency_ms"] for t in traces if day_of(t) == busiest["start"][:10] and "latency_ms" in t
    ]
    assert busiest["latency_ms"]["p95"] == pytest.approx(numpy.percentile(day_latencies, 95))
    day_helpful = [v for k, v in helpful.items() if any(
        t["id"] == k and day_of(t) == busiest["start"][:10] for t in traces)]  # fmt: skip
    assert busiest["scores"]["helpful"]["n"] == len(day_helpful)
    assert busiest["scores"]["helpful"]["mean"] == pytest.approx(statistics.mean(day_helpful))
    assert sum(b["labels"].get("helpful", 0) for b in series) == 5

    models = {m["model"]: m for m in got["models"]}
    assert set(models) == set(MODELS)
    for name in MODELS:
        mine = [t for t in traces if t.get("model") == name]
        assert models[name]["traces"] == len(mine)
        assert models[name]["tokens"]["input"] == sum(t["usage"]["input_tokens"] for t in mine)
        assert models[name]["cost"] == pytest.approx(
            sum(t["metadata"].get("cost", 0) for t in mine)
        )
        assert models[name]["errors"] == sum(1 for t in mine if t.get("error"))


def test_a_condition_and_a_custom_hourly_range(seeded):
    api, traces, _helpful, _first = seeded
    got = api.get("/dashboard", params={"condition": "model = 'model-a' AND score.helpful >= 4"})
    assert got.status_code == 200, got.text
    ids = {t["id"] for t in traces if t.get("model") == "model-a"}
    assert 0 < got.json()["traces"] < len(ids)
    assert got.json()["scores"]["helpful"]["mean"] >= 4
    newest = max(datetime.fromisoformat(t["created_at"]) for t in traces)
    since = (newest - timedelta(hours=20)).isoformat()
    until = (newest + timedelta(minutes=1)).isoformat()
    hourly = api.get("/dashboard", params={"since": since, "until": until}).json()
    assert hourly["bucket"] == "hour" and hourly["range"] is None
    assert len(hourly["series"]) in (21, 22)
    inside = [
        t
        for t in traces
        if newest - timedelta(hours=20) <= datetime.fromisoformat(t["created_at"]) <= newest
    ]
    assert hourly["traces"] == len(inside) and sum(b["traces"] for b in hourly["series"]) == len(
        inside
    )


def test_another_project_sees_only_its_own(live):
    api = live.client(live.key())
    got = api.get("/dashboard", params={"range": "30d"}).json()
    assert got["traces"] == 0 and got["scores"] == {} and got["models"] == []
    assert got["latency_ms"] == {"p50": None, "p95": None, "p99": None, "n": 0}
    assert got["error_rate"] is None and len(got["series"]) in (30, 31)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"since": "yesterday"}, "since"),
        ({"until": "2026-13-01"}, "until"),
        ({"range": "2w"}, "range"),
        ({"range": "7d", "since": "2026-01-01"}, "range"),
        ({"since": "2026-02-01", "until": "2026-01-01"}, "until"),
        ({"since": "2020-01-01", "until": "2026-01-01"}, "since"),
        ({"condition": "model = "}, "condition"),
        ({"condition": "x" * 5000}, "condition"),
    ],
)
def test_bad_parameters_are_named(live, params, field):
    answer = live.client(live.key()).get("/dashboard", params=params)
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["field"] == field, error
    assert field in error["message"] or error.get("field") == field


def test_a_key_is_needed(live):
    assert live.client(None).get("/dashboard").status_code == 401
    ingest_only = live.client(live.key(scopes=("ingest",)))
    assert ingest_only.get("/dashboard").status_code == 403


def test_each_online_evaluators_coverage(live):
    """Rows as an evaluator's job leaves them (written directly: no judge runs): the current
    version's states over the window's traces, against the traces its condition matches."""
    from sqlalchemy import select

    from assay.platform.server.storage import models

    now = datetime.now(timezone.utc)
    api = live.client(live.key())
    traces = known_traces(now, 30, seed=5)
    old = {**known_traces(now, 1, seed=6)[0], "model": "model-a"}
    old["created_at"] = (now - timedelta(days=20)).isoformat()  # outside the 7 days
    assert api.post("/traces", json={"traces": [*traces, old]}).status_code == 202
    mine = [t["id"] for t in traces if t.get("model") == "model-a"]
    states = ["scored"] * 6 + ["error", "pending", "skipped_budget", "judge_down"]
    with live.app.state.assay.transaction() as session:
        pid = session.scalar(
            select(models.Project.id).where(models.Project.name == live.projects[-1])
        )
        rule = models.OnlineEvaluator(
            project_id=pid, name="helpfulness", condition="model = 'model-a'", sample_rate=0.9,
            criteria=["helpful"], judge_model="demo/judge", status="paused", version=2,
        )  # fmt: skip
        idle = models.OnlineEvaluator(
            project_id=pid, name="idle", condition="", sample_rate=0.1, criteria=["helpful"],
            judge_model="demo/judge", status="paused", version=1,
        )  # fmt: skip
        session.add_all([rule, idle])
        session.flush()
        rows = [(2, t, s) for t, s in zip(mine, states, strict=False)]
        rows += [(1, mine[-1], "superseded"), (1, mine[0], "scored"), (2, old["id"], "scored")]
        session.add_all(
            models.OnlineEvaluation(
                project_id=pid,
                evaluator_id=rule.id,
                evaluator_version=version,
                trace_id=t,
                status=s,
            )
            for version, t, s in rows
        )
    assert len(mine) >= len(states)
    got = {e["name"]: e for e in api.get("/dashboard", params={"range": "7d"}).json()["evaluators"]}
    assert got["helpfulness"] == {
        "name": "helpfulness",
        "version": 2,
        "status": "paused",
        "sample_rate": 0.9,
        "matching": len(mine),
        "scored": 6,
        "error": 1,
        "pending": 1,
        "skipped_budget": 1,
        "judge_down": 1,
        "coverage": pytest.approx(6 / len(mine)),
    }
    assert got["idle"]["matching"] == len(traces) and got["idle"]["coverage"] == 0
    narrowed = api.get("/dashboard", params={"condition": "score.helpful >= 0"}).json()
    assert narrowed["evaluators"][0]["matching"] == 0  # nothing here is scored: none match


def test_a_trace_sent_with_an_offset_counts_in_its_utc_hour(live):
    """10:00+02:00 is 08:00 UTC on both backends (SQLite keeps no offset: it is converted)."""
    api = live.client(live.key())
    sent = {"id": str(uuid.uuid4()), "created_at": "2026-03-01T10:30:00+02:00", "input": "q"}
    assert api.post("/traces", json={"traces": [sent]}).status_code == 202
    assert api.get(f"/traces/{sent['id']}").json()["created_at"].startswith("2026-03-01T08:30")
    got = api.get(
        "/dashboard", params={"since": "2026-03-01T08:00:00Z", "until": "2026-03-01T09:00:00Z"}
    ).json()
    assert got["traces"] == 1 and got["series"][0]["traces"] == 1
    before = api.get(
        "/dashboard", params={"since": "2026-03-01T09:00Z", "until": "2026-03-01T11:00Z"}
    )
    assert before.json()["traces"] == 0
