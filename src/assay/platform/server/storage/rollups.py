"""The dashboard's rollups of logged traces (issue #41, part 5): per project, UTC hour and model,
the traces, failed ones, token and cost sums (`trace_rollups`), and per project and hour a
histogram of latencies in logarithmic bins (`trace_latency_bins`). The dashboard reads these
instead of every trace of its window (`dashboard_rollups.py`).

They are kept as deltas, in the transaction that changes the traces: ingest adds each new
trace's part (`Deltas.add`), an edit or a merge of later OTLP spans takes the trace's old part
away and adds the new one, retention takes the deleted traces' parts away. An experiment's
generation published as a trace (`experiment_id` set) is not production traffic: its part counts
nothing (`Part.experiment`), so ingest, edits and retention leave the rollups as they are. A delta
is an
`INSERT ... ON CONFLICT DO UPDATE SET n = n + excluded.n`, so two transactions never read and
rewrite one row (rows are written in key order: no deadlock on PostgreSQL). `rebuild` recomputes
a project's rollups from its traces (migration 0012's backfill, and a check that they agree).

Latency bins: bin i holds latencies in [GAMMA**i, GAMMA**(i+1)) ms and stands for the value
2 * GAMMA**(i+1) / (GAMMA + 1), within `RELATIVE_ERROR` (0.99%) of every latency in it; 0 ms
has a bin of its own. A percentile read from the bins (numpy's linear rule over the bins'
values, `percentile`) is therefore within 0.99% of the exact one."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import delete, select, text

from assay.platform.server.storage import models
from assay.platform.server.storage.trace_rows import insert_for

GAMMA = 1.02
RELATIVE_ERROR = (GAMMA - 1) / (GAMMA + 1)
ZERO_BIN = -(2**30)  # latencies of 0 ms (and below the smallest bin)
SMALLEST_MS = 1e-6
_LOG_GAMMA = math.log(GAMMA)
R, B = models.TraceRollup, models.TraceLatencyBin
SUMS = ("traces", "errors", "input_tokens", "output_tokens", "cost", "with_cost")


def latency_bin(ms: float) -> int:
    """The bin of a latency in ms."""
    if ms < SMALLEST_MS:
        return ZERO_BIN
    return math.floor(math.log(ms) / _LOG_GAMMA)


def bin_value(index: int) -> float:
    """The latency a bin stands for: within RELATIVE_ERROR of every latency in it."""
    if index == ZERO_BIN:
        return 0.0
    return 2 * GAMMA ** (index + 1) / (GAMMA + 1)


def percentile(bins: dict[int, int], p: float) -> float | None:
    """numpy's linear rule over the latencies the bins stand for (sorted, each bin's value
    `count` times): the value at rank (n-1)p/100, between the two ranks around it."""
    n = sum(bins.values())
    if n <= 0:
        return None
    rank = (n - 1) * p / 100
    low = math.floor(rank)
    wanted = {low, min(low + 1, n - 1)}
    found: dict[int, float] = {}
    seen = 0
    for index in sorted(bins):
        count = bins[index]
        if count <= 0:
            continue
        for r in wanted:
            if seen <= r < seen + count:
                found[r] = bin_value(index)
        seen += count
        if len(found) == len(wanted):
            break
    value = found[low]
    return value + (found[min(low + 1, n - 1)] - value) * (rank - low)


def hour_of(moment: datetime) -> datetime:
    """The UTC hour a timestamp falls in (a naive one, as SQLite gives it back, is UTC)."""
    moment = (
        moment.replace(tzinfo=timezone.utc)
        if moment.tzinfo is None
        else moment.astimezone(timezone.utc)
    )
    return moment.replace(minute=0, second=0, microsecond=0)


def cost_number(meta: Any) -> float | None:
    """`metadata.cost` when it is a JSON number (as `dashboard.cost_of` reads it in SQL)."""
    if not isinstance(meta, dict):
        return None
    cost = meta.get("cost")
    if isinstance(cost, bool) or not isinstance(cost, (int, float)):
        return None
    return float(cost)


@dataclass(frozen=True)
class Part:
    """What one trace adds to the rollups."""

    hour: datetime
    model: str
    failed: bool
    input_tokens: int
    output_tokens: int
    cost: float | None
    latency_ms: float | None
    experiment: bool = False  # an experiment's generation: counts nothing


def part_of(trace: Any) -> Part:
    """A trace's part, from a row (an ORM row or a result row) or a dict of its columns."""

    def get(name: str, *default: Any) -> Any:
        return (
            trace.get(name, *default) if isinstance(trace, dict) else getattr(trace, name, *default)
        )

    error = get("error")
    return Part(
        hour=hour_of(get("created_at")),
        model=get("model") or "",
        failed=error is not None and error != "",
        input_tokens=int(get("input_tokens") or 0),
        output_tokens=int(get("output_tokens") or 0),
        cost=cost_number(get("meta")),
        latency_ms=get("latency_ms"),
        # a dict from another ingest, or a row read without the column (migration 0013), has none
        experiment=get("experiment_id", None) is not None,
    )


