"""The platform server under a stored-trace load (issue #46): OTLP ingest rate, the traces list and
filtered list (API and web UI) latencies, and disk per trace, at N traces on SQLite or PostgreSQL.

    nice -n 19 .venv/bin/python benchmarks/platform_traces.py --traces 100000 --backend sqlite
    nice -n 19 .venv/bin/python benchmarks/platform_traces.py --traces 100000 --backend postgresql
    .venv/bin/python benchmarks/platform_traces.py --traces 2000 --quick   # nothing written
    # a million traces without sending a million: 100,000 sent, then copied in SQL
    nice -n 19 .venv/bin/python benchmarks/platform_traces.py --traces 100000 --grow-to 1000000

Workload (`platform_workload.py`; the shape the issue measured Phoenix with, LLM-shaped traces of 3
spans): each trace is a root CHAIN span (OpenInference `input.value` = the question, `output.value`
= the answer), a retriever span with two documents, and a GenAI `chat` span whose
`gen_ai.input.messages` holds a system prompt with the documents and the question and whose
`gen_ai.output.messages` holds the answer, with token counts. Text is words drawn with Zipf weights
from a fixed made-up vocabulary (seeded), so it compresses about as English prose does: question
~80 characters, documents ~250 each, answer ~550 (about 1.1 kB of distinct text a trace, which at
the old storage's duplication gave the ~10 kB a trace the issue measured). One trace in 100 uses
the model `gpt-4o` (the others `gpt-4o-mini`): that is the filter matching 1%; `model = 'claude-3'`
matches nothing.

The traces are sent as OTLP/HTTP protobuf exports of 510 spans (170 traces; the official
BatchSpanProcessor sends 512) by two client threads to a real `assay serve` process on
127.0.0.1. Then: the API list (`GET /api/v1/traces?limit=50`) and the UI traces page, plain and
with each filter, 30 times each (median and p95 in ms), the response size of a list, the Count
button's time, and the database's size on disk divided by N (SQLite: the file after a WAL
checkpoint; PostgreSQL: `pg_database_size` after `VACUUM`, less the empty database's size).
Results go to benchmarks/results/platform_traces__<backend>__<N>.json and the summary table
benchmarks/results/platform_traces.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shlex
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from platform_workload import exports  # benchmarks/platform_workload.py

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
FILTERS = {"1%": "model = 'gpt-4o'", "none": "model = 'claude-3'"}


# -- servers ----------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_postgres(base: Path) -> tuple[str, Any]:
    sys.path.insert(0, str(ROOT))
    from tests.platform.conftest import pg_bin

    bindir = pg_bin()
    if bindir is None:
        raise SystemExit("PostgreSQL is not installed (apt-get install -y postgresql)")
    run_as: list[str] = []
    if os.geteuid() == 0:
        import pwd

        owner = pwd.getpwnam("postgres")
        os.chown(base, owner.pw_uid, owner.pw_gid)
        run_as = ["runuser", "-u", "postgres", "--"]
    port, data = free_port(), base / "pgdata"
    reuse = data.exists()  # kept by an earlier run (platform_scale.py --keep)
    if not reuse:
        subprocess.run(
            [
                *run_as,
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
            check=True,
            capture_output=True,
        )
    options = f"-p {port} -c listen_addresses=127.0.0.1 -k {base} -c max_connections=50"
    subprocess.run(
        [
            *run_as,
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(base / "pg.log"),
            "-w",
            "-o",
            options,
            "start",
        ],
        check=True,
        capture_output=True,
    )
    if not reuse:
        subprocess.run(
            [
                *run_as,
                str(bindir / "createdb"),
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-U",
                "postgres",
                "bench",
            ],
            check=True,
            capture_output=True,
        )

    def stop() -> None:
        subprocess.run(
            [*run_as, str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
            capture_output=True,
        )

    return f"postgresql+psycopg://postgres@127.0.0.1:{port}/bench", stop


def database(backend: str, work: Path) -> tuple[str, Any]:
    """The benchmark's database URL in `work`, and what stops it (PostgreSQL) or None."""
    if backend == "postgresql":
        return start_postgres(work)
    return f"sqlite:///{work / 'bench.sqlite'}", None


