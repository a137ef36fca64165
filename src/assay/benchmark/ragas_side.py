"""Ragas side by side: the same suite, the same items, the same judge, scored by Ragas' metric.

Ragas is never installed next to assay (its pins fight ours), so it runs in its own virtualenv:
`ragas_worker.py` is started with that interpreter and scores the rows against the judge this
process makes reachable over loopback HTTP: the embedded llama.cpp server's OpenAI-compatible
URL (or the endpoint of an OpenAI-compatible remote judge), and for metrics that need embeddings a
small `/v1/embeddings` endpoint in front of assay's own embedding model. The record it writes has
the same shape as an assay run's, with `engine` naming Ragas, so `assay benchmark report` puts the
two in one table.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from assay.benchmark.runner import (
    _digest,
    _is_number,
    build_record,
    cost_figures,
    fit_to_judge,
    load_suite,
    start_local_judge,
)
from assay.benchmark.scoring import score_suite
from assay.errors import UsageError
from assay.metrics.base import model_identity
from assay.schema.outcome import Error, Ok

RAGAS_PYTHON_VARIABLE = "ASSAY_RAGAS_PYTHON"
KEY_VARIABLE = (
    "ASSAY_RAGAS_JUDGE_KEY"  # the judge's API key, handed to the worker in its environment
)
WORKER = Path(__file__).with_name("ragas_worker.py")
INSTALL_HINT = (
    "python3 -m venv /tmp/ragas-venv && /tmp/ragas-venv/bin/pip install ragas==0.4.3 "
    "langchain-community==0.4.1  (then --ragas-python /tmp/ragas-venv/bin/python)"
)

# Our metric id -> the Ragas metric (in `ragas.metrics.collections`) that measures the same thing.
RAGAS_METRICS = {
    "faithfulness": "Faithfulness",
    "answer_relevancy": "AnswerRelevancy",
    "nv_context_relevance": "ContextRelevance",
    "nv_response_groundedness": "ResponseGroundedness",
    "nv_accuracy": "AnswerAccuracy",
    "context_precision": "ContextPrecision",
    "context_utilization": "ContextUtilization",
    "context_recall": "ContextRecall",
    "factual_correctness": "FactualCorrectness",
}


def ragas_python(path: str | Path | None) -> Path:
    """The interpreter of the Ragas virtualenv: `path`, else $ASSAY_RAGAS_PYTHON."""
    chosen = path if path is not None else os.environ.get(RAGAS_PYTHON_VARIABLE)
    if not chosen:
        raise UsageError(
            f"--engine ragas needs the Python of a virtualenv with Ragas: pass --ragas-python PATH "
            f"or set {RAGAS_PYTHON_VARIABLE}. To make one: {INSTALL_HINT}"
        )
    python = Path(chosen).expanduser()
    if not python.is_file():
        raise UsageError(
            f"no Python interpreter at {python}. To make a Ragas virtualenv: {INSTALL_HINT}"
        )
    return python


def ragas_metric_class(metric_id: str) -> str:
    try:
        return RAGAS_METRICS[metric_id]
    except KeyError:
        raise UsageError(
            f"no Ragas counterpart is wired for {metric_id!r}; side by side works for "
            f"{', '.join(RAGAS_METRICS)}"
        ) from None


def judge_endpoint(llm: Any) -> tuple[str, str, str | None]:
    """(base URL, model name, API key) at which another process can reach this judge."""
    provider = llm.provider
    address = start_local_judge(llm)
    if address is not None:
        return f"{address}/v1", provider.model, None
    from assay.models.providers.openai_compat import OpenAICompatible

    if isinstance(provider, OpenAICompatible) and provider.base_url:
        return (
            provider.base_url,
            provider.model,
            provider.api_key or os.environ.get("OPENAI_API_KEY"),
        )
    raise UsageError(
        f"Ragas can only be given an OpenAI-compatible judge (the embedded one or an endpoint); "
        f"{getattr(provider, 'name', type(provider).__name__)} is not one"
    )


@contextmanager
def embeddings_endpoint(embeddings: Any) -> Iterator[str]:
    """Serve `embeddings` as an OpenAI-compatible `/v1/embeddings` on 127.0.0.1 while in the block,
    so that Ragas embeds with exactly the model assay uses. Yields the base URL."""

    # Requests are served concurrently, each on its own thread and (through the sync wrapper) its
    # own event loop: the model's limiter and in-flight table are shared across loops.
    class Handler(BaseHTTPRequestHandler):
        disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms ACK wait

        def do_POST(self) -> None:
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vectors = embeddings.embed_texts([str(text) for text in texts])
                reply = {
                    "object": "list",
                    "model": embeddings.model,
                    "data": [
                        {"object": "embedding", "index": i, "embedding": v}
                        for i, v in enumerate(vectors)
                    ],
                    "usage": {"prompt_tokens": 0, "total_tokens": 0},
                }
                status = 200
            except Exception as exc:  # the caller sees the cause as an HTTP error
                reply, status = {"error": {"message": f"{type(exc).__name__}: {exc}"}}, 500
            data = json.dumps(reply).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:  # quiet: one line per request otherwise
            return

    class Server(ThreadingHTTPServer):
        request_queue_size = 2048  # not socketserver's 5: Ragas opens many connections at once

    server = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(
        target=server.serve_forever, name="assay-embeddings-endpoint", daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _free(llm: Any) -> bool:
    price = getattr(getattr(llm, "provider", None), "price", None)
    return price is not None and price.cost(1_000_000, 1_000_000) == 0


def read_worker_cells(path: Path, n_rows: int) -> dict[int, dict[str, Any]]:
    """The worker's finished rows, by row; the last line of a row wins (a retried error)."""
    cells: dict[int, dict[str, Any]] = {}
    if path.exists():
        for text in path.read_text(encoding="utf-8").split("\n"):
            try:
                line = json.loads(text)
            except ValueError:
                continue  # blank, or cut short by a killed worker
            if (
                isinstance(line, dict)
                and isinstance(line.get("row"), int)
                and 0 <= line["row"] < n_rows
            ):
                cells[line["row"]] = line
    return cells


