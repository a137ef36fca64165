"""The INSERT of an ingest's new traces (issue #41, part 5), by dialect.

SQLite: one statement given every row (executemany), which SQLAlchemy sends as multi-row INSERTs
under the driver's bound-parameter cap, with its compiled form cached.

PostgreSQL: one `INSERT ... SELECT ... FROM unnest(...)` whose parameters are one array a column,
so its text is the same whatever the number of traces. A multi-row INSERT of 34 traces had about
750 placeholders: psycopg caches the conversion of a statement's placeholders only for
statements of at most 50 parameters, so it converted that one again at every request (about a
tenth of an OTLP request's CPU), and the server planned it again each time; this statement is
converted once and, being the same text every time, prepared by psycopg after a few uses. The rows
are the same as the executemany would store (`tests/platform/test_trace_insert.py`)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from assay.platform.server.storage import models
from assay.platform.server.storage.trace_rows import insert_for

T = models.LoggedTrace

# (column, array type) given one array a column; the other columns are the same for every row
_ARRAYS = (
    ("id", "text"),
    ("created_at", "timestamptz"),
    ("input_text", "text"),
    ("output_text", "text"),
    ("meta", "text"),  # JSON text, cast to jsonb in the SELECT
    ("session_id", "text"),
    ("model", "text"),
    ("input_tokens", "integer"),
    ("output_tokens", "integer"),
    ("tokens", "integer"),
    ("latency_ms", "double precision"),
    ("error", "text"),
    ("tags", "text"),  # JSON text
    ("payload", "bytea"),
)
_JSON_ARRAYS = {"meta", "tags"}
# the columns `row_columns` gives every new trace the same value in
_CONSTANT = {
    "version": "1",
    "input": "NULL",
    "output": "NULL",
    "raw_input": "NULL",
    "raw_output": "NULL",
    "contexts": "'[]'::jsonb",
    "spans": "'[]'::jsonb",
    "edited": "false",
}


def _postgres_statement() -> Any:
    columns = ["project_id", "experiment_id", *(c for c, _t in _ARRAYS), *_CONSTANT]
    values = [
        "CAST(:project_id AS integer)",
        "CAST(:experiment_id AS integer)",
        *(f"t.{c}::jsonb" if c in _JSON_ARRAYS else f"t.{c}" for c, _t in _ARRAYS),
        *_CONSTANT.values(),
    ]
    arrays = ", ".join(f"CAST(:{c} AS {kind}[])" for c, kind in _ARRAYS)
    names = ", ".join(c for c, _t in _ARRAYS)
    return text(
        f"INSERT INTO {T.__tablename__} ({', '.join(columns)}) "
        f"SELECT {', '.join(values)} "
        f"FROM unnest({arrays}) WITH ORDINALITY AS t({names}, n) ORDER BY t.n "
        "ON CONFLICT (project_id, id) DO NOTHING RETURNING id"
    )


_POSTGRES = _postgres_statement()


def _is_constant(row: dict[str, Any]) -> bool:
    """Whether the row's columns outside `_ARRAYS` hold what `_CONSTANT` writes."""
    return (
        row.get("version") == 1
        and row.get("edited") is False
        and row.get("contexts") == []
        and row.get("spans") == []
    )


def insert_each(session: Session, rows: list[dict[str, Any]]) -> set[str]:
    """`insert_new` as one statement given every row (executemany): SQLite's way, and on
    PostgreSQL the reference the unnest statement is tested against."""
    statement = (
        insert_for(session, T.__table__)
        .on_conflict_do_nothing(index_elements=["project_id", "id"])
        .returning(T.__table__.c.id)
    )
    return set(session.scalars(statement, rows))


def insert_new(session: Session, rows: list[dict[str, Any]]) -> set[str]:
    """Insert `rows` (`trace_payload.row_columns` of distinct traces of one project, with
    `experiment_id`), skipping an id the project has already; returns the ids inserted. Rows
    are inserted in list order, which is the order of arrival (`seq`)."""
    if not rows:
        return set()
    if session.get_bind().dialect.name != "postgresql":
        return insert_each(session, rows)
    first = rows[0]
    if not all(
        r["project_id"] == first["project_id"]
        and r["experiment_id"] == first["experiment_id"]
        and _is_constant(r)
        for r in rows
    ):
        raise ValueError("insert_new: rows of one project and experiment, as row_columns gives")
    params: dict[str, Any] = {
        "project_id": first["project_id"],
        "experiment_id": first["experiment_id"],
    }
    for column, _kind in _ARRAYS:
        if column in _JSON_ARRAYS:
            params[column] = [json.dumps(r[column]) for r in rows]
        else:
            params[column] = [r[column] for r in rows]
    return set(session.scalars(_POSTGRES, params))


__all__ = ["insert_each", "insert_new"]
