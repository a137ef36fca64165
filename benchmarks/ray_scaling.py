"""Weak scaling of `RayExecutor` on one host: 1, 2, 4, 8 workers against a simulated 250 ms judge.

    .venv/bin/python benchmarks/ray_scaling.py                         # 1,2,4,8 workers, >= 60 s runs
    .venv/bin/python benchmarks/ray_scaling.py --workers 1,2 --rows-per-worker 400 --runs 1   # quick
    .venv/bin/python benchmarks/ray_scaling.py --kill                  # + kill -9 one worker mid-run

What runs
---------
* A loopback OpenAI-compatible judge in a *separate process* (aiohttp): every chat request is
  answered "yes" after `--latency-ms` (250), and its arrival time is recorded. The driver reads
  the times at the end (`GET /stats`).
* N workers x `--in-flight` (16) cells each; `--rows-per-worker` x N rows (weak scaling: the work
  per worker is fixed), one judge call per row (AspectCritic, strictness 1, cache off, a limiter
  that never binds: `Limits(max_concurrency=4096, adaptive=False)`). Every run's rows are new
  texts, so nothing is shared between runs.

What is reported (medians over `--runs`)
----------------------------------------
* lower bound = rows x latency / (N x in-flight) = rows-per-worker x latency / in-flight.
* wall efficiency = T(1) / T(N): the whole `evaluate` call, actor start included.
* steady-state efficiency = server-side request rate between 10 % and 90 % of the requests,
  over the ideal N x in-flight / latency.
* with `--kill`: one worker killed with SIGKILL at a third of the run; rows lost, rows
  duplicated in the output (read once), and judge calls repeated (requests - rows).

This measures the orchestration overhead of assay and Ray on one host (actor start, dispatch,
leasing from the global limiter, writing rows), not network effects or a real cluster: every
request goes over loopback, and the host's 2 cores are shared by the judge, the driver and the
workers. Results: `benchmarks/results/ray_scaling.json` and `.md`.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

SERVER = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from aiohttp import web

    latency = float(sys.argv[1])
    arrivals = []

    async def chat(request):
        arrivals.append(time.time())
        body = await request.json()
        await asyncio.sleep(latency)
        return web.json_response({
            "id": "x", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "yes"}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
        })

    async def stats(request):
        return web.json_response({"arrivals": arrivals})

    async def reset(request):
        arrivals.clear()
        return web.json_response({})

    app = web.Application()
    app.add_routes([web.post("/v1/chat/completions", chat), web.get("/stats", stats),
                    web.post("/reset", reset)])
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[2]), print=None, access_log=None)
    """
)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def http(method: str, url: str) -> dict:
    import urllib.request

    with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=30) as reply:
        return json.loads(reply.read())