def to_outcome(line: dict[str, Any] | None) -> Ok | Error:
    if line is None:
        return Error(
            error_type="NotRun", message="the Ragas worker stopped before scoring this row"
        )
    if line.get("status") == "ok" and _is_number(line.get("value")):
        return Ok(value=float(line["value"]))
    return Error(
        error_type=str(line.get("error_type") or "Error"), message=str(line.get("message") or "")
    )


def _run_worker(
    command: list[str], env: dict[str, str], total: int, show_progress: bool, title: str
) -> tuple[dict[str, Any], float]:
    """Run the worker, advancing a progress bar per finished row. Returns its `ready` line and the
    seconds from its first request to its end (Ragas' import and start-up are not the judge's time)."""
    from assay.engine.progress import CellProgress

    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    stderr_lines: list[str] = []
    reader = threading.Thread(target=lambda: stderr_lines.extend(process.stderr or []), daemon=True)
    reader.start()
    info: dict[str, Any] = {}
    progress: CellProgress | None = None
    scoring_started: float | None = None
    try:
        with ExitStack() as bar:  # the progress bar starts when the worker says how much is left
            for text in process.stdout or []:
                try:
                    line = json.loads(text)
                except ValueError:
                    continue  # a library printing to stdout: not ours
                if not isinstance(line, dict):
                    continue
                if line.get("ready"):
                    info = line
                elif "todo" in line:
                    scoring_started = time.perf_counter()
                    progress = bar.enter_context(
                        CellProgress(
                            total,
                            done=line["done_before"],
                            enabled=show_progress,
                            title=title,
                            unit="rows",
                        )
                    )
                elif "row" in line and progress is not None:
                    progress.advance(failed=line.get("status") != "ok")
    finally:
        if process.poll() is None and process.stdout is not None and not process.stdout.closed:
            process.kill()  # we stopped reading early (an exception): never wait on a full pipe
        code = process.wait()
        reader.join(timeout=5)
    if code != 0:
        tail = "".join(stderr_lines[-15:]).strip()
        raise UsageError(f"the Ragas worker ({command[0]}) failed with exit code {code}:\n{tail}")
    seconds = time.perf_counter() - scoring_started if scoring_started is not None else 0.0
    return info, seconds


