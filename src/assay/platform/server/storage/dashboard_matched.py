"""A dashboard with a condition matches it once (`narrowed`): every trace of the window that
matches the condition (and the traffic rule) is copied to a temporary table, with the columns
the figures read (`COLUMNS`: time, model, latency, error, tokens, metadata for the cost), and the
figures' queries (volume, latency, scores, evaluators' states) read that table instead of
matching the condition again over every trace of the window; the trust panel and an evaluator's
own condition read the traces whose `seq` it holds.

Why: each figure is its own query, and with a condition each one used to scan the whole window
(350,000 traces in a 7-day range at a million) and test the condition on every row; at a million
traces that took 2 s on PostgreSQL and passed the 10 s time limit on SQLite. Matching once costs
one such scan; a condition on an indexed column (`model`, `session_id`, with the window's
`created_at`: `ix_logged_traces_project_model_created`) is an index range instead of a scan.
The figures are exactly those of the unnarrowed queries: the same traces, counted by the same
SQL. Labels are the exception that keeps its own query: a label given in the window may be on
an older trace, so `DashboardRepo.label_counts` still matches the condition on labelled traces.

The table lives in the connection's temporary schema (SQLite's `temp`, PostgreSQL's `pg_temp`):
no other connection sees it, and on SQLite writing it takes no lock on the database, so the
dashboard stays a read (`db.reading`). It is dropped when the block ends (on PostgreSQL also at
the transaction's end, `ON COMMIT DROP`). Filling it is under the dashboard's time limit."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Column, MetaData, Table, insert, select, text
from sqlalchemy.schema import CreateTable

from assay.platform.server.storage import models
from assay.platform.server.storage.dashboard import DashboardRepo
from assay.platform.server.storage.dashboard_rollups import TIME_LIMIT_S, time_limit
from assay.platform.server.storage.db import reading

T = models.LoggedTrace
NAME = "dashboard_matched"
COLUMNS = (
    "seq",
    "project_id",
    "id",
    "created_at",
    "model",
    "latency_ms",
    "error",
    "input_tokens",
    "output_tokens",
    "meta",
)
MATCHED = Table(
    NAME,
    MetaData(),
    *(
        Column(name, T.__table__.c[name].type, primary_key=name == "seq", autoincrement=False)
        for name in COLUMNS
    ),
    prefixes=["TEMPORARY"],
    postgresql_on_commit="DROP",
)


@contextmanager
def narrowed(repo: DashboardRepo) -> Iterator[None]:
    """Within the block, `repo` reads the traces matching its condition from a temporary table
    filled once here (nothing to do without a condition, or when already narrowed)."""
    if repo.where is None or repo.matched is not None:
        yield
        return
    session = repo.session
    reading(session)  # before its first statement: on SQLite the transaction takes no lock
    session.execute(text(f"DROP TABLE IF EXISTS {_schema(repo)}.{NAME}"))
    session.execute(CreateTable(MATCHED))
    window = repo.window
    matching = select(*(T.__table__.c[name] for name in COLUMNS)).where(
        T.project_id == repo.project_id,
        T.created_at >= window.since,
        T.created_at < window.until,
        repo.condition(),
    )
    if repo.postgres:
        # a plan for these values: psycopg prepares a statement run 5 times, and PostgreSQL's
        # generic plan of it, blind to `model = $1`, took the window's 350,000 traces (0.7 s)
        # over the model index's 3,500
        session.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))
    with time_limit(repo, TIME_LIMIT_S):
        session.execute(insert(MATCHED).from_select(list(COLUMNS), matching))
    if repo.postgres:  # the planner then knows how few (or many) traces matched
        session.execute(text(f"ANALYZE {NAME}"))
    repo.matched = MATCHED
    failed = False
    try:
        yield
    except BaseException:
        failed = True
        raise
    finally:
        repo.matched = None
        # after an error PostgreSQL's transaction is aborted; its rollback drops the table
        if not (failed and repo.postgres):
            session.execute(text(f"DROP TABLE IF EXISTS {_schema(repo)}.{NAME}"))


def _schema(repo: Any) -> str:
    return "pg_temp" if repo.postgres else "temp"


__all__ = ["COLUMNS", "MATCHED", "narrowed"]
