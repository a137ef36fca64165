"""How fast the trace explorer's queries answer with many stored traces (issue #41, parts 4
and 5): the traces page newest first (with its bounded count), sorted by latency and tokens
(also 5,000 deep), a condition with the bounded scan, quick filters, the list of sessions (first
and third page), the bounded count of sessions and one session's traces — through the storage
layer the pages use, on SQLite and on PostgreSQL.

    python benchmarks/explorer_queries.py --traces 1000000 --share 0.5 --sqlite /tmp/x.sqlite
    python benchmarks/explorer_queries.py --traces 1000000 --share 0.5 --pg-url postgresql+psycopg://...

The traces are written straight into `logged_traces` (the shape ingest gives them, short texts):
one in three models per trace, a latency and a token count each, one in 50 failed, and a share
`--share` of them in sessions of five consecutive traces. A database that already holds the
project is reused. Each query runs `--repeat` times in a fresh ORM session; p50 and p95 are
written to benchmarks/results/explorer_queries.md (one section per backend and size).
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from assay.platform.server.storage.db import make_engine, migrate
from assay.platform.server.storage.sessions import SessionRepo
from assay.platform.server.storage.trace_fields import compile_condition
from assay.platform.server.storage.trace_pages import TraceExplorer, TraceFilter

RESULTS = Path(__file__).parent / "results" / "explorer_queries.md"
COLUMNS = (
    "project_id, id, created_at, version, input_text, output_text, contexts, meta, model, "
    "tokens, latency_ms, error, tags, spans, edited, session_id"
)
START = datetime(2026, 11, 1, tzinfo=timezone.utc)


def fill_postgres(db: Any, project: int, traces: int, share: float) -> None:
    db.execute(
        text(
            f"INSERT INTO logged_traces ({COLUMNS}) "
            f"SELECT {project}, lpad(i::text, 8, '0') || '-0000-4000-8000-000000000000', "
            "timestamptz '2026-11-01' + i * interval '2 seconds', 1, 'question ' || i, "
            "'answer ' || i, '[]', '{\"app\": \"bot\"}', (ARRAY['m1','m2','m3'])[1 + i % 3], "
            "10 + (i * 7919) % 890, ((i * 104729) % 3000000) / 1000.0, "
            "CASE WHEN i % 50 = 0 THEN 'boom' END, '[]', '[]', false, "
            f"CASE WHEN ((i / 5) * 31) % 1000 < {int(share * 1000)} THEN 's-' || (i / 5) END "
            f"FROM generate_series(1::bigint, {traces}::bigint) AS i"
        )
    )


def fill_sqlite(db: Any, project: int, traces: int, share: float) -> None:
    rng = random.Random(1)
    insert = text(
        f"INSERT INTO logged_traces ({COLUMNS}) VALUES (:p, :id, :at, 1, :q, :a, '[]', "
        "'{\"app\": \"bot\"}', :model, :tokens, :latency, :error, '[]', '[]', 0, :sid)"
    )
    rows = []
    for i in range(1, traces + 1):
        rows.append(
            {
                "p": project,
                "id": f"{i:08d}-0000-4000-8000-000000000000",
                "at": (START + timedelta(seconds=2 * i)).isoformat(sep=" "),
                "q": f"question {i}",
                "a": f"answer {i}",
                "model": ("m1", "m2", "m3")[i % 3],
                "tokens": rng.randint(10, 900),
                "latency": rng.random() * 3000,
                "error": "boom" if i % 50 == 0 else None,
                "sid": f"s-{i // 5}" if ((i // 5) * 31) % 1000 < share * 1000 else None,
            }
        )
        if len(rows) == 50_000:
            db.execute(insert, rows)
            rows = []
    if rows:
        db.execute(insert, rows)


def timed(engine: Any, fn: Callable[[Session], Any], repeat: int) -> tuple[float, float]:
    ms = []
    for _ in range(repeat):
        with Session(engine) as session:
            started = time.perf_counter()
            fn(session)
            ms.append((time.perf_counter() - started) * 1000)
    ms.sort()
    return statistics.median(ms), ms[round(0.95 * (len(ms) - 1))]


def queries(project: int) -> dict[str, Callable[[Session], Any]]:
    condition = compile_condition("model = 'm2' AND latency_ms > 2900")
    week = TraceFilter(status="error", since=START + timedelta(days=19))

    def explorer(session: Session) -> TraceExplorer:
        return TraceExplorer(session, project)

    def sessions(session: Session) -> SessionRepo:
        return SessionRepo(session, project)

    def third_page(session: Session) -> Any:
        repo, cursor = sessions(session), None
        for _ in range(3):
            _items, cursor = repo.list(limit=50, before=cursor)
        return cursor

    def one_session(session: Session) -> Any:
        repo = sessions(session)
        return repo.traces(SESSION_ID[project])

    return {
        "traces page, newest first, and its count (up to 10,000)": lambda s: (
            explorer(s).page(TraceFilter(), limit=50),
            explorer(s).count(None, most=10_000),
        ),
        "sorted by latency": lambda s: explorer(s).page(TraceFilter(), limit=50, sort="latency"),
        "sorted by latency, 5,000 deep": lambda s: explorer(s).page(
            TraceFilter(), limit=50, sort="latency", offset=5_000
        ),
        "sorted by tokens": lambda s: explorer(s).page(TraceFilter(), limit=50, sort="tokens"),
        "a condition (bounded scan of 10,000)": lambda s: explorer(s).page(
            TraceFilter(condition=condition), limit=50, scan=10_000
        ),
        "status error in the last days": lambda s: explorer(s).page(week, limit=50),
        "sessions, first page": lambda s: sessions(s).list(limit=50),
        "sessions, third page (three reads)": third_page,
        "count of sessions (up to 10,000)": lambda s: sessions(s).count(most=10_000),
        "one session's traces": one_session,
    }


SESSION_ID: dict[int, str] = {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=1_000_000)
    parser.add_argument("--share", type=float, default=0.5, help="traces in sessions")
    parser.add_argument("--repeat", type=int, default=20)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--sqlite", help="path of the SQLite file (made if missing)")
    where.add_argument("--pg-url", help="a PostgreSQL database URL")
    args = parser.parse_args()
    url = f"sqlite:///{args.sqlite}" if args.sqlite else args.pg_url
    engine = make_engine(url)
    migrate(engine)
    with engine.begin() as db:
        project = db.execute(text("SELECT id FROM projects WHERE name = 'explorer-bench'")).scalar()
        if project is None:
            project = db.execute(
                text(
                    "INSERT INTO projects (name, created_at) "
                    "VALUES ('explorer-bench', CURRENT_TIMESTAMP) RETURNING id"
                )
            ).scalar()
            started = time.perf_counter()
            fill = fill_postgres if engine.dialect.name == "postgresql" else fill_sqlite
            fill(db, project, args.traces, args.share)
            print(f"stored {args.traces:,} traces in {time.perf_counter() - started:.0f} s")
    with engine.begin() as db:
        db.execute(text("ANALYZE"))
    with Session(engine) as session:
        items, _cursor = SessionRepo(session, project).list(limit=1)
        SESSION_ID[project] = items[0]["session_id"]
        stored = TraceExplorer(session, project).count()
    lines = [
        f"## {engine.dialect.name}, {stored:,} traces, {args.share:.0%} of them in sessions of 5",
        "",
        f"{platform.node()}, {datetime.now(timezone.utc):%Y-%m-%d}, {args.repeat} runs each",
        "",
        "| query | p50 ms | p95 ms |",
        "|---|---|---|",
    ]
    for name, fn in queries(project).items():
        p50, p95 = timed(engine, fn, args.repeat)
        lines.append(f"| {name} | {p50:.1f} | {p95:.1f} |")
        print(lines[-1])
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    head = "# The trace explorer's queries\n\nWritten by `benchmarks/explorer_queries.py`.\n\n"
    body = RESULTS.read_text() if RESULTS.exists() else head
    RESULTS.write_text(body.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