def start_server(url: str, env: dict[str, str]) -> tuple[str, subprocess.Popen[bytes]]:
    """`assay serve` on a free loopback port over `url`, once it answers its health check."""
    base = f"http://127.0.0.1:{free_port()}"
    command = [sys.executable, "-m", "assay", "serve", "--port", base.rsplit(":", 1)[1]]
    server = subprocess.Popen(
        [*command, "--db", url], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{base}/api/v1/health").status_code == 200:
                return base, server
        except httpx.TransportError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            raise SystemExit(server.stderr.read().decode())  # type: ignore[union-attr]
        time.sleep(0.2)


def disk_bytes(url: str) -> int:
    if url.startswith("sqlite"):
        path = url.split(":///", 1)[1]
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return sum(
            os.path.getsize(p) for p in (path, path + "-wal", path + "-shm") if os.path.exists(p)
        )
    import psycopg

    with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as db:
        db.execute("VACUUM")
        return int(db.execute("SELECT pg_database_size(current_database())").fetchone()[0])


# -- measuring -----------------------------------------------------------------------------------------
def timed(fn: Any, times: int) -> tuple[dict[str, float], Any]:
    samples, last = [], None
    fn()  # warm
    for _ in range(times):
        t = time.perf_counter()
        last = fn()
        samples.append((time.perf_counter() - t) * 1000)
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"median_ms": round(statistics.median(ordered), 2), "p95_ms": round(p95, 2)}, last


def ingest(base: str, key: str, total: int) -> dict[str, Any]:
    queue = exports(total)
    lock = threading.Lock()
    counts = {"spans": 0, "requests": 0, "bytes": 0, "refused": 0}
    failures: list[str] = []

    def sender() -> None:
        with httpx.Client(timeout=120) as http:
            while True:
                with lock:
                    item = next(queue, None)
                if item is None:
                    return
                spans, body = item
                answer = http.post(
                    f"{base}/otlp/v1/traces",
                    content=body,
                    headers={
                        "Authorization": f"Bearer {key}",
                        "Content-Type": "application/x-protobuf",
                    },
                )
                with lock:
                    if answer.status_code != 200:
                        failures.append(f"{answer.status_code} {answer.text[:200]}")
                    counts["spans"] += spans
                    counts["requests"] += 1
                    counts["bytes"] += len(body)

    started = time.perf_counter()
    threads = [threading.Thread(target=sender) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.perf_counter() - started
    if failures:
        raise SystemExit(f"{len(failures)} exports failed, first: {failures[0]}")
    return {
        **counts,
        "seconds": round(took, 1),
        "spans_per_s": round(counts["spans"] / took),
        "traces_per_s": round(total / took),
        "mean_request_kb": round(counts["bytes"] / counts["requests"] / 1000, 1),
    }


COPIED = (
    "project_id, created_at, version, input, output, raw_input, raw_output, input_text, "
    "output_text, contexts, payload, meta, model, input_tokens, output_tokens, tokens, "
    "latency_ms, error, tags, spans, edited"
)


def grow(url: str, sent: int, total: int) -> dict[str, Any]:
    """Copy the `sent` stored traces (new ids, arrival after them) until there are `total`: a
    large table without sending every trace, for the list and filter timings and disk."""
    started = time.perf_counter()
    if url.startswith("sqlite"):
        db: Any = sqlite3.connect(url.split(":///", 1)[1])
        new_id = "printf('%08x-%04x-4000-8000-%012x', seq, {k}, seq)"
    else:
        import psycopg

        db = psycopg.connect(url.replace("+psycopg", ""))
        new_id = "gen_random_uuid()::text"
    copies, k = 0, 0
    while sent + copies < total:
        k += 1
        rows = min(sent, total - sent - copies)
        db.execute(
            f"INSERT INTO logged_traces (id, {COPIED}) SELECT {new_id.format(k=k)}, {COPIED} "
            f"FROM logged_traces ORDER BY seq LIMIT {rows}"
        )
        db.commit()
        copies += rows
    db.close()
    return {"copied": copies, "seconds": round(time.perf_counter() - started, 1)}


def sign_in(base: str, username: str, password: str) -> httpx.Client:
    client = httpx.Client(base_url=base, timeout=120, headers={"Origin": base})
    page = client.get("/ui/login").text
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    answer = client.post(
        "/ui/login",
        data={"csrf_token": token, "username": username, "password": password, "next": "/ui/"},
    )
    assert answer.status_code == 303, answer.text
    return client


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="assay-bench-"))
    url, stop_pg = database(args.backend, work)
    env = {**os.environ, "ASSAY_HOME": str(work / "home")}
    os.environ["ASSAY_HOME"] = env["ASSAY_HOME"]
    from assay.platform.server.auth.admin import create_key
    from assay.platform.server.auth.users import add_user

    key = create_key(url, project="bench")
    add_user(url, "bench", "bench-password-46", projects=["bench"])
    empty = disk_bytes(url)
    base, server = start_server(url, env)
    try:
        result: dict[str, Any] = {"ingest": ingest(base, key, args.traces)}
        print("ingest", result["ingest"], flush=True)
        if args.grow_to:
            result["grown"] = grow(url, args.traces, args.grow_to)
            print("grown", result["grown"], flush=True)
        api = httpx.Client(
            base_url=f"{base}/api/v1", headers={"Authorization": f"Bearer {key}"}, timeout=120
        )
        ui = sign_in(base, "bench", "bench-password-46")
        page = f"/ui/p/{api.get('/auth/whoami').json()['project']['id']}/traces"
        n = args.repeat
        listing, last = timed(lambda: api.get("/traces", params={"limit": 50}), n)
        full_list = api.get("/traces", params={"limit": 50, "full": "true"})
        result["list"] = {
            "api": listing,
            "api_bytes_50": len(last.content),
            "api_full_bytes_50": len(full_list.content),
            "ui": timed(lambda: ui.get(page), n)[0],
        }
        result["filter"] = {}
        for name, condition in FILTERS.items():
            api_t, answer = timed(
                lambda c=condition: api.get("/traces", params={"limit": 50, "condition": c}), n
            )
            ui_t, html = timed(lambda c=condition: ui.get(page, params={"condition": c}), n)
            count_t, counted = timed(
                lambda c=condition: ui.get(f"{page}/count", params={"condition": c}), 5
            )
            result["filter"][name] = {
                "condition": condition,
                "api": api_t,
                "api_items": len(answer.json()["items"]),
                "ui": ui_t,
                "ui_status": html.status_code,
                "count_button": count_t,
                "count_says": re.sub(r"<[^>]+>", "", counted.text).strip(),
            }
        print("list", result["list"], "filter", result["filter"], flush=True)
    finally:
        server.terminate()
        server.wait(timeout=60)
    size = disk_bytes(url) - (empty if args.backend == "postgresql" else 0)
    result["disk"] = {"bytes": size, "bytes_per_trace": round(size / (args.grow_to or args.traces))}
    print("disk", result["disk"], flush=True)
    if stop_pg:
        stop_pg()
    shutil.rmtree(work, ignore_errors=True)
    return result


