"""An experiment's generations, published as traces of the project, are not production traffic
(`storage/experiment_traces.py`), against a live server on SQLite and PostgreSQL: a project with
traffic (costs, tokens, latencies, errors, scores, a label) and an active online evaluator gets
an experiment whose generations (in the window's part hours too, with scores and a label) are
stored through the worker's own writes. The dashboard's JSON over a fixed window is then the
same as before, key for key, and so are the figures read from the hourly rollups and the rollup
rows themselves (a rebuild agrees); the evaluator took none of them at ingest and its backfill
takes the traffic only; the trace list and the traces page still show the generations (its
quick filter "Source" shows either kind alone), and `include_experiments=true` counts them (read
from the traces)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

from sqlalchemy import select

from assay.platform.server.storage import models
from assay.platform.server.storage.dashboard import DashboardRepo
from assay.platform.server.storage.dashboard_figures import figures
from assay.platform.server.storage.dashboard_window import window_of
from assay.platform.server.storage.experiment_traces import logged_id
from assay.platform.server.storage.experiments import ExperimentRepo
from assay.platform.server.storage.repos import DatasetRepo
from assay.platform.server.storage.rollups import hour_of, rebuild
from assay.platform.server.storage.traces import TraceRepo
from tests.platform.test_dashboard_rollups import rollup_rows
from tests.platform.ui.conftest import make_user, sign_in

HOUR = timedelta(hours=1)


def _traffic(now: datetime, since: datetime) -> list[dict]:
    """Production traces over the window, near both of its ends and outside it."""
    moments = [since + timedelta(minutes=5), since + timedelta(minutes=50), now - 2 * HOUR]
    moments += [now - timedelta(minutes=m) for m in (1, 17, 240, 1500, 2300)]
    moments.append(since - HOUR)  # before the window
    return [
        {
            "id": str(uuid.uuid4()),
            "created_at": at.isoformat(),
            "input": f"question {i}",
            "output": f"answer {i}",
            "model": ("prod-a", "prod-b")[i % 2],
            "latency_ms": 40.0 + 13 * i,
            "usage": {"input_tokens": 10 + i, "output_tokens": 3 + i},
            "metadata": {"cost": 0.001 * (i + 1)},
            **({"error": "timeout"} if i == 4 else {}),
        }
        for i, at in enumerate(moments)
    ]


def _experiment(session, project_id: int, moments: list[datetime]) -> tuple[int, list[str]]:
    """An experiment whose generations are stored (and so published) as the worker stores them:
    one cohort, one generation per moment, each scored; returns its id and the logged ids."""
    dataset, version = DatasetRepo(session, project_id).create(
        {
            "name": f"exp data {uuid.uuid4().hex[:6]}",
            "source_type": "upload",
            "source_file": "",
            "examples": [
                {"question": f"q{i}", "ground_truth_context": [], "ground_truth_answer": ""}
                for i in range(len(moments))
            ],
        }
    )
    experiment = models.Experiment(
        project_id=project_id,
        name="a big run",
        dataset_id=dataset.id,
        dataset_version_id=version.id,
        dataset_version=version.version,
        task={"id": 0, "name": "t", "generator_model": "exp/model", "system_prompt": ""},
        criteria=[{"key": 0, "id": None, "name": "Relevance", "criteria_type": "llm_judge"}],
        judge_model="exp/judge",
        status="running",
    )
    session.add(experiment)
    session.flush()
    cohort = models.ExperimentCohort(
        project_id=project_id,
        experiment_id=experiment.id,
        position=0,
        name="big",
        generator_model="exp/model",
    )
    session.add(cohort)
    session.flush()
    examples = DatasetRepo(session, project_id).all_examples(version)
    repo = ExperimentRepo(session, project_id)
    repo.store_traces(
        [
            {
                "experiment_id": experiment.id,
                "cohort_id": cohort.id,
                "example_id": example.id,
                "input": example.question,
                "output": "generated",
                "contexts": [],
                "raw_input": {"messages": [{"role": "user", "content": example.question}]},
                "raw_output": {"content": "generated"},
                "metadata": {"cost": 5.0},
                "model": "exp/model",
                "input_tokens": 1000,
                "output_tokens": 500,
                "latency_ms": 9000.0 + i,
                "error_type": "Boom" if i % 3 == 0 else None,
                "error_message": "it broke" if i % 3 == 0 else None,
                "created_at": at,
            }
            for i, (example, at) in enumerate(zip(examples, moments, strict=True))
        ]
    )
    generations = session.scalars(
        select(models.Trace).where(models.Trace.experiment_id == experiment.id)
    ).all()
    repo.store_scores(
        [
            {
                "experiment_id": experiment.id,
                "trace_id": g.id,
                "criteria_key": 0,
                "criteria_name": "Relevance",
                "source": "judge",
                "status": "ok",
                "value": 5.0,
            }
            for g in generations
        ]
    )
    ids = [logged_id(project_id, experiment.id, g.cohort_id, g.example_id) for g in generations]
    return experiment.id, ids


def test_an_experiments_generations_are_not_production_traffic(live, fake):
    user = make_user(live)
    api, state, pid = user.api(), live.app.state.assay, user.project_id
    now = datetime.now(timezone.utc)
    since = hour_of(now) - 40 * HOUR + timedelta(minutes=20)  # both ends part hours
    until = now + timedelta(minutes=10)
    window = {"since": since.isoformat(), "until": until.isoformat()}
    traffic = _traffic(now, since)
    assert api.post("/traces", json={"traces": traffic}).status_code == 202
    with state.transaction() as session:  # scores and a label on the traffic
        repo = TraceRepo(session, pid)
        repo.add_scores(
            [
                {
                    "trace_id": t["id"],
                    "criterion": "Relevance",
                    "value": 2.0 + i % 2,
                    "outcome": {"status": "ok", "value": 2.0 + i % 2},
                    "source": "test",
                    "queue_id": None,
                }
                for i, t in enumerate(traffic)
            ]
        )
        repo.add_label(traffic[0]["id"], criterion="Relevance", value=3, author="me")
    made = api.post(
        "/evaluators",
        json={
            "name": "all",
            "criteria": ["step_efficiency"],
            "judge_model": fake.model_string("judge"),
        },
    )
    assert made.status_code == 201, made.text
    before = api.get("/dashboard", params=window).json()
    assert before["traces"] == len(traffic) - 1 and before["include_experiments"] is False
    part = window_of(None, since.isoformat(), until.isoformat(), now)
    with state.transaction() as session:
        rolled_before = figures(DashboardRepo(session, pid, part), exact_up_to=0)
        rows_before = rollup_rows(session, pid)
    assert rolled_before["computed"]["from"] == "rollups"

    # the experiment: generations in the part hours at both ends, inside and before the window
    moments = [since + timedelta(minutes=m) for m in (1, 30)] + [
        now - timedelta(minutes=m) for m in (2, 20, 300, 2000)
    ]
    moments += [since - 3 * HOUR, until - timedelta(minutes=1)]
    with state.transaction() as session:
        experiment_id, published = _experiment(session, pid, moments)
        session.flush()
        TraceRepo(session, pid).add_label(published[0], criterion="Relevance", value=5, author="me")
    with state.transaction() as session:
        T = models.LoggedTrace
        marked = dict(
            session.execute(
                select(T.id, T.experiment_id).where(T.project_id == pid, T.id.in_(published))
            ).all()
        )
    assert marked == {i: experiment_id for i in published}

    after = api.get("/dashboard", params=window).json()
    assert after == before  # every figure, key for key: trust, evaluators, series
    with state.transaction() as session:
        rolled = figures(DashboardRepo(session, pid, part), exact_up_to=0)
        assert rollup_rows(session, pid) == rows_before
        assert rebuild(session, pid) == len(traffic)  # what the rollups count: the traffic
        session.flush()
        assert rollup_rows(session, pid) == rows_before
    assert rolled["computed"]["from"] == "rollups"
    for field in ("traces", "errors", "tokens", "cost", "traces_with_cost", "models", "latency_ms"):
        assert rolled[field] == rolled_before[field], field
    assert rolled["scores"] == rolled_before["scores"] and rolled["labels"] == {"Relevance": 1}

    counted = api.get("/dashboard", params={**window, "include_experiments": "true"}).json()
    inside = len(moments) - 1
    assert counted["include_experiments"] is True and counted["computed"]["from"] == "traces"
    assert counted["traces"] == before["traces"] + inside
    assert counted["errors"] == before["errors"] + sum(
        1 for i in range(len(moments)) if i % 3 == 0 and i != 6
    )
    assert counted["tokens"]["input"] == before["tokens"]["input"] + 1000 * inside
    assert counted["scores"]["Relevance"]["n"] == before["scores"]["Relevance"]["n"] + inside
    assert counted["labels"] == {"Relevance": 2}
    page = sign_in(user).get(
        f"{user.base}/dashboard",
        params={**window, "range": "custom", "include_experiments": "true"},
    )
    assert page.status_code == 200 and 'id="include_experiments" value="true" checked' in page.text

    # the evaluator took none at publishing; its backfill takes the traffic only
    with state.transaction() as session:
        Run = models.OnlineEvaluation
        assert not session.scalars(select(Run.trace_id).where(Run.trace_id.in_(published))).all()
    answer = api.post(
        "/evaluators/all/backfill",
        json={"since": (since - 4 * HOUR).isoformat(), "until": until.isoformat()},
    )
    assert answer.status_code == 200 and answer.json()["taken"] == len(traffic)
    with state.transaction() as session:
        taken = set(session.scalars(select(Run.trace_id).where(Run.project_id == pid)).all())
    assert taken == {t["id"] for t in traffic}

    # still traces of the project: listed, filtered either way, on the traces page
    listed = api.get("/traces", params={"limit": 100}).json()["items"]
    assert {t["id"] for t in listed} == {t["id"] for t in traffic} | set(published)
    apart = api.get("/traces", params={"limit": 100, "condition": "NOT 'experiment' IN tags"})
    assert {t["id"] for t in apart.json()["items"]} == {t["id"] for t in traffic}
    browser = sign_in(user)
    page = browser.get(
        f"{user.base}/traces", params={"condition": f"metadata.experiment_id = {experiment_id}"}
    )
    assert page.status_code == 200
    assert all(i in page.text for i in published) and traffic[0]["id"] not in page.text
    shown = {}
    for source in ("", "traffic", "experiments"):  # the page's quick filter, either way
        page = browser.get(f"{user.base}/traces", params={"source": source})
        assert page.status_code == 200 and "data-problem" not in page.text
        shown[source] = {t for t in [*published, *(t["id"] for t in traffic)] if t in page.text}
    assert shown[""] == set(published) | {t["id"] for t in traffic}
    assert shown["traffic"] == {t["id"] for t in traffic}
    assert shown["experiments"] == set(published)
    assert 'value="experiments" selected' in page.text
    wrong = browser.get(f"{user.base}/traces", params={"source": "demo"})
    assert wrong.status_code == 200 and "source: one of traffic, experiments" in wrong.text
