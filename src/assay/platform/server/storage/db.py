"""Engines and migrations. SQLite runs in WAL mode with every transaction `BEGIN IMMEDIATE` (one
writer at a time, waiting up to 30 s, never a failed lock upgrade) but those marked `reading`
(deferred: a snapshot, no lock); PostgreSQL through psycopg 3. Migrations are Alembic scripts
shipped in the package and run programmatically."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.orm import Session, sessionmaker

from assay._util.deps import require
from assay._util.sqlite_wal import use_wal
from assay.errors import UsageError
from assay.platform.server.config import resolve_db_url, sqlite_path

MIGRATIONS = Path(__file__).parent / "migrations"
_MIGRATION_LOCK = 7_273_641  # pg_advisory_xact_lock key: one migrator at a time
READING = "assay_reading"  # execution option of a read-only transaction (`reading`)


def make_engine(url: str | None = None) -> Engine:
    url = resolve_db_url(url)
    if url.startswith("sqlite"):
        path = sqlite_path(url)
        if path is None:
            raise UsageError(
                "the server needs a SQLite file (sqlite:///PATH), not an in-memory database"
            )
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _connect(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN itself (below)
            cursor = dbapi_connection.cursor()
            for pragma in ("busy_timeout=30000", "foreign_keys=ON", "synchronous=NORMAL"):
                cursor.execute(f"PRAGMA {pragma}")
            cursor.close()
            use_wal(dbapi_connection)  # several servers or workers may open a new file at once

        @event.listens_for(engine, "begin")
        def _begin(connection: Any) -> None:
            # a read-only unit of work (`reading`) takes no write lock: in WAL mode it reads a
            # snapshot while writers go on (a long dashboard read never holds up ingest)
            deferred = connection.get_execution_options().get(READING)
            connection.exec_driver_sql("BEGIN" if deferred else "BEGIN IMMEDIATE")

        return engine
    require("psycopg", extra="platform", package="psycopg[binary]", feature="a PostgreSQL database")
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=10)


def reading(session: Session) -> None:
    """Make the session's coming transaction a read: on SQLite it begins DEFERRED, without the
    write lock every other transaction takes. Call it before the session's first statement
    (afterwards the transaction has begun and this does nothing); it must then only read."""
    if session.get_bind().dialect.name == "sqlite" and not session.in_transaction():
        session.connection(execution_options={READING: True})


def alembic_config(connection: Any = None) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest revision (idempotent; concurrent callers wait for each other)."""
    from alembic import command

    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
        command.upgrade(alembic_config(connection), "head")


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


__all__ = ["alembic_config", "make_engine", "migrate", "reading", "session_factory"]