def table(rows: list[dict[str, Any]]) -> str:
    """The results as a markdown table: latencies as median / p95 in ms."""

    def ms(t: dict[str, float]) -> str:
        return f"{t['median_ms']:g} / {t['p95_ms']:g}"

    lines = [
        "| backend | traces | run | ingest spans/s | list API | list bytes (50 traces) | list UI "
        "| 1% filter API | 1% filter UI | no-match filter API | no-match filter UI "
        "| Count (1%) | disk per trace |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        f1, f0 = r["filter"]["1%"], r["filter"]["none"]
        counted = "match" in f1["count_says"] and "Not found" not in f1["count_says"]
        count = ms(f1["count_button"]) if counted else "none (no Count)"
        lines.append(
            f"| {r['backend']} | {r['traces']:,} | {r.get('label') or r['when'][:16]} "
            f"| {r['ingest']['spans_per_s']:,} | {ms(r['list']['api'])} "
            f"| {r['list']['api_bytes_50']:,} (full: {r['list']['api_full_bytes_50']:,}) "
            f"| {ms(r['list']['ui'])} | {ms(f1['api'])} | {ms(f1['ui'])} | {ms(f0['api'])} "
            f"| {ms(f0['ui'])} | {count} | {r['disk']['bytes_per_trace']:,} B |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument(
        "--grow-to",
        type=int,
        default=0,
        help="after sending --traces, copy them in SQL until there are this many (ingest is "
        "timed on the traces sent only)",
    )
    parser.add_argument("--quick", action="store_true", help="write nothing")
    parser.add_argument("--label", default="", help="suffix of the result file")
    parser.add_argument(
        "--report", action="store_true", help="print the table of every result file and stop"
    )
    args = parser.parse_args()
    if args.report:
        rows = [json.loads(f.read_text()) for f in sorted(RESULTS.glob("platform_traces__*.json"))]
        print(table(rows))
        return
    result = run(args)
    record = {
        "backend": args.backend,
        "traces": args.grow_to or args.traces,
        "sent": args.traces,
        "label": args.label,
        "command": "nice -n 19 .venv/bin/python benchmarks/platform_traces.py "
        + shlex.join(sys.argv[1:]),
        "when": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared), Python {platform.python_version()}",
        **result,
    }
    print(json.dumps(record, indent=2))
    if args.quick:
        return
    slug = re.sub(r"[^a-z0-9]+", "-", args.label.lower()).strip("-")
    suffix = f"__{slug}" if slug else ""
    out = RESULTS / f"platform_traces__{args.backend}__{args.grow_to or args.traces}{suffix}.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
