"""Migration 0015 (`logged_traces.experiment_id`) on SQLite and PostgreSQL: on a database at 0014
whose rollups count everything, the traces an experiment published before (found by the id each
generation derives) are marked with their experiment and taken out of the rollups, which then
equal a rebuild from the traffic; a client's trace that only looks like one (the tag and
metadata, another id) stays traffic."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

from alembic import command
from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from assay.platform.server.storage import models
from assay.platform.server.storage.db import alembic_config, make_engine, migrate
from assay.platform.server.storage.experiment_traces import logged_id
from assay.platform.server.storage.repos import DatasetRepo
from assay.platform.server.storage.rollups import rebuild
from tests.platform.test_dashboard_rollups import rollup_rows
from tests.platform.test_migration_0006 import old_database  # noqa: F401  (the fixture)


def _logged(project: int, trace_id: str, at: datetime, *, tags: list, meta: dict) -> dict:
    return {
        "project_id": project,
        "id": trace_id,
        "created_at": at,
        "version": 1,
        "input_text": "q",
        "output_text": "a",
        "contexts": [],
        "meta": meta,
        "tags": tags,
        "spans": [],
        "edited": False,
        "model": "m",
        "input_tokens": 10,
        "output_tokens": 5,
        "latency_ms": 120.0,
    }


def test_published_generations_are_marked_and_leave_the_rollups(old_database):  # noqa: F811
    engine = make_engine(old_database)
    T = models.LoggedTrace.__table__
    try:
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0014")
        now = datetime.now(timezone.utc)
        published, other = [], {}
        with engine.begin() as db:
            project = db.execute(
                insert(models.Project.__table__).values(name="old", created_at=now)
            ).inserted_primary_key[0]
        with Session(engine) as session:
            dataset, version = DatasetRepo(session, project).create(
                {"name": "d", "source_type": "upload", "source_file": "", "examples": []}
            )
            session.commit()
            made = (dataset.id, version.id, version.version)
        with engine.begin() as db:
            experiment = db.execute(
                insert(models.Experiment.__table__).values(
                    project_id=project,
                    name="run",
                    dataset_id=made[0],
                    dataset_version_id=made[1],
                    dataset_version=made[2],
                    task={},
                    criteria=[],
                    judge_model="",
                    status="completed",
                    created_at=now,
                )
            ).inserted_primary_key[0]
            for example in range(3):
                db.execute(
                    insert(models.Trace.__table__).values(
                        project_id=project,
                        experiment_id=experiment,
                        cohort_id=7,
                        example_id=100 + example,
                        input="q",
                        contexts=[],
                        raw_input={},
                        metadata={},
                        created_at=now,
                    )
                )
                published.append(logged_id(project, experiment, 7, 100 + example))
            mark = {"source": "experiment", "experiment_id": experiment}
            for index, trace_id in enumerate(published):
                at = now - timedelta(hours=index)
                db.execute(
                    insert(T).values(_logged(project, trace_id, at, tags=["experiment"], meta=mark))
                )
            other = {  # traffic, and a client's trace dressed as a generation
                "traffic": str(uuid.uuid4()),
                "look-alike": str(uuid.uuid4()),
            }
            db.execute(insert(T).values(_logged(project, other["traffic"], now, tags=[], meta={})))
            db.execute(
                insert(T).values(
                    _logged(project, other["look-alike"], now, tags=["experiment"], meta=mark)
                )
            )
        with Session(engine) as session:  # the rollups as 0013 kept them: every trace counted
            rebuild(session, project, experiments_known=False)
            session.commit()
            R = models.TraceRollup
            assert session.scalar(select(func.sum(R.traces)).where(R.project_id == project)) == 5

        migrate(engine)
        with Session(engine) as session:
            marked = dict(session.execute(select(T.c.id, T.c.experiment_id)).all())
            assert {i: marked[i] for i in published} == {i: experiment for i in published}
            assert marked[other["traffic"]] is None and marked[other["look-alike"]] is None
            kept = rollup_rows(session, project)
            assert session.scalar(select(func.sum(R.traces)).where(R.project_id == project)) == 2
            assert rebuild(session, project) == 2
            session.flush()
            assert rollup_rows(session, project) == kept
    finally:
        engine.dispose()
