"""What the dashboard's trust figures cost (issue #42 on the platform): `storage/trust_figures.trust`
over the 7-day window of a project with `--traces` traces, each scored on two criteria
(`faithfulness` by `judge:local`, `helpful` by an API key), `--labels` of them labelled on
faithfulness, on SQLite or PostgreSQL: the whole `trust` field of the dashboard, and one
criterion's (its page). Each is timed `--repeat` times after one warm call (median and p95 in ms); the trust call is also timed
cold (the agreement's bootstrap is computed once per set of labels, then remembered).

The rows are written with SQL (not through ingest), then the database gathers its planner's
statistics (`ANALYZE`, as PostgreSQL's autovacuum does after a bulk load; without them
PostgreSQL chose a plan ten times slower here): what is measured is the read.

    .venv/bin/python benchmarks/trust_panel.py --backend sqlite --traces 20000
    .venv/bin/python benchmarks/trust_panel.py --backend postgresql --traces 20000
    .venv/bin/python benchmarks/trust_panel.py --report

Results: benchmarks/results/trust_panel__<backend>.json and the table in
benchmarks/results/trust_panel.md (`--report`)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import shlex
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from platform_traces import start_postgres, timed
from sqlalchemy import insert, select, text

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CHUNK = 5_000


def seed(session_factory: Any, traces: int, labels: int) -> int:
    from assay.platform.server.storage import models

    rng = random.Random(0)
    now = dt.datetime.now(dt.timezone.utc)
    with session_factory() as session, session.begin():
        session.execute(insert(models.Project).values(name="bench"))
        project_id = session.scalar(select(models.Project.id).where(models.Project.name == "bench"))
    ids = [str(uuid.uuid4()) for _ in range(traces)]
    judged = {t: round(rng.random(), 3) for t in ids}
    for start in range(0, traces, CHUNK):
        part = ids[start : start + CHUNK]
        with session_factory() as session, session.begin():
            session.execute(
                insert(models.LoggedTrace),
                [
                    {
                        "project_id": project_id,
                        "id": t,
                        "created_at": now - dt.timedelta(seconds=rng.uniform(60, 6.5 * 86400)),
                        "legacy_contexts": [],
                        "meta": {},
                        "tags": [],
                        "legacy_spans": [],
                    }
                    for t in part
                ],
            )
            scores = [
                {
                    "project_id": project_id,
                    "trace_id": t,
                    "criterion": "faithfulness",
                    "value": judged[t],
                    "outcome": {"status": "ok", "value": judged[t]},
                    "source": "judge:local",
                }
                for t in part
            ] + [
                {
                    "project_id": project_id,
                    "trace_id": t,
                    "criterion": "helpful",
                    "value": float(rng.randint(1, 5)),
                    "outcome": {"status": "ok"},
                    "source": "key:1",
                }
                for t in part
            ]
            session.execute(insert(models.TraceScore), scores)
    with session_factory() as session, session.begin():
        session.execute(
            insert(models.TraceLabel),
            [
                {
                    "project_id": project_id,
                    "trace_id": t,
                    "criterion": "faithfulness",
                    "value": (judged[t] >= 0.5) != (rng.random() < 0.15),  # 15% disagree
                    "author": "key:1",
                }
                for t in rng.sample(ids, labels)
            ],
        )
    return project_id


def run(args: argparse.Namespace) -> dict[str, Any]:
    from assay.platform.server.storage import db
    from assay.platform.server.storage.dashboard_window import window_of
    from assay.platform.server.storage.trust_figures import _bootstrapped, trust

    base = Path(tempfile.mkdtemp(prefix="assay-trust-bench-"))
    stop = None
    try:
        if args.backend == "sqlite":
            url = f"sqlite:///{base / 'bench.sqlite'}"
        else:
            url, stop = start_postgres(base)
        engine = db.make_engine(url)
        db.migrate(engine)
        factory = db.session_factory(engine)
        started = time.perf_counter()
        project_id = seed(factory, args.traces, args.labels)
        seeded_s = time.perf_counter() - started
        with engine.begin() as connection:  # the planner's statistics, as autovacuum would gather
            connection.execute(text("ANALYZE"))
        window = window_of("7d", None, None, dt.datetime.now(dt.timezone.utc))

        def trust_call() -> Any:
            with factory() as session:
                return trust(session, project_id, window)

        def page_call() -> Any:
            with factory() as session:
                return trust(session, project_id, window, criterion="faithfulness")

        _bootstrapped.cache_clear()
        t = time.perf_counter()
        found = trust_call()
        cold_ms = round((time.perf_counter() - t) * 1000, 1)
        trust_ms, found = timed(trust_call, args.repeat)
        page_ms, _ = timed(page_call, args.repeat)
        faith = found["faithfulness"]
        engine.dispose()
        return {
            "backend": args.backend,
            "traces": args.traces,
            "labels": args.labels,
            "repeat": args.repeat,
            "seed_s": round(seeded_s, 1),
            "trust_cold_ms": cold_ms,
            "trust": trust_ms,
            "criterion_page_trust": page_ms,
            "check": {
                "judged": faith["estimate"]["judged"],
                "labelled": faith["estimate"]["labelled"],
                "corrected": faith["estimate"]["value"],
                "alert": faith["alert"]["status"],
            },
            "machine": f"{platform.machine()}, {platform.system()}, Python {platform.python_version()}",
            "load_average_after": [round(x, 1) for x in os.getloadavg()],
            "date": dt.date.today().isoformat(),
            "command": "benchmarks/trust_panel.py " + shlex.join(sys.argv[1:]),
        }
    finally:
        if stop is not None:
            stop()
        shutil.rmtree(base, ignore_errors=True)


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "# The dashboard's trust figures: what they cost",
        "",
        "Made by `benchmarks/trust_panel.py` (the command of each row is in its JSON file). "
        "Times in ms, median / p95 of the repeated calls after a warm one; the cold call "
        "includes the agreement's bootstrap (2,000 resamples), remembered afterwards. The 2-core "
        "machine was shared with other work while these ran (the load average after each run is "
        "in the table): on an idle machine the calls take less. At this size SQLite spends most "
        "of the time ranking each trace's scores to find the latest (a window function over "
        "every score of the range) and turning the labelled criterion's rows into Python "
        "objects; the time grows with the scored traces of the range.",
        "",
        "| backend | traces (7 days) | labels | trust, cold | trust | one criterion (its page) "
        "| load average | date |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['backend']} | {r['traces']:,} | {r['labels']:,} | {r['trust_cold_ms']} "
            f"| {r['trust']['median_ms']} / {r['trust']['p95_ms']} "
            f"| {r['criterion_page_trust']['median_ms']} / {r['criterion_page_trust']['p95_ms']} "
            f"| {r.get('load_average_after', ['?'])[0]} | {r['date']} |"
        )
    lines += ["", "Commands:", ""] + [f"- `{r['command']}`" for r in rows] + [""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--labels", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--report", action="store_true", help="only rewrite the markdown table")
    args = parser.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    if not args.report:
        result = run(args)
        path = RESULTS / f"trust_panel__{args.backend}.json"
        path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(json.dumps(result, indent=1))
    rows = [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted(RESULTS.glob("trust_panel__*.json"))
    ]
    (RESULTS / "trust_panel.md").write_text(table(rows), encoding="utf-8")


if __name__ == "__main__":
    main()