_UPSERT_KEYS = {
    R.__tablename__: (["project_id", "hour", "model"], SUMS),
    B.__tablename__: (["project_id", "hour", "bin"], ("n",)),
}
_upserts: dict[tuple[str, str], Any] = {}


def _upsert(session: Any, table: Any) -> Any:
    """The dialect's `INSERT ... ON CONFLICT DO UPDATE SET n = n + excluded.n` of a rollup
    table, built once per dialect and table (building it took longer than running it)."""
    key = (session.get_bind().dialect.name, table.name)
    statement = _upserts.get(key)
    if statement is None:
        keys, columns = _UPSERT_KEYS[table.name]
        statement = insert_for(session, table)
        statement = statement.on_conflict_do_update(
            index_elements=keys,
            set_={c: table.c[c] + statement.excluded[c] for c in columns},
        )
        _upserts[key] = statement
    return statement


_ARRAY_TYPES = {"hour": "timestamptz", "model": "text", "bin": "integer", "cost": "float8"}


def _unnest_upsert(table: str) -> Any:
    """PostgreSQL's upsert of a rollup table given one array a column (`unnest`): the same text
    whatever the number of rows, so psycopg converts its placeholders once and prepares it (a
    multi-row VALUES of 30 bins has 120 parameters, past psycopg's cache of 50); rows go in the
    order given (key order: no deadlock)."""
    keys, sums = _UPSERT_KEYS[table]
    columns = [*keys[1:], *sums]
    arrays = ", ".join(f"CAST(:{c} AS {_ARRAY_TYPES.get(c, 'bigint')}[])" for c in columns)
    return text(
        f"INSERT INTO {table} ({', '.join(keys[:1] + columns)}) "
        f"SELECT CAST(:project_id AS integer), {', '.join('t.' + c for c in columns)} "
        f"FROM unnest({arrays}) WITH ORDINALITY AS t({', '.join(columns)}, ord) ORDER BY t.ord "
        f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET "
        + ", ".join(f"{c} = {table}.{c} + excluded.{c}" for c in sums)
    )


_UNNEST_UPSERTS = {table: _unnest_upsert(table) for table in _UPSERT_KEYS}


