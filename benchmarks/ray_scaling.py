"""Weak scaling of `RayExecutor` on one host: 1, 2, 4, 8 workers against a simulated 250 ms judge.

    .venv/bin/python benchmarks/ray_scaling.py            # everything: 1,2,4,8 workers, >= 60 s runs
    .venv/bin/python benchmarks/ray_scaling.py --only driver-kill --workers 2 \
        --rows-per-worker 200 --save-to /tmp/ray-smoke   # one measurement, small, results elsewhere

What runs
---------
* A loopback OpenAI-compatible judge in a *separate process* (aiohttp): every chat request is
  answered "yes" after `--latency-ms` (250), and its arrival time is recorded. The driver reads
  the times at the end (`GET /stats`).
* N workers x `--in-flight` (16) cells each; `--rows-per-worker` x N rows (weak scaling: the work
  per worker is fixed), one judge call per row (AspectCritic, strictness 1, cache off, a limiter
  that never binds: `Limits(max_concurrency=4096, adaptive=False)`). Every run's rows are new
  texts, so nothing is shared between runs.

What is reported (`--only` picks among the three; all by default)
------------------------------------------------------------------
* scaling, medians over `--runs` per size, with the spread (min and max) beside them:
  - lower bound = rows x latency / (N x in-flight) = rows-per-worker x latency / in-flight.
  - wall efficiency = T(1) / T(N): the whole `evaluate` call, actor start included.
  - steady-state efficiency = server-side request rate between 10 % and 90 % of the requests,
    over the ideal N x in-flight / latency.
* worker-kill: one of the largest size's workers killed with SIGKILL at a third of the run; rows
  lost, rows duplicated in the output (read once), judge calls repeated (requests - rows).
* driver-kill: the driver of a run with the largest size, in a process of its own, killed with
  SIGKILL once a third of the rows are written; then the same run again with `resume=True`. The
  judge has a shared SQLite response cache (one host), so calls the dead run had answered come
  from it. Reported: whether the union is complete (every row written exactly once, all ok), and
  the judge calls repeated over both runs (server-side requests - rows) as a share of the run.

This measures the orchestration overhead of assay and Ray on one host (actor start, dispatch,
leasing from the global limiter, writing rows), not network effects or a real cluster: every
request goes over loopback, and the host's 2 cores are shared by the judge, the driver and the
workers. Results: `benchmarks/results/ray_scaling.json` and `.md` (`--save-to` elsewhere).
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


def bench_rows(tag: str, count: int) -> list[dict]:
    """The rows of one run: new texts per tag, so no two runs share an answer."""
    return [
        {"user_input": f"{tag} question {n}", "response": f"{tag} answer {n}"} for n in range(count)
    ]


def bench_judge(base: str, tag: str, cache: object = False):
    from assay.models import llm_factory
    from assay.models.limits import Limits

    return llm_factory(
        f"vllm/bench-{tag}@{base}", cache=cache, limits=Limits(max_concurrency=4096, adaptive=False)
    )


def bench_metric():
    from assay.metrics.general.aspect_critic import AspectCritic

    return AspectCritic(name="critic", definition="any")


def one_run(workers: int, args: argparse.Namespace, base: str, tag: str, kill: bool) -> dict:
    from assay import evaluate
    from assay.engine.ray.executor import RayExecutor

    http("POST", base.replace("/v1", "/reset"))
    rows = bench_rows(tag, args.rows_per_worker * workers)
    judge = bench_judge(base, tag)
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
    result = evaluate(rows, [bench_metric()], llm=judge, executor=executor, show_progress=False)
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


# The driver of the driver-kill measurement, in a process of its own (killed with SIGKILL).
CHILD_DRIVER = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from ray_scaling import bench_judge, bench_metric, bench_rows
    from assay import evaluate
    from assay.engine.ray.executor import RayExecutor
    from assay.models import ResponseCache

    settings = json.loads(sys.argv[2])
    evaluate(
        bench_rows(settings["tag"], settings["rows"]),
        [bench_metric()],
        llm=bench_judge(settings["base"], settings["tag"], ResponseCache(settings["cache"])),
        executor=RayExecutor(address=settings["address"], output=settings["out"],
                             **settings["executor"]),
        show_progress=False,
    )
    """
)


def written_lines(out: Path) -> int:
    rows = out / "rows"
    return sum(part.read_bytes().count(b"\n") for part in rows.glob("part-*.jsonl"))