def one_run(workers: int, args: argparse.Namespace, base: str, tag: str, kill: bool) -> dict:
    from assay import evaluate
    from assay.engine.ray_executor import RayExecutor
    from assay.metrics.general.aspect_critic import AspectCritic
    from assay.models import llm_factory
    from assay.models.limits import Limits

    http("POST", base.replace("/v1", "/reset"))
    rows = [
        {"user_input": f"{tag} question {n}", "response": f"{tag} answer {n}"}
        for n in range(args.rows_per_worker * workers)
    ]
    judge = llm_factory(
        f"vllm/bench-{tag}@{base}", cache=False, limits=Limits(max_concurrency=4096, adaptive=False)
    )
    out = Path(tempfile.mkdtemp(prefix="assay-ray-bench-")) / "out"
    executor = RayExecutor(
        num_workers=workers, max_in_flight=args.in_flight, output=out, block_rows=args.block_rows
    )
    killer = None
    if kill:
        expected = args.rows_per_worker * args.latency_ms / 1000 / args.in_flight

        def kill_one() -> None:
            time.sleep(6 + expected / 3)  # about a third into the run, actor start included
            parts = sorted((out / "rows").glob("part-*.jsonl"))
            if parts:
                os.kill(int(parts[0].name.split("-")[2]), signal.SIGKILL)

        killer = threading.Thread(target=kill_one, daemon=True)
        killer.start()
    cpu = time.process_time()
    began = time.perf_counter()
    result = evaluate(
        rows,
        [AspectCritic(name="critic", definition="any")],
        llm=judge,
        executor=executor,
        show_progress=False,
    )
    wall = time.perf_counter() - began
    cpu = time.process_time() - cpu
    arrivals = sorted(http("GET", base.replace("/v1", "/stats"))["arrivals"])
    n = len(arrivals)
    low, high = arrivals[n // 10], arrivals[(9 * n) // 10]
    steady_rate = ((9 * n) // 10 - n // 10) / max(high - low, 1e-9)
    ideal_rate = workers * args.in_flight / (args.latency_ms / 1000)
    stats = executor.last_run
    ok = sum(1 for row in result.outcomes if row["critic"].status == "ok")
    return {
        "workers": workers,
        "rows": len(rows),
        "wall_s": round(wall, 2),
        "lower_bound_s": round(len(rows) * args.latency_ms / 1000 / (workers * args.in_flight), 2),
        "first_call_s": round(stats.first_call or 0.0, 2),
        "steady_rate": round(steady_rate, 1),
        "ideal_rate": ideal_rate,
        "steady_efficiency": round(steady_rate / ideal_rate, 3),
        "requests": n,
        "rows_ok": ok,
        "rows_lost": len(rows) - ok,
        "workers_lost": stats.workers_lost,
        "duplicate_cells": stats.duplicate_cells,
        "repeated_calls": n - len(rows),
        "driver_cpu_s": round(cpu, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", default="1,2,4,8")
    parser.add_argument("--rows-per-worker", type=int, default=4000)  # 4000 x 0.25 s / 16 = 62.5 s
    parser.add_argument("--latency-ms", type=float, default=250.0)
    parser.add_argument("--in-flight", type=int, default=16)
    parser.add_argument("--block-rows", type=int, default=64)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--kill", action="store_true", help="also kill -9 one worker mid-run")
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()
    counts = [int(item) for item in args.workers.split(",")]

    import ray

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.latency_ms / 1000), str(port)]
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(100):
            try:
                http("GET", base.replace("/v1", "/stats"))
                break
            except OSError:
                time.sleep(0.1)
        ray.init(
            address="local",
            num_cpus=max(4, os.cpu_count() or 1),
            include_dashboard=False,
            log_to_driver=False,
        )
        load_before = os.getloadavg()[0]
        runs: dict[int, list[dict]] = {}
        for workers in counts:
            for attempt in range(args.runs):
                run = one_run(workers, args, base, f"n{workers}r{attempt}", kill=False)
                print(json.dumps(run), flush=True)
                runs.setdefault(workers, []).append(run)
        killed = one_run(max(counts), args, base, "kill", kill=True) if args.kill else None
        if killed:
            print(json.dumps({"kill": killed}), flush=True)
        load_after = os.getloadavg()[0]
    finally:
        server.terminate()
        server.wait(timeout=10)
    table = []
    base_wall = statistics.median(r["wall_s"] for r in runs[counts[0]])
    for workers in counts:
        wall = statistics.median(r["wall_s"] for r in runs[workers])
        table.append(
            {
                "workers": workers,
                "rows": runs[workers][0]["rows"],
                "median_wall_s": wall,
                "lower_bound_s": runs[workers][0]["lower_bound_s"],
                "wall_efficiency": round(base_wall / wall, 3),
                "steady_efficiency": statistics.median(
                    r["steady_efficiency"] for r in runs[workers]
                ),
                "median_first_call_s": statistics.median(r["first_call_s"] for r in runs[workers]),
            }
        )
    report = {
        "settings": vars(args),
        "host": {"cpus": os.cpu_count(), "load_before": load_before, "load_after": load_after},
        "ray": ray.__version__,
        "table": table,
        "runs": runs,
        "kill": killed,
        "note": "orchestration overhead on one host over loopback; not network or cluster effects",
    }
    for row in table:
        print(row)
    if not args.no_save:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "ray_scaling.json").write_text(json.dumps(report, indent=2))
        lines = [
            "# RayExecutor weak scaling (one host, loopback judge)",
            "",
            f"latency {args.latency_ms:g} ms, {args.in_flight} in flight per worker, "
            f"{args.rows_per_worker} rows per worker, median of {args.runs}; Ray {ray.__version__}, "
            f"{os.cpu_count()} CPUs, load {load_before:.1f} -> {load_after:.1f}. This measures "
            "orchestration overhead on one host, not network effects.",
            "",
            "| workers | rows | wall s | lower bound s | wall efficiency | steady efficiency | first call s |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['workers']} | {r['rows']} | {r['median_wall_s']} | {r['lower_bound_s']} | "
            f"{r['wall_efficiency']} | {r['steady_efficiency']} | {r['median_first_call_s']} |"
            for r in table
        ]
        if killed:
            lines += [
                "",
                f"kill -9 one of {killed['workers']} workers mid-run: rows lost "
                f"{killed['rows_lost']}, duplicated cells {killed['duplicate_cells']} (read once), "
                f"repeated calls {killed['repeated_calls']} of {killed['rows']} "
                f"({100 * killed['repeated_calls'] / killed['rows']:.2f} %)",
            ]
        (RESULTS / "ray_scaling.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