def run_ragas_benchmark(
    suite: str,
    metric_id: str,
    *,
    python: str | Path | None = None,
    options: dict[str, Any] | None = None,
    data_dir: str | Path | None = None,
    llm: Any = None,
    embeddings: Any = None,
    aspect: str | None = None,
    split: str = "test",
    limit: int | None = None,
    seed: int = 0,
    threshold: float = 0.5,
    runs_dir: str | Path = Path("benchmarks") / "runs",
    max_concurrency: int = 8,
    timeout: float | None = 600.0,
    show_progress: bool = True,
    cache: bool = True,
) -> dict[str, Any]:
    """Score SUITE with Ragas' counterpart of `metric_id` and return the run's record."""
    from assay.models.defaults import default_embeddings, default_llm

    metric_class = ragas_metric_class(metric_id)
    interpreter = ragas_python(python)
    root, data = load_suite(
        suite, metric_id, data_dir=data_dir, aspect=aspect, split=split, limit=limit, seed=seed
    )
    options = dict(options or {})
    llm = llm if llm is not None else default_llm(cache=cache)
    needs_embeddings = metric_class == "AnswerRelevancy"
    if needs_embeddings and embeddings is None:
        embeddings = default_embeddings(cache=cache)
    concurrency = fit_to_judge(llm, max_concurrency)

    url, model, api_key = judge_endpoint(llm)  # starts the embedded judge, outside the timed part
    settings = {"suite": suite, "aspect": data.aspect, "split": split, "limit": limit, "seed": seed}
    # Finished rows are reused only by a run of the same rows, metric, judge, embeddings and Ragas.
    identity = [
        settings,
        _digest(data.rows),
        metric_class,
        options,
        model_identity(llm),
        model_identity(embeddings) if needs_embeddings else None,
        str(interpreter),
    ]
    run_dir = (
        Path(runs_dir) / f"{suite}-{data.aspect}-ragas-{metric_id}-{split}-{_digest(identity)}"
    )
    run_dir.mkdir(parents=True, exist_ok=True)
    rows_path, out_path = run_dir / "rows.jsonl", run_dir / "ragas_cells.jsonl"
    rows_path.write_text(
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in data.rows), encoding="utf-8"
    )
    n_rows = len(data.rows)
    done_before = sum(
        line.get("status") == "ok" for line in read_worker_cells(out_path, n_rows).values()
    )

    command = [
        str(interpreter),
        "-I",
        str(WORKER),
        "--metric-class",
        metric_class,
        "--options",
        json.dumps(options),
        "--llm-url",
        url,
        "--llm-model",
        model,
        "--rows",
        str(rows_path),
        "--out",
        str(out_path),
        "--concurrency",
        str(concurrency),
        "--timeout",
        str(timeout or 1e9),
    ]
    env = {**os.environ, "RAGAS_DO_NOT_TRACK": "true"}
    env.pop(KEY_VARIABLE, None)
    if api_key:
        env[KEY_VARIABLE] = api_key
    title = f"Ragas {metric_class}"
    if needs_embeddings:
        with embeddings_endpoint(embeddings) as embeddings_url:
            info, wall = _run_worker(
                [
                    *command,
                    "--embeddings-url",
                    embeddings_url,
                    "--embeddings-model",
                    embeddings.model,
                ],
                env,
                n_rows,
                show_progress,
                title,
            )
    else:
        info, wall = _run_worker(command, env, n_rows, show_progress, title)

    lines = read_worker_cells(out_path, n_rows)
    outcomes = [to_outcome(lines.get(index)) for index in range(n_rows)]
    values = [  # to_outcome makes an Ok of a number only
        cell.value if isinstance(cell, Ok) and _is_number(cell.value) else None for cell in outcomes
    ]
    scored = score_suite(data, values, threshold=threshold, seed=seed)
    computed = n_rows - done_before
    finished = list(lines.values())

    def total(key: str) -> float:
        return sum(line.get(key, 0) for line in finished)

    cost = cost_figures(
        wall=wall,
        computed=computed,
        n_rows=n_rows,
        cell_latency=total("seconds") / len(finished) if finished else None,
        concurrency=concurrency,
        requests=total("requests"),
        cached_requests=0.0,  # Ragas has no response cache here
        input_tokens=total("input_tokens"),
        output_tokens=total("output_tokens"),
        usd=0.0 if _free(llm) else None,  # Ragas counts no cost; a model that costs nothing costs 0
    )
    version = info.get("ragas", "?")
    return build_record(
        data,
        root,
        settings,
        scored,
        outcomes,
        0,
        metric={
            "name": metric_id,
            "class": f"ragas.metrics.collections.{metric_class}",
            "version": version,
            "params": options,
        },
        prompts=[],
        judge=model_identity(llm),
        embeddings=model_identity(embeddings) if needs_embeddings else None,
        cost=cost,
        run_dir=run_dir,
        threshold=threshold,
        engine={
            "name": "ragas",
            "version": version,
            "python": str(interpreter),
            "openai": info.get("openai"),
        },
    )


__all__ = [
    "RAGAS_METRICS",
    "embeddings_endpoint",
    "judge_endpoint",
    "ragas_python",
    "run_ragas_benchmark",
]
