"""Ingest's INSERT of new traces (`trace_insert`): on PostgreSQL one unnest statement whatever the
batch size, stored rows equal to those of the executemany statement (SQLite's way) for batches
of 1, 34 and 500 traces; on both backends the rows, their arrival order, duplicates and rollups."""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from assay.platform.server.schemas.traces import TraceIn
from assay.platform.server.storage import models
from assay.platform.server.storage.db import make_engine, migrate
from assay.platform.server.storage.trace_insert import insert_each, insert_new
from assay.platform.server.storage.trace_payload import row_columns
from assay.platform.server.storage.trace_rows import trace_values
from assay.platform.server.storage.traces import TraceRepo

T = models.LoggedTrace
COLUMNS = [c.name for c in T.__table__.columns if c.name not in ("seq", "project_id")]
START = datetime(2026, 12, 1, 9, 30, tzinfo=timezone.utc)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path_factory: Any) -> Iterator[Engine]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('insert') / 'i.sqlite'}"
    else:
        url = request.getfixturevalue("pg_url")
    made = make_engine(url)
    migrate(made)
    yield made
    made.dispose()


def project(engine: Engine) -> int:
    with Session(engine) as session, session.begin():
        row = models.Project(name=f"insert-{uuid.uuid4().hex[:12]}")
        session.add(row)
        session.flush()
        return row.id


def traces(n: int) -> list[TraceIn]:
    """Traces whose columns take every kind of value: missing and given, unicode, nested JSON."""
    made = []
    for i in range(n):
        body: dict[str, Any] = {"id": str(uuid.uuid4())}
        if i % 2:
            body["created_at"] = (START + timedelta(minutes=7 * i)).isoformat()
        if i % 3:
            body.update(model=f"model-{i % 4}", usage={"input_tokens": i, "output_tokens": 2 * i})
        if i % 5 == 1:
            body["usage"] = {"input_tokens": 3}
        if i % 4:
            body["latency_ms"] = 0.5 + i * 1.25
        if i % 7 == 3:
            body["error"] = f"boom «{i}»"
        body["input"] = {"messages": [{"role": "user", "content": f"question {i} ✓ " * (i % 9)}]}
        body["output"] = "answer " * (i % 40) or None
        body["metadata"] = (
            {"session_id": f"s{i % 6}", "cost": i / 100, "nested": {"a": [1, None, "x"]}}
            if i % 2
            else {}
        )
        body["tags"] = [f"t{i % 3}", "both"] if i % 3 else []
        body["contexts"] = [f"passage {i}"] if i % 4 == 2 else []
        body["spans"] = [{"id": f"{i:016x}", "name": "llm", "kind": "llm"}] if i % 2 else []
        made.append(TraceIn.model_validate(body))
    return made


def stored(engine: Engine, project_id: int) -> list[dict[str, Any]]:
    """The project's traces in arrival order, every column but seq and project_id (payloads read
    through the model, as the API reads them)."""
    with Session(engine) as session:
        rows = session.scalars(select(T).where(T.project_id == project_id).order_by(T.seq))
        out = []
        for row in rows:
            values = {c.name: getattr(row, c.key) for c in T.__table__.columns}
            values = {k: v for k, v in values.items() if k in COLUMNS}
            values.update({f: getattr(row, f) for f in ("input", "output", "spans", "contexts")})
            values["created_at"] = row.created_at.astimezone(timezone.utc).replace(tzinfo=None)
            out.append(values)
        return out


def rollups(engine: Engine, project_id: int) -> tuple[list[Any], list[Any]]:
    R, B = models.TraceRollup, models.TraceLatencyBin
    with Session(engine) as session:
        sums = session.execute(
            select(R.hour, R.model, R.traces, R.errors, R.input_tokens, R.output_tokens, R.cost)
            .where(R.project_id == project_id)
            .order_by(R.hour, R.model)
        ).all()
        bins = session.execute(
            select(B.hour, B.bin, B.n).where(B.project_id == project_id).order_by(B.hour, B.bin)
        ).all()
        return [list(r) for r in sums], [tuple(r) for r in bins]


