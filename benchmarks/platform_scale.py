"""The platform at a million traces (issue #41, part 5), on SQLite or PostgreSQL: the 7-day
dashboard (API and page; also 1 and 30 days, and with a condition: one model, 1% of the traces,
found by index, and a text condition no index serves), the traces page, a
condition filter, the sessions list and a session page, each timed `--repeat` times (median and
p95 in ms); sustained ingest at an offered rate through OTLP/HTTP and through the SDK's batch
route (spans a second achieved, per-request latency p50/p95/max); disk per million traces; the
rollups' backfill time.

    .venv/bin/python benchmarks/platform_scale.py --backend sqlite --sent 10000
    .venv/bin/python benchmarks/platform_scale.py --backend postgresql --sent 10000
    .venv/bin/python benchmarks/platform_scale.py --sent 2000 --grow-to 20000 --quick
    .venv/bin/python benchmarks/platform_scale.py --report
    .venv/bin/python benchmarks/platform_scale.py --keep /tmp/scale --no-ingest --pages condition

`--keep DIR` fills the database in DIR and keeps it (delete it when done); a later run with the
same DIR times the pages again without filling (the server migrates it first). `--pages TEXT`
times only the rows whose name holds TEXT and `--no-ingest` skips the sustained ingest: the rows
timed replace theirs in the results file, and `reruns` there says which, when and at what load.

How the million is made (`--sent`, `--grow-to`): `--sent` traces of `platform_workload.py`
(3 spans each; a session of 7 consecutive traces; 1 in 100 on `gpt-4o`) go through OTLP to a
real `assay serve` on 127.0.0.1, then are copied in SQL up to `--grow-to`, copy k moved back by
k x 4.8 hours plus up to 4.8 hours by arrival number, so the million spreads evenly back in time
(with `--sent 10000`: 99 copies over 20 days, 350,000 traces in the 7-day range, 50,000 in the
last day) and each copy's sessions get ids of their own.
The copies bypass ingest, so the rollups are then rebuilt from the traces
(`storage/rollups.rebuild`, what migration 0013 runs on an existing database): its time is the
backfill figure. Then the pages are timed, and last the sustained ingest: `--ingest-seconds` at
`--rate` spans a second offered (open loop: request i is sent at t0 + i x its spans / rate, by
4 sender threads), requests of `--request-traces` traces, the bodies made before the clock
starts. Latency is a request's send to its answer (the traces are stored when it answers).

Results: benchmarks/results/platform_scale__<backend>.json and the table in
benchmarks/results/platform_scale.md (`--report`)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from platform_traces import database, disk_bytes, ingest, sign_in, start_server, timed
from platform_workload import exports, sdk_batches

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
SPREAD_S = 17_280  # 4.8 hours: copy k sits k such steps back, spread over one step
CONDITION = "model = 'gpt-4o'"  # 1% of the traces
SCANNED = "output like '%no such words%'"  # no trace: no index helps, every trace is read
COPIED = (
    "project_id, version, input, output, raw_input, raw_output, input_text, output_text, "
    "contexts, payload, meta, model, input_tokens, output_tokens, tokens, latency_ms, error, "
    "tags, spans, edited"
)


def grow(url: str, sent: int, total: int) -> dict[str, Any]:
    """Copy the sent traces (new ids, new session ids, moved back in time) up to `total`."""
    started = time.perf_counter()
    if url.startswith("sqlite"):
        import sqlite3

        db: Any = sqlite3.connect(url.split(":///", 1)[1])
        new_id = "printf('%08x-%04x-4000-8000-%012x', seq, {k}, seq)"
        moved = (
            "strftime('%Y-%m-%d %H:%M:%S', created_at, "
            "'-' || ({k} * {step} + seq % {step}) || ' seconds') || substr(created_at, 20)"
        )
    else:
        import psycopg

        db = psycopg.connect(url.replace("+psycopg", ""))
        new_id = "gen_random_uuid()::text"
        moved = "created_at - make_interval(secs => {k} * {step} + seq % {step})"
    copies, k = 0, 0
    while sent + copies < total:
        k += 1
        rows = min(sent, total - sent - copies)
        db.execute(
            f"INSERT INTO logged_traces (id, created_at, session_id, {COPIED}) "
            f"SELECT {new_id.format(k=k)}, {moved.format(k=k, step=SPREAD_S)}, "
            f"session_id || '~{k}', {COPIED} FROM logged_traces WHERE seq <= {sent} "
            f"ORDER BY seq LIMIT {rows}"
        )
        db.commit()
        copies += rows
    db.execute("ANALYZE")
    db.commit()
    db.close()
    return {"copied": copies, "seconds": round(time.perf_counter() - started, 1)}


def backfill(url: str) -> dict[str, Any]:
    """Rebuild every project's rollups from its traces (migration 0013's backfill)."""
    from sqlalchemy.orm import Session

    from assay.platform.server.storage.db import make_engine
    from assay.platform.server.storage.rollups import project_ids, rebuild

    engine = make_engine(url)
    started = time.perf_counter()
    with Session(engine) as session, session.begin():
        counted = sum(rebuild(session, p) for p in project_ids(session))
    engine.dispose()
    return {"traces": counted, "seconds": round(time.perf_counter() - started, 1)}


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def sustained(
    base: str, key: str, route: str, rate: float, seconds: float, per_request: int
) -> dict[str, Any]:
    """Offer `rate` spans a second for `seconds` through `route` ("otlp" or "sdk")."""
    traces = max(per_request, int(rate * seconds / 3))
    if route == "otlp":
        bodies = list(exports(traces, seed=1000 + int(time.time()) % 1000, per_export=per_request))
        path, kind = "/otlp/v1/traces", "application/x-protobuf"
    else:
        bodies = list(
            sdk_batches(traces, seed=2000 + int(time.time()) % 1000, per_request=per_request)
        )
        path, kind = "/api/v1/traces", "application/json"
    due = [0.0]
    for spans, _body in bodies[:-1]:
        due.append(due[-1] + spans / rate)
    lock, latencies, lags, failures = threading.Lock(), [], [], []
    position = iter(range(len(bodies)))
    t0 = time.perf_counter() + 0.5

    def sender() -> None:
        with httpx.Client(timeout=120) as http:
            while True:
                with lock:
                    i = next(position, None)
                if i is None:
                    return
                wait = t0 + due[i] - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                sent = time.perf_counter()
                answer = http.post(
                    base + path,
                    content=bodies[i][1],
                    headers={"Authorization": f"Bearer {key}", "Content-Type": kind},
                )
                took = time.perf_counter() - sent
                with lock:
                    latencies.append(took * 1000)
                    lags.append(max(0.0, (sent - t0 - due[i]) * 1000))
                    if answer.status_code not in (200, 202):
                        failures.append(f"{answer.status_code} {answer.text[:200]}")

    threads = [threading.Thread(target=sender) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    spans = sum(s for s, _b in bodies)
    return {
        "route": route,
        "offered_spans_per_s": rate,
        "request_traces": per_request,
        "requests": len(bodies),
        "spans": spans,
        "seconds": round(elapsed, 1),
        "achieved_spans_per_s": round(spans / elapsed),
        "latency_ms": {
            "p50": round(statistics.median(latencies), 1),
            "p95": round(percentile(latencies, 95), 1),
            "max": round(max(latencies), 1),
        },
        "send_lag_ms_p95": round(percentile(lags, 95), 1),
        "failures": len(failures),
        "first_failure": failures[0] if failures else None,
    }


def pages(base: str, key: str, repeat: int, only: list[str] | None = None) -> dict[str, Any]:
    api = httpx.Client(
        base_url=f"{base}/api/v1", headers={"Authorization": f"Bearer {key}"}, timeout=300
    )
    ui = sign_in(base, "bench", "bench-password-46")
    project = api.get("/auth/whoami").json()["project"]["id"]
    p = f"/ui/p/{project}"
    recent = api.get("/sessions", params={"limit": 1}).json()["items"][0]["session_id"]
    old = "s-100~25"  # a session of a copy five days back
    found: dict[str, Any] = {}
    checks = {
        "dashboard API, 7 days": lambda: api.get("/dashboard", params={"range": "7d"}),
        "dashboard page, 7 days": lambda: ui.get(f"{p}/dashboard", params={"range": "7d"}),
        "dashboard API, 1 day": lambda: api.get("/dashboard", params={"range": "1d"}),
        "dashboard API, 30 days": lambda: api.get("/dashboard", params={"range": "30d"}),
        "dashboard API, 7 days, a condition (1%)": lambda: api.get(
            "/dashboard", params={"range": "7d", "condition": CONDITION}
        ),
        "dashboard page, 7 days, a condition (1%)": lambda: ui.get(
            f"{p}/dashboard", params={"range": "7d", "condition": CONDITION}
        ),
        "dashboard API, 7 days, a condition no index serves (none match)": lambda: api.get(
            "/dashboard", params={"range": "7d", "condition": SCANNED}
        ),
        "traces page": lambda: ui.get(f"{p}/traces"),
        "traces page, a condition (1%)": lambda: ui.get(
            f"{p}/traces", params={"condition": CONDITION}
        ),
        "traces API, a condition (1%)": lambda: api.get(
            "/traces", params={"limit": 50, "condition": CONDITION}
        ),
        "sessions page": lambda: ui.get(f"{p}/sessions"),
        "a session page (recent)": lambda: ui.get(f"{p}/sessions/{recent}"),
        "a session page (five days back)": lambda: ui.get(f"{p}/sessions/{old}"),
    }
    for name, fn in checks.items():
        if only and not any(part in name for part in only):
            continue
        times, last = timed(fn, repeat)
        found[name] = {**times, "status": last.status_code}
        if name.startswith("dashboard API") and last.status_code == 200:
            body = last.json()
            found[name]["traces"] = body["traces"]
            found[name]["computed"] = body.get("computed", {}).get("from")
        print(name, found[name], flush=True)
    return found


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.keep:
        work = Path(args.keep).resolve()
        work.mkdir(parents=True, exist_ok=True)
    else:
        work = Path(tempfile.mkdtemp(prefix="assay-scale-"))
    filled_file = work / "filled.json"  # a kept database's key and fill figures
    filled = json.loads(filled_file.read_text()) if filled_file.exists() else None
    url, stop_pg = database(args.backend, work)
    env = {**os.environ, "ASSAY_HOME": str(work / "home")}
    os.environ["ASSAY_HOME"] = env["ASSAY_HOME"]
    from assay.platform.server.auth.admin import create_key
    from assay.platform.server.auth.users import add_user

    if filled is None:
        key = create_key(url, project="bench")
        add_user(url, "bench", "bench-password-46", projects=["bench"])
        empty = disk_bytes(url)
    else:
        key = filled["key"]
    base, server = start_server(url, env)
    result: dict[str, Any] = {}
    try:
        if filled is None:
            result["sent"] = ingest(base, key, args.sent)
            print("sent", result["sent"], flush=True)
            result["grown"] = grow(url, args.sent, args.grow_to)
            print("grown", result["grown"], flush=True)
            result["backfill"] = backfill(url)
            print("backfill", result["backfill"], flush=True)
            result["disk"] = {"bytes": disk_bytes(url) - (empty if stop_pg else 0)}
            result["disk"]["per_million_traces_mb"] = round(
                result["disk"]["bytes"] / args.grow_to * 1e6 / 1e6
            )
            print("disk", result["disk"], flush=True)
            if args.keep:
                filled_file.write_text(json.dumps({"key": key, **result}, indent=2))
        else:
            result = {k: v for k, v in filled.items() if k != "key"}
            print("reusing the database kept in", work, flush=True)
        result["load_before"] = os.getloadavg()
        result["pages"] = pages(base, key, args.repeat, args.pages)
        if not args.no_ingest:
            result["ingest"] = []
            for route in ("otlp", "sdk"):
                result["ingest"].append(
                    sustained(base, key, route, args.rate, args.ingest_seconds, args.request_traces)
                )
                print("ingest", result["ingest"][-1], flush=True)
        result["load_after"] = os.getloadavg()
    finally:
        server.terminate()
        server.wait(timeout=60)
        if stop_pg:
            stop_pg()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return result


def table(rows: list[dict[str, Any]]) -> str:
    names = list(rows[0]["pages"]) if rows else []
    rerun = {n for r in rows for run in r.get("reruns", []) for n in run["rows"]}
    head = "| | " + " | ".join(f"{r['backend']}, {r['traces']:,} traces" for r in rows) + " |"
    lines = [head, "|---|" + "---|" * len(rows)]
    for name in names:
        cells = []
        for r in rows:
            t = r["pages"][name]
            extra = f" ({t['computed']})" if t.get("computed") else ""
            if t["status"] != 200:
                extra = f" (answered {t['status']}: the exact scan's time limit)"
            cells.append(f"{t['median_ms']:g} / {t['p95_ms']:g}{extra}")
        mark = " (rerun)" if name in rerun else ""
        lines.append(f"| {name}, median / p95 ms{mark} | " + " | ".join(cells) + " |")
    for i, route in enumerate(("OTLP/HTTP", "SDK batch route")):
        cells = []
        for r in rows:
            g = r["ingest"][i]
            cells.append(
                f"{g['achieved_spans_per_s']:,} of {g['offered_spans_per_s']:,.0f} spans/s; "
                f"latency p50 {g['latency_ms']['p50']:g}, p95 {g['latency_ms']['p95']:g} ms "
                f"({g['request_traces']} traces a request, {g['failures']} failed)"
            )
        lines.append(f"| sustained ingest, {route} | " + " | ".join(cells) + " |")
    lines.append(
        "| disk per million traces | "
        + " | ".join(f"{r['disk']['per_million_traces_mb']:,} MB" for r in rows)
        + " |"
    )
    lines.append(
        "| rollups backfill | "
        + " | ".join(
            f"{r['backfill']['seconds']:g} s for {r['backfill']['traces']:,}" for r in rows
        )
        + " |"
    )
    return "\n".join(lines)


def merged(before: dict[str, Any], partial: dict[str, Any]) -> dict[str, Any]:
    """The results file `before` with the rows a partial run (`--pages`, `--no-ingest`) timed
    put in place, each noted in `reruns` with its command, time and load."""
    found = dict(before)
    pages = dict(before.get("pages", {}))
    previous = None
    for name, row in partial["pages"].items():  # a new row goes after the one timed before it
        if name not in pages and previous in pages:
            keys = list(pages)
            keys.insert(keys.index(previous) + 1, name)
            pages = {k: pages.get(k, row) for k in keys}
        pages[name] = row
        previous = name
    found["pages"] = pages
    if "ingest" in partial:
        found["ingest"] = partial["ingest"]
    rerun = {k: partial.get(k) for k in ("command", "when", "load_before", "load_after")}
    rerun["rows"] = list(partial["pages"]) + (["ingest"] if "ingest" in partial else [])
    found["reruns"] = [*before.get("reruns", []), rerun]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--sent", type=int, default=20_000)
    parser.add_argument("--grow-to", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--rate", type=float, default=2000, help="spans a second offered")
    parser.add_argument("--ingest-seconds", type=float, default=30)
    parser.add_argument("--request-traces", type=int, default=34, help="traces a request")
    parser.add_argument("--quick", action="store_true", help="write nothing")
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="fill the database in DIR and keep it; a later run with the same DIR times it "
        "again without filling (delete DIR when done)",
    )
    parser.add_argument(
        "--pages",
        action="append",
        metavar="TEXT",
        help="time only the pages whose name holds TEXT (repeatable); their rows replace "
        "those of the results file, the others are kept",
    )
    parser.add_argument(
        "--no-ingest", action="store_true", help="skip the sustained ingest (its rows are kept)"
    )
    parser.add_argument("--report", action="store_true", help="print the table and stop")
    args = parser.parse_args()
    if args.report:
        rows = [json.loads(f.read_text()) for f in sorted(RESULTS.glob("platform_scale__*.json"))]
        print(table(rows))
        return
    result = run(args)
    record = {
        "backend": args.backend,
        "traces": args.grow_to,
        "command": ".venv/bin/python benchmarks/platform_scale.py " + shlex.join(sys.argv[1:]),
        "when": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared), "
        f"Python {platform.python_version()}",
        **result,
    }
    print(json.dumps(record, indent=2))
    out = RESULTS / f"platform_scale__{args.backend}.json"
    if (args.pages or args.no_ingest) and out.exists():
        record = merged(json.loads(out.read_text()), record)
    if not args.quick:
        out.write_text(json.dumps(record, indent=2) + "\n")
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
