"""Migration 0017 (`ix_logged_traces_project_model_created`) on SQLite and PostgreSQL: the index
is made and taken away again; on SQLite it is analyzed when the database has planner statistics
(else SQLite takes it for a very selective index and sorts the whole traces list by it), and a
database without statistics is left without."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from alembic import command
from sqlalchemy import insert, inspect, text

from assay.platform.server.storage import models
from assay.platform.server.storage.db import alembic_config, make_engine
from tests.platform.test_migration_0006 import old_database  # noqa: F401  (the fixture)

NAME = "ix_logged_traces_project_model_created"


def _indexes(engine) -> set[str]:
    return {i["name"] for i in inspect(engine).get_indexes("logged_traces")}


def _traces(engine, n: int) -> None:
    now = datetime.now(timezone.utc)
    with engine.begin() as db:
        project = db.execute(
            insert(models.Project.__table__).values(name="p", created_at=now)
        ).inserted_primary_key[0]
        db.execute(
            insert(models.LoggedTrace.__table__),
            [
                {"project_id": project, "id": f"t{i}", "created_at": now, "version": 1,
                 "input_text": "", "output_text": "", "contexts": [], "meta": {}, "tags": [],
                 "spans": [], "edited": False, "model": f"m{i % 3}"}
                for i in range(n)
            ],
        )  # fmt: skip


def test_the_index_is_made_and_taken_away(old_database):  # noqa: F811
    engine = make_engine(old_database)
    try:
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0016")
        assert NAME not in _indexes(engine)
        _traces(engine, 5)
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0017")
        assert NAME in _indexes(engine)
        with engine.begin() as connection:
            command.downgrade(alembic_config(connection), "0016")
        assert NAME not in _indexes(engine)
    finally:
        engine.dispose()


@pytest.mark.parametrize("analyzed", [True, False])
def test_sqlite_statistics_cover_the_new_index(tmp_path, analyzed):
    engine = make_engine(f"sqlite:///{tmp_path / 'at-0016.sqlite'}")
    try:
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0016")
        _traces(engine, 30)
        if analyzed:
            with engine.begin() as connection:
                connection.exec_driver_sql("ANALYZE")
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0017")
        with engine.connect() as connection:
            has_stats = connection.execute(
                text("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'")
            ).scalar()
            rows = (
                connection.execute(
                    text("SELECT stat FROM sqlite_stat1 WHERE idx = :name"), {"name": NAME}
                ).all()
                if has_stats
                else []
            )
        assert bool(has_stats) is analyzed
        # 30 traces of the project, 10 of each model (all stored at one moment)
        assert [r.stat for r in rows] == (["30 30 10 10"] if analyzed else [])
    finally:
        engine.dispose()
