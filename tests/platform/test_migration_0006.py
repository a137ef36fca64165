"""Migration 0006 (trace_scores.label, experiments.run_started_at) on a database that already has
rows, on SQLite and PostgreSQL: a database made at revision 0005, filled the way that version
filled it (a numeric score, a review-queue error stored with the old `message` key, a running
experiment), is upgraded and then served by the real server: the old rows read as before (the
old error text as `error_message`), new typed scores go in beside them, and the old experiment's
ETA falls back to its first start."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest
from alembic import command
from sqlalchemy import create_engine, insert, inspect, text

from assay.platform.server.auth import keys as auth
from assay.platform.server.storage import models
from assay.platform.server.storage.db import alembic_config, make_engine, migrate
from tests.platform.conftest import start_server, stop_server


@pytest.fixture(params=["sqlite", "postgresql"])
def old_database(request, tmp_path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'at-0005.sqlite'}"
        return
    pg_url = request.getfixturevalue("pg_url")
    name = f"assay_mig_{uuid.uuid4().hex[:10]}"
    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f"CREATE DATABASE {name}"))
    try:
        yield pg_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as connection:
            connection.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()


def fill_at_0005(engine, trace_id: str) -> dict[str, int]:
    """Rows as revision 0005 stored them (only the columns it had)."""
    now = datetime.now(timezone.utc)
    with engine.begin() as db:
        project = db.execute(
            insert(models.Project.__table__).values(name="old", created_at=now)
        ).inserted_primary_key[0]
        db.execute(
            insert(models.LoggedTrace.__table__).values(
                project_id=project,
                id=trace_id,
                created_at=now,
                input="q",
                output="a",
                input_text="q",
                output_text="a",
                contexts=[],
                meta={},
                tags=[],
                spans=[],
            )
        )
        common = {"project_id": project, "trace_id": trace_id, "created_at": now}
        db.execute(
            insert(models.TraceScore.__table__).values(
                [
                    {
                        **common,
                        "criterion": "Quality",
                        "value": 0.5,
                        "outcome": {"status": "ok", "value": 0.5, "reason": "fine"},
                        "source": "key:abc",
                    },
                    {
                        **common,
                        "criterion": "Judged",
                        "value": None,
                        "outcome": {
                            "status": "error",
                            "error_type": "APIError",
                            "message": "the judge was down",
                        },
                        "source": "judge:m",
                    },
                ]
            )
        )
        dataset = db.execute(
            insert(models.Dataset.__table__).values(project_id=project, name="d")
        ).inserted_primary_key[0]
        version = db.execute(
            insert(models.DatasetVersion.__table__).values(
                project_id=project,
                dataset_id=dataset,
                version=1,
                example_count=2,
                content_hash="0" * 64,
            )
        ).inserted_primary_key[0]
        experiment = db.execute(
            insert(models.Experiment.__table__).values(
                project_id=project,
                name="old run",
                dataset_id=dataset,
                dataset_version_id=version,
                dataset_version=1,
                task={},
                criteria=[{"key": 0, "name": "c"}],
                status="running",
                started_at=now - timedelta(seconds=100),
            )
        ).inserted_primary_key[0]
        cohort = db.execute(
            insert(models.ExperimentCohort.__table__).values(
                project_id=project,
                experiment_id=experiment,
                position=0,
                name="c",
                generator_model="m",
            )
        ).inserted_primary_key[0]
        generated = db.execute(
            insert(models.Trace.__table__).values(
                project_id=project,
                experiment_id=experiment,
                cohort_id=cohort,
                example_id=None,
                contexts=[],
                raw_input={},
                **{"metadata": {}},  # the column's name; `meta` is only the attribute's
            )
        ).inserted_primary_key[0]
        db.execute(
            insert(models.Score.__table__).values(
                project_id=project,
                experiment_id=experiment,
                trace_id=generated,
                criteria_key=0,
                criteria_name="c",
                source="judge",
                status="ok",
                value=1.0,
            )
        )
    return {"project": project, "experiment": experiment}


def test_upgrading_a_database_with_rows_keeps_them_readable(old_database):
    engine = make_engine(old_database)
    trace_id = str(uuid.uuid4())
    try:
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0005")
        assert "label" not in {c["name"] for c in inspect(engine).get_columns("trace_scores")}
        ids = fill_at_0005(engine, trace_id)
        migrate(engine)
        columns = {c["name"] for c in inspect(engine).get_columns("trace_scores")}
        assert "label" in columns
        assert "run_started_at" in {c["name"] for c in inspect(engine).get_columns("experiments")}
        with engine.connect() as db:
            rows = db.execute(text("SELECT criterion, value, label FROM trace_scores")).all()
        assert sorted(tuple(r) for r in rows) == [("Judged", None, None), ("Quality", 0.5, None)]
    finally:
        engine.dispose()

    live = start_server("upgraded", old_database)
    try:
        with live.app.state.assay.transaction() as session:
            key, _row = auth.create_key(
                session, live.app.state.assay.pepper, project_name="old", scopes=("read", "write")
            )
        with live.client(key) as api:
            scores = api.get(f"/traces/{trace_id}").json()["scores"]
            assert scores["Quality"]["value"] == 0.5 and scores["Quality"]["label"] is None
            old_error = scores["Judged"]["outcome"]
            assert old_error["error_message"] == "the judge was down", old_error
            assert "message" not in old_error
            added = api.post(
                f"/traces/{trace_id}/scores", json={"criterion": "Tone", "value": "ok"}
            )
            assert added.status_code == 201, added.text
            found = api.get("/traces", params={"condition": "score_label.Tone = 'ok'"}).json()
            assert [t["id"] for t in found["items"]] == [trace_id]
            progress = api.get(f"/experiments/{ids['experiment']}/progress").json()
            assert progress["completed"] == 1 and progress["pending"] == 1
            # never run since the upgrade: the rate counts from the first start, 100 s ago
            assert 90 <= progress["eta_s"] <= 200, progress
    finally:
        stop_server(live)
