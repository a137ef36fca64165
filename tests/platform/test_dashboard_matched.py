"""The dashboard with a condition matches it once (`storage/dashboard_matched.py`), against a live
server on SQLite and PostgreSQL: every figure query (volume, latency ranks, scores, labels,
evaluators' states and matching counts, the trust panel) answers the same rows narrowed as when
each query matches the condition itself, over traces inside and outside the window, scored,
labelled (a label given now on a trace older than the window), failed and from an experiment;
the temporary table is gone after the block, also after an error; on SQLite a narrowed dashboard
takes no write lock (ingest goes on); a model condition reads the (project, model, created_at)
index."""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import select, text

from assay.platform.server.storage import models
from assay.platform.server.storage.dashboard import DashboardRepo
from assay.platform.server.storage.dashboard_figures import figures
from assay.platform.server.storage.dashboard_matched import NAME, narrowed
from assay.platform.server.storage.dashboard_window import window_of
from assay.platform.server.storage.trace_fields import compile_condition
from assay.platform.server.storage.trust_figures import trust

CONDITIONS = (
    "model = 'model-a'",
    "score.helpful >= 3",
    "NOT (model = 'model-b') AND latency_ms > 300",
    "label.helpful = 4 OR error like '%Rate%'",
)


def traces_of(now: datetime, rng: random.Random) -> list[dict[str, Any]]:
    found = []
    for index in range(48):
        days = rng.uniform(0.1, 6.8) if index % 8 else rng.uniform(7.5, 9)  # some before the 7d
        trace: dict[str, Any] = {
            "id": str(uuid.uuid4()),
            "created_at": (now - timedelta(days=days)).isoformat(),
            "input": f"question {index}",
            "output": f"answer {index}",
            "metadata": {"cost": round(rng.uniform(0.001, 0.05), 5)} if index % 3 else {},
            "usage": {"input_tokens": rng.randint(5, 900), "output_tokens": rng.randint(1, 300)},
            "model": ("model-a", "model-b", "model-c")[index % 3],
        }
        if index % 5:
            trace["latency_ms"] = round(rng.lognormvariate(6, 0.8), 3)
        if index % 7 == 0:
            trace["error"] = "RateLimitError: slow down"
        found.append(trace)
    return found


@pytest.fixture(scope="module")
def project(live):
    """A project's traces, scores (some replaced later), labels (one on a trace older than the
    window), an experiment's generation among them and an online evaluator's states."""
    now = datetime.now(timezone.utc)
    rng = random.Random(11)
    api = live.client(live.key())
    traces = traces_of(now, rng)
    assert api.post("/traces", json={"traces": traces}).status_code == 202
    scores = [
        {"trace_id": t["id"], "criterion": "helpful", "value": rng.randint(1, 5)} for t in traces
    ]
    scores += [{"trace_id": t["id"], "criterion": "correct", "value": bool(i % 2)}
               for i, t in enumerate(traces[:30])]  # fmt: skip
    assert api.post("/traces/scores", json={"scores": scores}).status_code == 201
    later = [{"trace_id": t["id"], "criterion": "helpful", "value": 4} for t in traces[:9]]
    assert api.post("/traces/scores", json={"scores": later}).status_code == 201
    for trace in traces[:12]:  # traces[0] and [8] are older than the 7 days
        answer = api.post(
            f"/traces/{trace['id']}/labels", json={"criterion": "helpful", "value": 4}
        )
        assert answer.status_code == 201, answer.text
    with live.app.state.assay.transaction() as session:
        pid = session.scalar(
            select(models.Project.id).where(models.Project.name == live.projects[-1])
        )
        session.execute(  # an experiment's published generation: not traffic
            models.LoggedTrace.__table__.update()
            .where(models.LoggedTrace.id == traces[1]["id"])
            .values(experiment_id=99)
        )
        rule = models.OnlineEvaluator(
            project_id=pid, name="slow", condition="latency_ms > 200", sample_rate=1.0,
            criteria=["helpful"], judge_model="demo/judge", status="paused", version=1,
        )  # fmt: skip
        session.add(rule)
        session.flush()
        session.add_all(
            models.OnlineEvaluation(
                project_id=pid,
                evaluator_id=rule.id,
                evaluator_version=1,
                trace_id=t["id"],
                status=("scored", "error", "pending")[i % 3],
            )
            for i, t in enumerate(traces[:30])
        )
    return pid


def every_query(repo: DashboardRepo, session: Any, evaluator: Any) -> dict[str, Any]:
    """What each figure query answers, in a set order (the rows come in none)."""
    volume = sorted(
        (r.key, r.model or "", r.traces, r.errors, r.input_tokens, r.output_tokens, r.with_cost)
        for r in repo.volume()
    )
    costs = sorted((r.key, r.model or "", round(float(r.cost or 0), 9)) for r in repo.volume())
    buckets, overall = repo.latency()
    return {
        "volume": volume,
        "costs": costs,
        "latency": (sorted(buckets.items()), overall),
        "scores": sorted((k, c, float(v)) for k, c, v in repo.score_values()),
        "labels": sorted((k, c, int(n)) for k, c, n in repo.label_counts()),
        "evaluations": repo.evaluation_counts(),
        "matching": (repo.matching(None), repo.matching(compile_condition(evaluator))),
        "trust": trust(session, repo.project_id, repo.window, repo.traces_where()),
    }


