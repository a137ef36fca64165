"""Migration 0010 (sessions) on SQLite and PostgreSQL: traces stored before it are given their
session from their metadata (`session_id`, else `conversation_id`; a number as its text; none
for an empty one), and the per-project indexes the explorer reads exist."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

from alembic import command
from sqlalchemy import insert, inspect, select

from assay.platform.server.storage import models
from assay.platform.server.storage.db import alembic_config, make_engine, migrate
from tests.platform.test_migration_0006 import old_database  # noqa: F401  (the fixture)

METAS = {
    "named": {"session_id": "chat-1", "conversation_id": "ignored"},
    "conversation": {"conversation_id": "conv-2"},
    "number": {"session_id": 7},
    "empty": {"session_id": ""},
    "none": {"app": "bot"},
}


def test_stored_traces_get_their_session_from_metadata(old_database):  # noqa: F811
    engine = make_engine(old_database)
    T = models.LoggedTrace.__table__
    try:
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0009")
        now = datetime.now(timezone.utc)
        ids = {name: str(uuid.uuid4()) for name in METAS}
        with engine.begin() as db:
            project = db.execute(
                insert(models.Project.__table__).values(name="old", created_at=now)
            ).inserted_primary_key[0]
            for name, meta in METAS.items():
                db.execute(
                    insert(T).values(
                        project_id=project,
                        id=ids[name],
                        created_at=now,
                        version=1,
                        input_text="q",
                        output_text="a",
                        contexts=[],
                        meta=meta,
                        tags=[],
                        spans=[],
                        edited=False,
                    )
                )
        migrate(engine)
        with engine.connect() as db:
            found = dict(db.execute(select(T.c.id, T.c.session_id)).all())
        assert {name: found[ids[name]] for name in METAS} == {
            "named": "chat-1",
            "conversation": "conv-2",
            "number": "7",
            "empty": None,
            "none": None,
        }
        indexes = {i["name"] for i in inspect(engine).get_indexes("logged_traces")}
        assert {
            "ix_logged_traces_project_session",
            "ix_logged_traces_project_latency",
            "ix_logged_traces_project_tokens",
        } <= indexes
    finally:
        engine.dispose()