def driver_kill_run(workers: int, args: argparse.Namespace, base: str, address: str) -> dict:
    """Kill the driver at a third of the rows written, then resume; count what the judge saw."""
    from assay import evaluate
    from assay.engine.ray.executor import RayExecutor
    from assay.engine.ray.output import OutputDirectory, row_ids
    from assay.models import ResponseCache
    from assay.schema.dataset import EvaluationDataset

    http("POST", base.replace("/v1", "/reset"))
    tag = f"dkill{int(time.time())}"
    n_rows = args.rows_per_worker * workers
    folder = Path(tempfile.mkdtemp(prefix="assay-ray-bench-"))
    out, cache = folder / "out", folder / "cache.sqlite"
    executor = {
        "num_workers": workers,
        "max_in_flight": args.in_flight,
        "block_rows": args.block_rows,
    }
    settings = {"tag": tag, "rows": n_rows, "base": base, "cache": str(cache), "out": str(out),
                "address": address, "executor": executor}  # fmt: skip
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_DRIVER, str(Path(__file__).parent), json.dumps(settings)],
        cwd=ROOT,
    )
    began = time.perf_counter()
    try:
        while (out / "rows").is_dir() is False or written_lines(out) < n_rows // 3:
            if child.poll() is not None:
                raise RuntimeError(f"the first run ended (exit {child.returncode}) before the kill")
            if time.perf_counter() - began > 600:
                raise RuntimeError("no third of the rows written within 600 s")
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    killed_after = time.perf_counter() - began
    # The driver's workers die with it (Ray ends the job's actors); wait until they have.
    pids = {int(part.name.split("-")[2]) for part in (out / "rows").glob("part-*.jsonl")}
    deadline = time.monotonic() + 120
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    first_calls = len(http("GET", base.replace("/v1", "/stats"))["arrivals"])
    rows = bench_rows(tag, n_rows)
    ids = row_ids(EvaluationDataset.from_list(rows))
    position = {row_id: index for index, row_id in enumerate(ids)}
    kept = len(OutputDirectory(out).collect(position, {"critic"}).cells)

    http("POST", base.replace("/v1", "/reset"))
    resumed = RayExecutor(output=out, resume=True, **executor)
    began = time.perf_counter()
    result = evaluate(
        rows,
        [bench_metric()],
        llm=bench_judge(base, tag, ResponseCache(cache)),
        executor=resumed,
        show_progress=False,
    )
    resume_wall = time.perf_counter() - began
    second_calls = len(http("GET", base.replace("/v1", "/stats"))["arrivals"])
    final = OutputDirectory(out).collect(position, {"critic"})
    ok = sum(1 for row in result.outcomes if row["critic"].status == "ok")
    lines = written_lines(out)
    repeated = first_calls + second_calls - n_rows
    stats = resumed.last_run
    return {
        "workers": workers,
        "rows": n_rows,
        "killed_after_s": round(killed_after, 2),
        "rows_kept_after_kill": kept,
        "rows_scored_on_resume": stats.rows_scored,
        "rows_ok": ok,
        "rows_in_output": len(final.cells),
        "lines_in_output": lines,
        "duplicate_cells": final.duplicate_cells,
        "union_complete": ok == n_rows and len(final.cells) == n_rows and lines == n_rows,
        "judge_calls_first_run": first_calls,
        "judge_calls_resume": second_calls,
        "cached_answers_on_resume": sum(u["critic"].cached_requests for u in result.usages),
        "repeated_calls": repeated,
        "repeated_share": round(repeated / n_rows, 5),
        "resume_wall_s": round(resume_wall, 2),
    }


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


MEASUREMENTS = ("scaling", "worker-kill", "driver-kill")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", default="1,2,4,8")
    parser.add_argument("--rows-per-worker", type=int, default=4000)  # 4000 x 0.25 s / 16 = 62.5 s
    parser.add_argument("--latency-ms", type=float, default=250.0)
    parser.add_argument("--in-flight", type=int, default=16)
    parser.add_argument("--block-rows", type=int, default=64)
    parser.add_argument("--runs", type=int, default=3, help="runs per size (scaling); median")
    parser.add_argument(
        "--only", default=",".join(MEASUREMENTS), help=f"comma-separated: {', '.join(MEASUREMENTS)}"
    )
    parser.add_argument("--save-to", type=Path, default=RESULTS, help="folder of the results")
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()
    counts = [int(item) for item in args.workers.split(",")]
    chosen = [item.strip() for item in args.only.split(",") if item.strip()]
    unknown = sorted(set(chosen) - set(MEASUREMENTS))
    if unknown or not chosen:
        parser.error(f"--only: unknown {', '.join(unknown) or '(empty)'}; pick from {MEASUREMENTS}")
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    from assay.engine.ray.cluster import import_ray, start_local

    ray = import_ray(local=True)

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.latency_ms / 1000), str(port)]
    )
    base = f"http://127.0.0.1:{port}/v1"
    runs: dict[int, list[dict]] = {}
    killed = driver_killed = None
    try:
        for _ in range(100):
            try:
                http("GET", base.replace("/v1", "/stats"))
                break
            except OSError:
                time.sleep(0.1)
        start_local(ray, num_cpus=max(4, os.cpu_count() or 1), log_to_driver=False)
        load_before = os.getloadavg()[0]
        if "scaling" in chosen:
            for workers in counts:
                for attempt in range(args.runs):
                    run = one_run(workers, args, base, f"n{workers}r{attempt}", kill=False)
                    print(json.dumps(run), flush=True)
                    runs.setdefault(workers, []).append(run)
        if "worker-kill" in chosen:
            killed = one_run(max(counts), args, base, "kill", kill=True)
            print(json.dumps({"worker_kill": killed}), flush=True)
        if "driver-kill" in chosen:
            address = ray.get_runtime_context().gcs_address
            driver_killed = driver_kill_run(max(counts), args, base, address)
            print(json.dumps({"driver_kill": driver_killed}), flush=True)
        load_after = os.getloadavg()[0]
    finally:
        server.terminate()
        server.wait(timeout=10)
    table = scaling_table(counts, runs) if runs else []
    report = {
        "settings": {**vars(args), "save_to": str(args.save_to)},
        "host": {"cpus": os.cpu_count(), "load_before": load_before, "load_after": load_after},
        "ray": ray.__version__,
        "table": table,
        "runs": runs,
        "kill": killed,
        "driver_kill": driver_killed,
        "note": "orchestration overhead on one host over loopback; not network or cluster effects",
    }
    for row in table:
        print(row)
    if not args.no_save:
        args.save_to.mkdir(parents=True, exist_ok=True)
        (args.save_to / "ray_scaling.json").write_text(json.dumps(report, indent=2))
        (args.save_to / "ray_scaling.md").write_text(markdown(args, report, ray.__version__))