def temporary_table_left(session: Any, postgres: bool) -> bool:
    if postgres:
        return session.scalar(text(f"SELECT to_regclass('pg_temp.{NAME}')")) is not None
    found = text("SELECT count(*) FROM sqlite_temp_master WHERE name = :name")
    return bool(session.scalar(found, {"name": NAME}))


@pytest.mark.parametrize(
    ("condition", "include_experiments"),
    [*((c, False) for c in CONDITIONS), (CONDITIONS[0], True)],
)
def test_narrowed_queries_answer_what_each_query_matched(live, project, condition, include_experiments):  # fmt: skip
    window = window_of("7d", None, None, datetime.now(timezone.utc))
    with live.app.state.assay.transaction() as session:
        repo = DashboardRepo(
            session,
            project,
            window,
            compile_condition(condition),
            include_experiments=include_experiments,
        )
        scanned = every_query(repo, session, "latency_ms > 200")
        with narrowed(repo):
            assert repo.matched is not None
            matched = session.scalar(text(f"SELECT count(*) FROM {NAME}"))
            found = every_query(repo, session, "latency_ms > 200")
        assert repo.matched is None and not temporary_table_left(session, repo.postgres)
    assert found == scanned
    assert matched == sum(row[2] for row in scanned["volume"]) and matched > 0
    assert scanned["labels"], "a label in the window on a matching trace"


def test_the_api_figures_with_a_condition(live, project):
    """The figures the API answers are those of the unnarrowed queries, and the narrowing
    leaves nothing behind in the connection."""
    window = window_of("7d", None, None, datetime.now(timezone.utc))
    condition = "model = 'model-a' OR score.helpful >= 4"
    with live.app.state.assay.transaction() as session:
        repo = DashboardRepo(session, project, window, compile_condition(condition))
        volume = repo.volume()
        found = figures(repo, condition)
        assert not temporary_table_left(session, repo.postgres)
    assert found["traces"] == sum(r.traces for r in volume) > 0
    assert found["errors"] == sum(r.errors for r in volume)
    assert found["computed"]["from"] == "traces"


def test_an_error_inside_drops_the_table(live, project):
    window = window_of("7d", None, None, datetime.now(timezone.utc))
    state = live.app.state.assay
    with state.sessions() as session:
        repo = DashboardRepo(session, project, window, compile_condition("model = 'model-a'"))
        with pytest.raises(ZeroDivisionError), narrowed(repo):
            assert temporary_table_left(session, repo.postgres)
            raise ZeroDivisionError
        assert repo.matched is None
        session.rollback()  # PostgreSQL: the rollback drops it (ON COMMIT DROP or not)
        assert not temporary_table_left(session, repo.postgres)


def test_ingest_goes_on_while_a_narrowed_dashboard_is_open(live):
    """Writing the temporary table takes no lock on the database: on SQLite a trace sent while
    a narrowed dashboard's transaction is open is stored at once, not after it ends."""
    key = live.key()
    first = {"id": str(uuid.uuid4()), "latency_ms": 5.0, "model": "m"}
    with live.client(key) as api:
        assert api.post("/traces", json={"traces": [first]}).status_code == 202
        project_id = api.get("/auth/whoami").json()["project"]["id"]
        window = window_of("1d", None, None, datetime.now(timezone.utc))
        with live.app.state.assay.transaction() as session:
            repo = DashboardRepo(session, project_id, window, compile_condition("model = 'm'"))
            with narrowed(repo):
                assert figures(repo, "model = 'm'")["traces"] == 1
                later = {"id": str(uuid.uuid4()), "latency_ms": 6.0, "model": "m"}
                sent = api.post("/traces", json={"traces": [later]}, timeout=8)
                assert sent.status_code == 202, sent.text


def test_a_model_condition_reads_the_model_index(live, project):
    window = window_of("7d", None, None, datetime.now(timezone.utc))
    T = models.LoggedTrace
    query = select(T.seq).where(
        T.project_id == project,
        T.created_at >= window.since,
        T.created_at < window.until,
        compile_condition("model = 'model-a'"),
    )
    with live.app.state.assay.sessions() as session:
        sql = str(query.compile(session.get_bind(), compile_kwargs={"literal_binds": True}))
        if live.backend == "postgresql":  # with 48 rows a scan is cheaper: ask for the index
            session.execute(text("SET LOCAL enable_seqscan = off"))
            plan = "\n".join(session.scalars(text(f"EXPLAIN {sql}")))
        else:
            plan = "\n".join(r[-1] for r in session.execute(text(f"EXPLAIN QUERY PLAN {sql}")))
        session.rollback()
    assert "ix_logged_traces_project_model_created" in plan, plan


def test_postgresql_plans_the_match_for_its_values(live, project):
    """psycopg prepares a statement run 5 times; PostgreSQL's generic plan of the match, blind
    to `model = $1`, read every trace of the window. Narrowed, each plan is made for its values."""
    if live.backend != "postgresql":
        pytest.skip("a PostgreSQL planner setting")
    window = window_of("7d", None, None, datetime.now(timezone.utc))
    with live.app.state.assay.transaction() as session:
        repo = DashboardRepo(session, project, window, compile_condition("model = 'model-a'"))
        assert session.scalar(text("SHOW plan_cache_mode")) == "auto"
        with narrowed(repo):
            assert session.scalar(text("SHOW plan_cache_mode")) == "force_custom_plan"
