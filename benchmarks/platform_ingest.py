"""Ingest alone (issue #41, part 5): the sustained-ingest rows of `platform_scale.py` without its
million-trace fill, and the server's CPU time per ingested span measured in one process.

    .venv/bin/python benchmarks/platform_ingest.py --backend sqlite
    .venv/bin/python benchmarks/platform_ingest.py --backend postgresql
    .venv/bin/python benchmarks/platform_ingest.py --cpu --backend sqlite [--profile 30]

Sustained (the default): a real `assay serve` on 127.0.0.1 over an empty database (SQLite file,
or a PostgreSQL server started for the run), first filled with `--warm` traces through OTLP so
the tables and indexes are not empty, then offered `--rate` spans a second for
`--ingest-seconds` through OTLP/HTTP and through the SDK's batch route (`--routes`), exactly as
`platform_scale.py` does (its `sustained`: open loop, requests of `--request-traces` traces of 3
spans, 4 sender threads, latency = a request's send to its answer). The load average before and
after is recorded; the machine is shared, so read it beside the figures.

CPU (`--cpu`): the app in this process, each request handed to it as uvicorn hands it (one kept
event loop, the app's thread pool; no sockets, no HTTP parsing), bodies made before the clock
starts, timed with `time.process_time` (CPU seconds of this process, every thread). `--rounds`
rounds of `--requests` requests each; the best round and the median round are given, in
microseconds a span: the best is the least disturbed by the other processes on a shared
machine (their load still slows the CPU this process gets: compare runs made side by side).
`otlp parse and map` is the protobuf parse and the grouping and mapping of spans;
`otlp store` the OTLP route's store of those groups (one transaction); `otlp request` and
`sdk request` the whole request through the app (authentication, routing, body, response).
With PostgreSQL the database server's own CPU is in its process and not counted; with SQLite it
is. `--profile N` prints cProfile's top N functions of one round of each route's requests, with
the thread-pool calls run inline so that the profiler sees them.

Results: printed as JSON; `--write` puts them in benchmarks/results/platform_ingest__<backend>
[__cpu].json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import datetime as dt
import json
import os
import platform
import pstats
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from platform_scale import sustained  # benchmarks/platform_scale.py
from platform_traces import database, ingest, start_server
from platform_workload import exports, sdk_batches

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def run_sustained(args: argparse.Namespace, url: str, key: str, env: dict[str, str]) -> Any:
    base, server = start_server(url, env)
    result: dict[str, Any] = {}
    try:
        if args.warm:
            result["warm"] = ingest(base, key, args.warm)
        result["load_before"] = os.getloadavg()
        result["ingest"] = []
        for route in args.routes:
            result["ingest"].append(
                sustained(base, key, route, args.rate, args.ingest_seconds, args.request_traces)
            )
            print("ingest", result["ingest"][-1], flush=True)
        result["load_after"] = os.getloadavg()
    finally:
        server.terminate()
        server.wait(timeout=60)
    return result


def _cpu_per_span(fn: Any, rounds: list[list[Any]], spans_each: int) -> dict[str, float]:
    """CPU microseconds per span of `fn` over each round's items: the best round and the
    median one (every thread of this process counted; the best is the least disturbed by the
    other processes sharing the cores)."""
    found = []
    for items in rounds:
        started = time.process_time()
        for item in items:
            fn(item)
        found.append((time.process_time() - started) / (len(items) * spans_each) * 1e6)
    return {"best": round(min(found), 1), "median": round(statistics.median(found), 1)}


class Asgi:
    """Requests handed to the app as uvicorn hands them (one event loop, kept; the app's own
    thread pool), without sockets or a test client's per-request threads."""

    def __init__(self, app: Any, headers: dict[str, str]) -> None:
        self.app, self.headers = app, headers
        self.loop = asyncio.new_event_loop()

    def post(self, path: str, body: bytes, content_type: str) -> tuple[int, bytes]:
        return self.loop.run_until_complete(self._post(path, body, content_type))

    async def _post(self, path: str, body: bytes, content_type: str) -> tuple[int, bytes]:
        headers = {**self.headers, "content-type": content_type, "content-length": str(len(body))}
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
        }
        sent = False
        answer: dict[str, Any] = {"status": 0, "body": b""}

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.sleep(3600)
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
            elif message["type"] == "http.response.body":
                answer["body"] += message.get("body", b"")

        await self.app(scope, receive, send)
        return answer["status"], answer["body"]