@pytest.mark.parametrize("n", [1, 34, 500])
def test_ingest_stores_the_rows_executemany_stores(engine: Engine, n: int) -> None:
    batch = traces(n)
    now = datetime.now(timezone.utc)
    ours, reference = project(engine), project(engine)
    with Session(engine) as session, session.begin():
        ids, duplicates = TraceRepo(session, ours).ingest(batch)
    assert ids == [t.id for t in batch] and duplicates == 0
    with Session(engine) as session, session.begin():
        rows = [row_columns(trace_values(t, reference, now)) for t in batch]
        for row in rows:
            row["experiment_id"] = None
        assert insert_each(session, rows) == set(ids)
    mine, theirs = stored(engine, ours), stored(engine, reference)
    assert [r["id"] for r in mine] == ids  # arrival order is batch order
    given = {t.id: t.created_at for t in batch if t.created_at is not None}
    for a, b in zip(mine, theirs, strict=True):
        if a["id"] not in given:  # "now" at each ingest: not the same instant
            a["created_at"] = b["created_at"] = None
        assert a == b
    assert mine[0]["spans"] == [s.model_dump(mode="json") for s in batch[0].spans]
    # sent again, with one new trace: only the new one is stored, after the others
    extra = traces(1)
    with Session(engine) as session, session.begin():
        again, duplicates = TraceRepo(session, ours).ingest([*batch, *extra])
    assert again == [extra[0].id] and duplicates == n
    assert [r["id"] for r in stored(engine, ours)] == [*ids, extra[0].id]
    # the rollups (written by two upserts, the second adding to rows of the first) count them
    counts: Counter[tuple[Any, str]] = Counter()
    sums_expected: dict[tuple[Any, str], list[float]] = defaultdict(lambda: [0, 0, 0, 0.0])
    latencies: Counter[Any] = Counter()
    for row in stored(engine, ours):
        key = (row["created_at"].replace(minute=0, second=0, microsecond=0), row["model"] or "")
        counts[key] += 1
        sums = sums_expected[key]
        sums[0] += bool(row["error"])
        sums[1] += row["input_tokens"] or 0
        sums[2] += row["output_tokens"] or 0
        sums[3] += row["meta"].get("cost", 0)
        if row["latency_ms"] is not None:
            latencies[key[0]] += 1
    sums, bins = rollups(engine, ours)
    found = {(h.astimezone(timezone.utc).replace(tzinfo=None), m): r for h, m, *r in sums}
    assert {k: v[0] for k, v in found.items()} == dict(counts)
    for key, (errors, tokens_in, tokens_out, cost) in sums_expected.items():
        assert found[key][1:4] == [errors, tokens_in, tokens_out]
        assert found[key][4] == pytest.approx(cost)
    per_hour: Counter[Any] = Counter()
    for hour, _bin, count in bins:
        per_hour[hour.astimezone(timezone.utc).replace(tzinfo=None)] += count
    assert per_hour == latencies


def test_experiment_traces_keep_their_experiment_and_count_in_no_rollup(engine: Engine) -> None:
    ours = project(engine)
    batch = traces(34)
    with Session(engine) as session, session.begin():
        TraceRepo(session, ours).ingest(batch, experiment_id=7)
    with Session(engine) as session:
        marks = session.scalars(select(T.experiment_id).where(T.project_id == ours)).all()
    assert marks == [7] * 34
    assert rollups(engine, ours) == ([], [])


def test_rows_of_two_projects_are_refused_by_the_unnest_statement(engine: Engine) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite inserts each row as given")
    now = datetime.now(timezone.utc)
    a, b = project(engine), project(engine)
    rows = [row_columns(trace_values(t, p, now)) for t, p in zip(traces(2), (a, b), strict=True)]
    for row in rows:
        row["experiment_id"] = None
    with Session(engine) as session, session.begin(), pytest.raises(ValueError, match="one"):
        insert_new(session, rows)
