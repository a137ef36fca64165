"""Test tables for the condition compiler, built from the contract's columns (notes: trace
contract, issue #17), a resolver for them, and the helpers the other condition tests share:
loading rows on a real SQLite or PostgreSQL, the ids a condition selects there, and the same
rows as oracle records. The few tests here pin the helpers themselves."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest
from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Engine,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    inspect,
    select,
    text,
)

from assay.platform.server.conditions import (
    Condition,
    Field,
    ResolvedField,
    compile_condition,
    matches,
    parse_condition,
)
from assay.platform.server.conditions.tree import PATH_FIELDS, PLAIN_FIELDS
from assay.platform.server.storage.db import make_engine
from assay.platform.server.storage.models import JSONType

metadata = MetaData()
traces = Table(
    "traces",
    metadata,
    Column("project_id", Integer, nullable=False),
    Column("id", String(36), nullable=False),
    Column("created_at", DateTime(timezone=True)),
    Column("version", Integer, default=1),
    Column("input", JSONType),
    Column("output", JSONType),
    Column("input_text", Text),
    Column("output_text", Text),
    Column("contexts", JSONType),
    Column("meta", JSONType),
    Column("model", String(200), nullable=True),
    Column("input_tokens", Integer, nullable=True),
    Column("output_tokens", Integer, nullable=True),
    Column("tokens", Integer, nullable=True),
    Column("latency_ms", Float, nullable=True),
    Column("error", Text, nullable=True),
    Column("session_id", String(200), nullable=True),
    Column("tags", JSONType),
    Column("edited", Boolean),
)
scores = Table(
    "trace_scores",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("project_id", Integer, nullable=False),
    Column("trace_id", String(36)),
    Column("criterion", String(200)),
    Column("value", Float, nullable=True),
    Column("label", String(200), nullable=True),
    Column("created_at", DateTime(timezone=True)),
)
labels = Table(
    "trace_labels",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("project_id", Integer, nullable=False),
    Column("trace_id", String(36)),
    Column("criterion", String(200)),
    Column("value", JSONType),
    Column("created_at", DateTime(timezone=True)),
)
PROJECT = 1
TEXT_COLUMNS = {"input": "input_text", "output": "output_text"}


def _latest(table: Any, criterion: str, column: str = "value") -> Any:
    return (
        select(table.c[column])
        .where(
            table.c.project_id == traces.c.project_id,
            table.c.trace_id == traces.c.id,
            table.c.criterion == criterion,
        )
        .order_by(table.c.created_at.desc(), table.c.id.desc())
        .limit(1)
        .scalar_subquery()
        .correlate(traces)
    )


def resolve(field: Field) -> ResolvedField:
    """The resolver a server writes, here for the test tables."""
    if field.name == "metadata":
        return ResolvedField(traces.c.meta, json_path=field.path)
    if field.name == "score":
        return ResolvedField(_latest(scores, field.path[0]))
    if field.name == "score_label":
        return ResolvedField(_latest(scores, field.path[0], "label"))
    if field.name == "label":
        return ResolvedField(_latest(labels, field.path[0]))
    return ResolvedField(traces.c[TEXT_COLUMNS.get(field.name, field.name)])


def sqlite_engine(path: Any) -> Engine:
    engine = make_engine(f"sqlite:///{path}")
    metadata.create_all(engine)
    return engine


def postgres_engine(pg_url: str) -> Engine:
    """A database of its own on the shared test PostgreSQL (the server tests own `assay_test`)."""
    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        exists = connection.execute(
            text("SELECT 1 FROM pg_database WHERE datname = 'assay_conditions'")
        ).first()
        if not exists:
            connection.execute(text("CREATE DATABASE assay_conditions"))
    admin.dispose()
    engine = make_engine(pg_url.rsplit("/", 1)[0] + "/assay_conditions")
    metadata.drop_all(engine)
    metadata.create_all(engine)
    return engine


def insert(connection: Any, rows: list[dict[str, Any]]) -> None:
    """Rows as the generators make them: trace columns plus `scores` / `labels` lists of
    (criterion, value, created_at), appended in order (so later rows have larger ids)."""
    columns = [c.name for c in traces.columns]
    trace_rows = [{c: row.get(c) for c in columns} | {"project_id": PROJECT} for row in rows]
    if trace_rows:
        connection.execute(traces.insert(), trace_rows)
    for table, key in ((scores, "scores"), (labels, "labels")):
        events = [
            {
                "project_id": PROJECT,
                "trace_id": row["id"],
                "criterion": criterion,
                "value": value,
                "created_at": at,
            }
            for row in rows
            for criterion, value, at in row.get(key, ())
        ]
        for event in events:  # one at a time: ids in insertion order (executemany may batch)
            connection.execute(table.insert(), event)


def selected_ids(connection: Any, tree: Condition, now: datetime) -> set[str]:
    query = select(traces.c.id).where(compile_condition(tree, resolve, now=now))
    return set(connection.execute(query).scalars())


def record(row: dict[str, Any]) -> dict[str, Any]:
    """The oracle's view of a generated row: latest score/label per criterion (created_at, then
    insertion order), `input`/`output` as their text columns, `metadata` for `meta`."""
    out = {k: v for k, v in row.items() if k not in ("scores", "labels", "meta")}
    out["input"], out["output"] = row.get("input_text"), row.get("output_text")
    out["metadata"] = row.get("meta")
    for key in ("scores", "labels"):
        latest: dict[str, tuple[datetime, int, Any]] = {}
        for order, (criterion, value, at) in enumerate(row.get(key, ())):
            if criterion not in latest or (at, order) >= latest[criterion][:2]:
                latest[criterion] = (at, order, value)
        out[key] = {criterion: v[2] for criterion, v in latest.items()}
    return out


def oracle_ids(rows: list[dict[str, Any]], tree: Condition, now: datetime) -> set[str]:
    return {row["id"] for row in rows if matches(tree, record(row), now=now)}


def snapshot(engine: Engine) -> dict[str, Any]:
    """Every table's columns and row count, to show nothing was changed."""
    with engine.connect() as connection:
        found = inspect(connection)
        tables = sorted(found.get_table_names())
        return {
            name: (
                [(c["name"], str(c["type"])) for c in found.get_columns(name)],
                connection.execute(text(f'SELECT count(*) FROM "{name}"')).scalar_one(),
            )
            for name in tables
        }


NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)


def test_the_resolver_answers_every_whitelisted_field() -> None:
    names = [Field(name) for name in PLAIN_FIELDS]
    names += [Field(name, ("a",)) for name in PATH_FIELDS]
    for ref in names:
        assert resolve(ref).expr is not None


def test_record_takes_the_latest_score_by_time_then_by_insertion_order() -> None:
    early, late = (
        datetime(2026, 1, 1, tzinfo=timezone.utc),
        datetime(2026, 2, 1, tzinfo=timezone.utc),
    )
    row = {"id": "t", "scores": [("q", 0.1, late), ("q", 0.2, early), ("q", 0.3, late)]}
    assert record(row)["scores"] == {"q": 0.3}


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_latest_score_in_sql_is_the_records_latest(
    backend: str, request: Any, tmp_path: Any
) -> None:
    engine = (
        sqlite_engine(tmp_path / "c.sqlite")
        if backend == "sqlite"
        else postgres_engine(request.getfixturevalue("pg_url"))
    )
    early, late = (
        datetime(2026, 1, 1, tzinfo=timezone.utc),
        datetime(2026, 2, 1, tzinfo=timezone.utc),
    )
    rows = [
        {"id": "a", "meta": {}, "tags": [], "scores": [("q", 0.9, early), ("q", 0.1, late)]},
        {"id": "b", "meta": {}, "tags": [], "scores": [("q", 0.1, late), ("q", 0.9, late)]},
    ]
    try:
        with engine.connect() as connection, connection.begin() as transaction:
            insert(connection, rows)
            tree = parse_condition("score.q > 0.5")
            assert selected_ids(connection, tree, NOW) == oracle_ids(rows, tree, NOW) == {"b"}
            transaction.rollback()
    finally:
        engine.dispose()
    assert json.dumps(record(rows[0])["scores"]) == '{"q": 0.1}'
