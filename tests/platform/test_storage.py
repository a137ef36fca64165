"""Migrations match the models on both backends and can run again (and concurrently)."""

from __future__ import annotations

import threading

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from assay.platform.server.storage.db import make_engine, migrate
from assay.platform.server.storage.models import Base


def test_migrations_match_the_models(live):
    engine = make_engine(live.db_url)
    try:
        migrate(engine)  # again: nothing to do
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            assert compare_metadata(context, Base.metadata) == []
            assert context.get_current_revision() is not None
    finally:
        engine.dispose()


def test_concurrent_migrations_wait_for_each_other(tmp_path, pg_url):
    urls = [f"sqlite:///{tmp_path / 'fresh.sqlite'}", pg_url]
    for url in urls:
        engines = [make_engine(url) for _ in range(3)]
        errors: list[BaseException] = []

        def run(engine, errors=errors):
            try:
                migrate(engine)
            except BaseException as exc:  # pragma: no cover - the failure is reported below
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(engine,)) for engine in engines]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        for engine in engines:
            engine.dispose()
        assert errors == []


def test_sqlite_runs_in_wal_mode(tmp_path):
    from sqlalchemy import text

    engine = make_engine(f"sqlite:///{tmp_path / 'wal.sqlite'}")
    with engine.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert connection.execute(text("PRAGMA foreign_keys")).scalar() == 1
    engine.dispose()


def test_database_urls(tmp_path, monkeypatch):
    import pytest

    from assay.errors import UsageError
    from assay.platform.server.config import default_db_url, resolve_db_url

    monkeypatch.setenv("ASSAY_HOME", str(tmp_path))
    monkeypatch.delenv("ASSAY_DB_URL", raising=False)
    assert default_db_url() == f"sqlite:///{tmp_path / 'assay.sqlite'}"
    assert resolve_db_url(None) == default_db_url()
    assert resolve_db_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert resolve_db_url(str(tmp_path / "x.db")) == f"sqlite:///{tmp_path / 'x.db'}"
    with pytest.raises(UsageError, match="database URL"):
        resolve_db_url("mysql://x/y")
    with pytest.raises(UsageError, match="SQLite file"):
        make_engine("sqlite:///:memory:")