def _arrays(table: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """`rows` (of one project) as `_unnest_upsert`'s parameters: one list a column."""
    keys, sums = _UPSERT_KEYS[table]
    params: dict[str, Any] = {"project_id": rows[0]["project_id"]}
    for column in (*keys[1:], *sums):
        kind = float if column == "cost" else int if column not in ("hour", "model") else None
        values = [row[column] for row in rows]
        params[column] = [kind(v) for v in values] if kind else values
    return params


class Deltas:
    """Changes to a project's rollups, summed in memory and written in one go (`write`)."""

    def __init__(self, project_id: int) -> None:
        self.project_id = project_id
        self.sums: dict[tuple[datetime, str], list[float]] = defaultdict(lambda: [0] * len(SUMS))
        self.bins: Counter[tuple[datetime, int]] = Counter()
        self.removed = False

    def add(self, part: Part, sign: int = 1) -> None:
        """Count a trace's part in (sign 1) or out (sign -1); an experiment's counts nothing."""
        if part.experiment:
            return
        row = self.sums[(part.hour, part.model)]
        for i, value in enumerate(
            (
                1,
                int(part.failed),
                part.input_tokens,
                part.output_tokens,
                part.cost or 0.0,
                int(part.cost is not None),
            )
        ):
            row[i] += sign * value
        if part.latency_ms is not None:
            self.bins[(part.hour, latency_bin(part.latency_ms))] += sign
        self.removed = self.removed or sign < 0

    def replace(self, before: Part, after: Part) -> None:
        """A trace changed: its old part out, its new one in (nothing when they are equal)."""
        if before != after:
            self.add(before, -1)
            self.add(after, 1)

    def write(self, session: Any) -> None:
        """Apply the deltas (in key order), then drop rows that count nothing any more."""
        sums = [
            {
                "project_id": self.project_id,
                "hour": hour,
                "model": model,
                **dict(zip(SUMS, v, strict=True)),
            }
            for (hour, model), v in sorted(self.sums.items())
            if any(v)
        ]
        bins = [
            {"project_id": self.project_id, "hour": hour, "bin": index, "n": n}
            for (hour, index), n in sorted(self.bins.items())
            if n
        ]
        postgres = session.get_bind().dialect.name == "postgresql"
        for model, rows in ((R, sums), (B, bins)):
            if rows and postgres:
                name = model.__tablename__
                session.execute(_UNNEST_UPSERTS[name], _arrays(name, rows))
            elif rows:
                session.execute(_upsert(session, model.__table__), rows)
        if self.removed:
            hours = sorted({hour for hour, _m in self.sums} | {hour for hour, _b in self.bins})
            for model, column in ((R, R.traces), (B, B.n)):
                session.execute(
                    delete(model).where(
                        model.project_id == self.project_id,
                        model.hour.in_(hours),
                        column <= 0,
                    )
                )
        self.sums.clear()
        self.bins.clear()
        self.removed = False


BASE_COLUMNS = (  # what a part is made of, as migration 0013 found the table
    models.LoggedTrace.created_at,
    models.LoggedTrace.model,
    models.LoggedTrace.error,
    models.LoggedTrace.input_tokens,
    models.LoggedTrace.output_tokens,
    models.LoggedTrace.meta,
    models.LoggedTrace.latency_ms,
)
PART_COLUMNS = (*BASE_COLUMNS, models.LoggedTrace.experiment_id)


def rebuild(
    session: Any, project_id: int, chunk: int = 20_000, *, experiments_known: bool = True
) -> int:
    """Recompute a project's rollups from its traces (reading them `chunk` at a time by arrival
    number), leaving experiments' generations out; returns how many traces were counted.
    `experiments_known=False` is for migration 0013, which runs before `experiment_id` exists
    (migration 0015 then takes the published generations out)."""
    T = models.LoggedTrace
    columns: tuple[Any, ...] = PART_COLUMNS
    production: Any = T.experiment_id.is_(None)
    if not experiments_known:
        columns, production = BASE_COLUMNS, T.project_id == project_id
    for model in (R, B):
        session.execute(delete(model).where(model.project_id == project_id))
    deltas, after, counted = Deltas(project_id), 0, 0
    while True:
        rows = session.execute(
            select(T.seq, *columns)
            .where(T.project_id == project_id, T.seq > after, production)
            .order_by(T.seq)
            .limit(chunk)
        ).all()
        if not rows:
            break
        for row in rows:
            deltas.add(part_of(row))
        counted += len(rows)
        after = rows[-1].seq
    deltas.write(session)
    return counted


def project_ids(session: Any) -> Iterable[int]:
    return list(session.scalars(select(models.Project.id).order_by(models.Project.id)))


__all__ = [
    "BASE_COLUMNS",
    "GAMMA",
    "PART_COLUMNS",
    "RELATIVE_ERROR",
    "Deltas",
    "Part",
    "bin_value",
    "cost_number",
    "hour_of",
    "latency_bin",
    "part_of",
    "percentile",
    "rebuild",
]
