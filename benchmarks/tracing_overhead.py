"""What tracing costs the application (issue #17): caller time per monitored call, and memory
when the assay server is down for 100,000 calls; how many traces a second reach a real
`assay serve` (issue #45).

    .venv/bin/python benchmarks/tracing_overhead.py            # writes benchmarks/results/tracing_overhead.{json,md}
    .venv/bin/python benchmarks/tracing_overhead.py --quick    # fewer calls, nothing written
    .venv/bin/python benchmarks/tracing_overhead.py --only server   # part 4 alone, merged into the results

1. Over HTTP: the real `openai.OpenAI` client against the loopback fake OpenAI server
   (`tests/models/fake_openai.py`), plain and monitored calls interleaved; the traces go to a
   loopback collector (`tests/platform/test_sdk_tracing_export.Collector`) while the calls run, so
   the export thread's work competes for the GIL as in an application. Median and p95 of each, and
   the median of the paired differences.
2. Instrumentation alone: `monitor`'s wrapper around a stand-in `create` that returns a prebuilt
   real `ChatCompletion` at once; the wrapper's time minus the bare stand-in's is the overhead,
   without network noise. Same collector, same export thread.
3. Server down: 100,000 instrumented calls with the server's port closed; Python heap
   (tracemalloc) and RSS every 10,000 calls, and the exporter's counters (dropped, waiting).
4. A real server: `assay serve` (SQLite, default settings) in its own process on 127.0.0.1, the
   exporter at its defaults. An application thread makes 20,000 instrumented calls paced at 2,000
   a second: traces dropped, and how long the export needs after the last call. Then 20,000 calls
   as fast as the thread can, with a queue that holds them all: traces stored a second from the
   first call to the last trace stored (the export's ceiling on this machine).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import socket
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import openai  # noqa: E402
from openai.types.chat import ChatCompletion  # noqa: E402
from tests.models import fake_openai  # noqa: E402
from tests.platform.test_sdk_tracing_export import Collector  # noqa: E402
from tests.platform.test_trace_export_load import Serve  # noqa: E402

import assay.platform as ragmetrics  # noqa: E402
from assay.platform.sdk import export  # noqa: E402
from assay.platform.sdk.llm_shapes import CHAT  # noqa: E402
from assay.platform.sdk.monitor import _monitored_call  # noqa: E402

MESSAGES = [
    {"role": "system", "content": "Answer from the context only."},
    {"role": "user", "content": "Context: Paris is the capital of France.\n\nWhat is the capital?"},
]


def quantiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return {"median_us": statistics.median(ordered) * 1e6, "p95_us": p95 * 1e6, "n": len(ordered)}


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def over_http(calls: int) -> dict[str, object]:
    # the fake writes headers and body separately: without TCP_NODELAY each answer waits for a
    # delayed ACK (40 ms) and the overhead would drown in it
    fake_openai._Handler.disable_nagle_algorithm = True
    fake = fake_openai.FakeOpenAI().start()
    fake.default = fake_openai.ok("Paris.", usage=(30, 2))
    collector = Collector().start()
    ragmetrics.login("bench-key", base_url=collector.url)
    try:
        raw = openai.OpenAI(api_key="sk-bench", base_url=fake.url, max_retries=0)
        monitored = ragmetrics.monitor(raw, metadata={"bench": True})
        for client in (raw, monitored):  # warm up connections and code paths
            for _ in range(50):
                client.chat.completions.create(model="m", messages=MESSAGES)
        plain, traced, paired = [], [], []
        for _ in range(calls):
            started = time.perf_counter()
            raw.chat.completions.create(model="m", messages=MESSAGES)
            middle = time.perf_counter()
            monitored.chat.completions.create(model="m", messages=MESSAGES)
            ended = time.perf_counter()
            plain.append(middle - started)
            traced.append(ended - middle)
            paired.append((ended - middle) - (middle - started))
        assert ragmetrics.flush(30)
        received = len(collector.traces)
    finally:
        collector.stop()
        fake.stop()
    return {
        "plain": quantiles(plain),
        "monitored": quantiles(traced),
        "paired_difference_median_us": statistics.median(paired) * 1e6,
        "traces_received": received,
    }


def canned_completion() -> ChatCompletion:
    return ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "Paris."},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 30, "completion_tokens": 2, "total_tokens": 32},
        }
    )


def instrumentation(calls: int) -> dict[str, object]:
    answer = canned_completion()

    def create(**kwargs: object) -> ChatCompletion:
        return answer

    wrapped = _monitored_call(create, CHAT, {"metadata": {"bench": True}, "callback": None})
    collector = Collector().start()
    ragmetrics.login("bench-key", base_url=collector.url)
    try:
        for _ in range(1000):
            wrapped(model="m", messages=MESSAGES)
        assert ragmetrics.flush(30)
        before = export.export_stats()
        bare, traced = [], []
        clock = time.perf_counter
        started_all = clock()
        for _ in range(calls):
            started = clock()
            create(model="m", messages=MESSAGES)
            middle = clock()
            wrapped(model="m", messages=MESSAGES)
            ended = clock()
            bare.append(middle - started)
            traced.append(ended - middle)
        calls_done = clock()
        assert ragmetrics.flush(60)
        flushed = clock()
        received = len(collector.traces)
    finally:
        collector.stop()
    after = export.export_stats()
    delta = {k: after[k] - before[k] for k in ("queued", "sent", "dropped", "rejected")}
    overhead = [t - b for t, b in zip(traced, bare, strict=True)]
    return {
        "bare": quantiles(bare),
        "monitored": quantiles(traced),
        "overhead": quantiles(overhead),
        "traces_received": received,
        "export": delta,
        "calls_per_second": round(calls / (calls_done - started_all)),
        "sent_per_second": round(delta["sent"] / (flushed - started_all)),
    }


def server_down(calls: int) -> dict[str, object]:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    exporter = export.Exporter(
        session=lambda: session, interval=0.5, max_backoff=5.0
    )  # its own, fresh counters
    session = ragmetrics.sdk.client.Client("bench-key", f"http://127.0.0.1:{port}")
    answer = canned_completion()

    def create(**kwargs: object) -> ChatCompletion:
        return answer

    wrapped = _monitored_call(create, CHAT, {"metadata": {}, "callback": None})
    previous, export._exporter = export._exporter, exporter
    gc.collect()
    tracemalloc.start()
    base_heap = tracemalloc.get_traced_memory()[0]
    base_rss = rss_mb()
    samples = []
    started = time.perf_counter()
    try:
        for n in range(1, calls + 1):
            wrapped(model="m", messages=[{"role": "user", "content": f"question {n}"}])
            if n % 10_000 == 0:
                heap = (tracemalloc.get_traced_memory()[0] - base_heap) / 2**20
                samples.append(
                    {
                        "calls": n,
                        "heap_mb": round(heap, 2),
                        "rss_mb": round(rss_mb() - base_rss, 1),
                        **exporter.stats(),
                    }
                )
        elapsed = time.perf_counter() - started
    finally:
        tracemalloc.stop()
        export._exporter = previous
        exporter.shutdown(0.1)
    return {
        "calls": calls,
        "max_queue": exporter.max_queue,
        "seconds": round(elapsed, 2),
        "samples": samples,
    }


def _app_run(calls: int, rate: float | None) -> tuple[float, float]:
    """`calls` instrumented calls from a thread, paced at `rate` a second (None: no pause);
    (the start, as time.perf_counter, and the calls a second made)."""
    answer = canned_completion()
    wrapped = _monitored_call(
        lambda **_: answer, CHAT, {"metadata": {"bench": True}, "callback": None}
    )
    times: list[float] = []

    def run() -> None:
        started = time.perf_counter()
        for n in range(calls):
            if rate is not None and (ahead := started + n / rate - time.perf_counter()) > 0:
                time.sleep(ahead)
            wrapped(model="m", messages=[{"role": "user", "content": f"question {n}"}])
        times.extend((started, time.perf_counter()))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return times[0], calls / (times[1] - times[0])


def real_server(calls: int, rate: float) -> dict[str, object]:
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as home:
        serve = Serve(Path(home)).start()
        try:
            session = ragmetrics.sdk.client.Client(serve.key, serve.base)
            for name, options, pace in (
                ("paced", {}, rate),
                ("ceiling", {"max_queue": calls}, None),
            ):
                exporter = export.Exporter(session=lambda: session, **options)
                previous, export._exporter = export._exporter, exporter
                try:
                    started, made = _app_run(calls, pace)
                    calls_done = time.perf_counter()
                    assert exporter.flush(300)
                    flushed = time.perf_counter()
                finally:
                    export._exporter = previous
                    exporter.shutdown(1.0)
                stats = exporter.stats()
                results[name] = {
                    "calls": calls,
                    "calls_per_second": round(made),
                    "max_queue": exporter.max_queue,
                    "senders": getattr(exporter, "senders", 1),  # one thread before #45
                    "batch_size": exporter.batch_size,
                    "sent": stats["sent"],
                    "dropped": stats["dropped"],
                    "rejected": stats["rejected"],
                    "drain_seconds": round(flushed - calls_done, 2),
                    "stored_per_second": round(stats["sent"] / (flushed - started)),
                }
            results["stored"] = len(serve.stored())
        finally:
            serve.stop()
    return results


def markdown(result: dict[str, object]) -> str:
    http, inst, down = result["over_http"], result["instrumentation"], result["server_down"]
    lines = [
        "# Tracing overhead",
        "",
        f"assay, {result['date']}, Python {result['python']}, {result['cores']} cores; load "
        f"average {result['load_before']} before and {result['load_after']} after (other work on "
        "the machine inflates these numbers).",
        "",
        "## Caller time per call (µs)",
        "",
        "| what | n | median | p95 |",
        "|---|---|---|---|",
    ]
    rows = [
        ("HTTP to the loopback fake, plain client", http["plain"]),
        ("HTTP to the loopback fake, monitored client", http["monitored"]),
        ("stand-in `create`, bare", inst["bare"]),
        ("stand-in `create`, monitored", inst["monitored"]),
        ("**overhead of monitoring** (monitored − bare, paired)", inst["overhead"]),
    ]
    for label, q in rows:
        lines.append(f"| {label} | {q['n']} | {q['median_us']:.1f} | {q['p95_us']:.1f} |")
    lines += [
        "",
        f"Over HTTP, the median of the paired differences (monitored − plain) is "
        f"{http['paired_difference_median_us']:.1f} µs; network noise is of the same size. "
        f"Traces received by the collector: {http['traces_received']} (HTTP run), "
        f"{inst['traces_received']} (instrumentation run).",
        "",
        f"In the instrumentation run the calls came at {inst['calls_per_second']:,} a second, "
        f"faster than the one export thread sends ({inst['sent_per_second']:,} traces a second "
        f"over loopback): of {inst['export']['queued']:,} traces, {inst['export']['sent']:,} were "
        f"sent and {inst['export']['dropped']:,} dropped (the oldest, counted) — the bound at work. "
        "An application whose calls wait on a model makes far fewer calls a second.",
        "",
        f"Goal (issue #17): under 1 ms of the caller's time at the median: "
        f"{'met' if inst['overhead']['median_us'] < 1000 else 'NOT met'} "
        f"({inst['overhead']['median_us']:.1f} µs).",
        "",
        f"## Server down: {down['calls']:,} calls (queue bound {down['max_queue']:,})",
        "",
        "| calls | Python heap (MB, above start) | RSS (MB, above start) | dropped | waiting |",
        "|---|---|---|---|---|",
    ]
    for s in down["samples"]:
        lines.append(
            f"| {s['calls']:,} | {s['heap_mb']} | {s['rss_mb']} | {s['dropped']:,} | {s['waiting']:,} |"
        )
    lines += [
        "",
        f"{down['calls']:,} calls took {down['seconds']} s with tracemalloc on. Memory stops "
        "growing once the queue is full: the oldest traces are dropped and counted.",
        "",
    ]
    server = result.get("real_server")
    if server:
        lines += [
            "## A real `assay serve`: traces a second (issue #45)",
            "",
            "`assay serve` on SQLite in its own process on 127.0.0.1, the exporter at its defaults. "
            "An application thread makes 20,000 instrumented calls paced at 2,000 a second, then "
            "20,000 as fast as it can with a queue that holds them all (the export's ceiling).",
            "",
            "| exporter | run | calls a second | queue bound | sent | dropped | export after the last call (s) | stored a second |",
            "|---|---|---|---|---|---|---|---|",
        ]
        before = result.get("real_server_before")
        for name, data in (("before #45", before), ("now", server)):
            if not data:
                continue
            setup = f"{name}: {data['paced']['senders']} sender(s), batches of {data['paced']['batch_size']}"
            for label, run in (
                ("paced at 2,000 a second", data["paced"]),
                ("as fast as it can", data["ceiling"]),
            ):
                lines.append(
                    f"| {setup} | {label} | {run['calls_per_second']:,} | "
                    f"{run['max_queue']:,} | {run['sent']:,} | {run['dropped']:,} | "
                    f"{run['drain_seconds']} | {run['stored_per_second']:,} |"
                )
        lines.append("")
        for name, data in (("before #45", before), ("now", server)):
            if data:
                lines.append(
                    f"- {name}: run {data.get('date', result['date'])}, load average "
                    f"{data.get('load_before', '?')} before and {data.get('load_after', '?')} after; "
                    f"traces on the server afterwards: {data['stored']:,}."
                )
        lines += [
            "",
            "The machine has 2 cores shared by the application, its export threads and the server; "
            'other work on it lowers every figure. "Before" is the exporter and server of the '
            "commit before issue #45's change, run with the same command "
            "(`--only server --before`).",
            "",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer calls; nothing written")
    parser.add_argument("--only", choices=["server"], help="run one part, merged into the results")
    parser.add_argument(
        "--before",
        action="store_true",
        help="with --only server: store the run as the figure before a change (real_server_before)",
    )
    args = parser.parse_args()
    out = ROOT / "benchmarks" / "results"
    load_before = os.getloadavg()[0]
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    if args.only == "server":
        result = json.loads((out / "tracing_overhead.json").read_text())
        result["real_server_before" if args.before else "real_server"] = {
            "date": now,
            "load_before": round(load_before, 2),
            **real_server(20_000, 2_000),
            "load_after": round(os.getloadavg()[0], 2),
        }
    else:
        result = {
            "date": now,
            "python": platform.python_version(),
            "cores": os.cpu_count(),
            "load_before": round(load_before, 2),
            "over_http": over_http(200 if args.quick else 2_000),
            "instrumentation": instrumentation(2_000 if args.quick else 50_000),
            "server_down": server_down(20_000 if args.quick else 100_000),
            "real_server": real_server(4_000 if args.quick else 20_000, 2_000),
        }
        result["load_after"] = round(os.getloadavg()[0], 2)
    text = markdown(result)
    print(text)
    if not args.quick:
        (out / "tracing_overhead.json").write_text(json.dumps(result, indent=2) + "\n")
        (out / "tracing_overhead.md").write_text(text)


if __name__ == "__main__":
    main()