@contextlib.contextmanager
def inline_threadpool() -> Any:
    """The app's `run_in_threadpool` calls run inline, so that cProfile (which sees one thread)
    sees the work they do."""
    import fastapi.dependencies.utils
    import fastapi.routing

    import assay.platform.server.otlp.ingest as otlp_ingest

    async def inline(fn: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    modules = [fastapi.routing, fastapi.dependencies.utils, otlp_ingest]
    saved = [m.run_in_threadpool for m in modules]  # type: ignore[attr-defined]
    for m in modules:
        m.run_in_threadpool = inline  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for m, fn in zip(modules, saved, strict=True):
            m.run_in_threadpool = fn  # type: ignore[attr-defined]


def run_cpu(args: argparse.Namespace, url: str, key: str) -> dict[str, Any]:
    from assay.platform.server.app import create_app
    from assay.platform.server.otlp.ingest import group_spans, parse_protobuf, store

    app = create_app(url)
    state = app.state.assay
    principal = state.authenticate(key)
    client = Asgi(app, {"authorization": f"Bearer {key}"})
    per, n, spans, k = args.request_traces, args.requests, 3 * args.request_traces, args.rounds
    seed = int(time.time()) % 100_000
    otlp_bodies = iter([b for _s, b in exports(per * (4 * n * k + 4), seed, per)])
    sdk_bodies = iter([b for _s, b in sdk_batches(per * (2 * n * k + 4), seed + 1, per)])

    def take(bodies: Any, count: int) -> list[bytes]:
        return [next(bodies) for _ in range(count)]

    def rounds(bodies: Any) -> list[list[bytes]]:
        return [take(bodies, n) for _ in range(k)]

    def otlp(body: bytes) -> None:
        status, text = client.post("/otlp/v1/traces", body, "application/x-protobuf")
        assert status == 200, text

    def batch(body: bytes) -> None:
        status, text = client.post("/api/v1/traces", body, "application/json")
        assert status == 202, text

    for body in take(otlp_bodies, 4):
        otlp(body)
    for body in take(sdk_bodies, 4):
        batch(body)
    grouped = [[group_spans(parse_protobuf(b))[0] for b in r] for r in rounds(otlp_bodies)]
    cpu = {
        "otlp parse and map": _cpu_per_span(
            lambda b: group_spans(parse_protobuf(b)), rounds(otlp_bodies), spans
        ),
        "otlp store": _cpu_per_span(
            lambda g: store(state, principal.project_id, g), grouped, spans
        ),
        "otlp request": _cpu_per_span(otlp, rounds(otlp_bodies), spans),
        "sdk request": _cpu_per_span(batch, rounds(sdk_bodies), spans),
    }
    result: dict[str, Any] = {"spans_per_request": spans, "rounds": k, "requests": n}
    result["cpu_us_per_span"] = cpu
    if args.profile:
        for name, fn, bodies in (
            ("OTLP", otlp, rounds(otlp_bodies)[0]),
            ("SDK batch", batch, rounds(sdk_bodies)[0]),
        ):
            profiler = cProfile.Profile()
            with inline_threadpool():
                profiler.enable()
                for body in bodies:
                    fn(body)
                profiler.disable()
            print(f"--- {name} requests, {n} of {spans} spans ---")
            stats = pstats.Stats(profiler)
            stats.sort_stats("tottime").print_stats(args.profile)
            stats.sort_stats("cumulative").print_stats(args.profile)
    state.engine.dispose()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--rate", type=float, default=2000, help="spans a second offered")
    parser.add_argument("--ingest-seconds", type=float, default=30)
    parser.add_argument("--request-traces", type=int, default=34, help="traces a request")
    parser.add_argument(
        "--routes", nargs="+", choices=["otlp", "sdk"], default=["otlp", "sdk"], help="timed"
    )
    parser.add_argument("--warm", type=int, default=10_000, help="traces stored first")
    parser.add_argument("--cpu", action="store_true", help="CPU per span in one process")
    parser.add_argument("--requests", type=int, default=10, help="requests a round (--cpu)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds timed (--cpu)")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="cProfile's top N")
    parser.add_argument("--write", action="store_true", help="write the results file")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="assay-ingest-"))
    env = {**os.environ, "ASSAY_HOME": str(work / "home")}
    os.environ["ASSAY_HOME"] = env["ASSAY_HOME"]
    url, stop_pg = database(args.backend, work)
    try:
        from assay.platform.server.auth.admin import create_key

        key = create_key(url, project="bench")
        result = run_cpu(args, url, key) if args.cpu else run_sustained(args, url, key, env)
    finally:
        if stop_pg:
            stop_pg()
        shutil.rmtree(work, ignore_errors=True)
    record = {
        "backend": args.backend,
        "command": ".venv/bin/python benchmarks/platform_ingest.py " + shlex.join(sys.argv[1:]),
        "when": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared), "
        f"Python {platform.python_version()}",
        **result,
    }
    print(json.dumps(record, indent=2))
    if args.write:
        out = RESULTS / f"platform_ingest__{args.backend}{'__cpu' if args.cpu else ''}.json"
        out.write_text(json.dumps(record, indent=2) + "\n")
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