def scaling_table(counts: list[int], runs: dict[int, list[dict]]) -> list[dict]:
    """Medians per size, with the spread (min, max) of the runs."""
    table = []
    base_wall = statistics.median(r["wall_s"] for r in runs[counts[0]])
    for workers in counts:
        walls = [r["wall_s"] for r in runs[workers]]
        steady = [r["steady_efficiency"] for r in runs[workers]]
        wall = statistics.median(walls)
        table.append(
            {
                "workers": workers,
                "rows": runs[workers][0]["rows"],
                "runs": len(walls),
                "median_wall_s": wall,
                "wall_s_range": [min(walls), max(walls)],
                "lower_bound_s": runs[workers][0]["lower_bound_s"],
                "wall_efficiency": round(base_wall / wall, 3),
                "steady_efficiency": statistics.median(steady),
                "steady_efficiency_range": [min(steady), max(steady)],
                "median_first_call_s": statistics.median(r["first_call_s"] for r in runs[workers]),
            }
        )
    return table


def markdown(args: argparse.Namespace, report: dict, ray_version: str) -> str:
    host = report["host"]
    lines = [
        "# RayExecutor weak scaling (one host, loopback judge)",
        "",
        f"latency {args.latency_ms:g} ms, {args.in_flight} in flight per worker, "
        f"{args.rows_per_worker} rows per worker"
        + (f", median of {args.runs} runs (min-max in brackets)" if report["table"] else "")
        + f"; Ray {ray_version}, {host['cpus']} CPUs, load {host['load_before']:.1f} -> "
        f"{host['load_after']:.1f}. This measures orchestration overhead on one host, not "
        "network effects.",
    ]
    if report["table"]:
        lines += [
            "",
            "| workers | rows | wall s | lower bound s | wall efficiency | steady efficiency | first call s |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['workers']} | {r['rows']} | {r['median_wall_s']} "
            f"[{r['wall_s_range'][0]}-{r['wall_s_range'][1]}] | {r['lower_bound_s']} | "
            f"{r['wall_efficiency']} | {r['steady_efficiency']} "
            f"[{r['steady_efficiency_range'][0]}-{r['steady_efficiency_range'][1]}] | "
            f"{r['median_first_call_s']} |"
            for r in report["table"]
        ]
    killed = report["kill"]
    if killed:
        lines += [
            "",
            f"kill -9 one of {killed['workers']} workers mid-run: rows lost "
            f"{killed['rows_lost']}, duplicated cells {killed['duplicate_cells']} (read once), "
            f"repeated calls {killed['repeated_calls']} of {killed['rows']} "
            f"({100 * killed['repeated_calls'] / killed['rows']:.2f} %)",
        ]
    dk = report["driver_kill"]
    if dk:
        lines += [
            "",
            f"kill -9 the driver of a {dk['workers']}-worker run after {dk['killed_after_s']} s "
            f"({dk['rows_kept_after_kill']} of {dk['rows']} rows written), then resume: union "
            f"{'complete' if dk['union_complete'] else 'NOT complete'} ({dk['rows_in_output']} "
            f"rows, {dk['lines_in_output']} lines, {dk['duplicate_cells']} duplicated), "
            f"{dk['rows_scored_on_resume']} rows scored on resume, "
            f"{dk['cached_answers_on_resume']} of them answered by the shared cache; repeated "
            f"judge calls {dk['repeated_calls']} of {dk['rows']} "
            f"({100 * dk['repeated_share']:.2f} %)",
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
