"""Score benchmark rows with a Ragas metric: run by the *Ragas* interpreter, never imported by assay.

`assay benchmark ... --engine ragas` starts this file with the Python of a separate virtualenv
that has Ragas installed (assay is not installed there, so this file imports nothing from assay).
It scores each row with a `ragas.metrics.collections` metric against the judge the parent gives
(an OpenAI-compatible URL: the parent's embedded llama.cpp server, or a remote endpoint) and
writes one JSON line per finished row to the output file, which makes an interrupted run
resumable: rows already there with a value are not scored again.

Protocol: one line `{"ready": true, "ragas": version, ...}` on stdout once Ragas is imported, then
one line per finished row (the same line that is appended to the output file), then `{"done": true}`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import inspect
import json
import math
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
warnings.filterwarnings("ignore")

KEY_VARIABLE = "ASSAY_RAGAS_JUDGE_KEY"

# Calls and tokens of the row whose task made the request (httpx runs hooks in that task).
_ROW_USAGE: contextvars.ContextVar[dict[str, int] | None] = contextvars.ContextVar(
    "row_usage", default=None
)


async def _count_usage(response: Any) -> None:
    usage = _ROW_USAGE.get()
    if usage is None:
        return
    usage["requests"] += 1
    await response.aread()
    try:
        body = response.json()
    except ValueError:
        return
    counted = body.get("usage") if isinstance(body, dict) else None
    if isinstance(counted, dict):
        usage["input_tokens"] += int(counted.get("prompt_tokens") or 0)
        usage["output_tokens"] += int(counted.get("completion_tokens") or 0)


def _client(base_url: str, api_key: str | None) -> Any:
    import httpx
    from openai import AsyncOpenAI

    http = httpx.AsyncClient(timeout=httpx.Timeout(900.0), event_hooks={"response": [_count_usage]})
    return AsyncOpenAI(
        base_url=base_url,
        api_key=api_key or "none",
        http_client=http,  # type: ignore[arg-type]  # checked against assay's openai, not Ragas'
        max_retries=2,
    )


def build_metric(args: argparse.Namespace) -> Any:
    import ragas.metrics.collections as collections
    from ragas.llms import llm_factory

    cls = getattr(collections, args.metric_class, None)
    if cls is None:
        raise SystemExit(f"ragas.metrics.collections has no metric {args.metric_class!r}")
    options = json.loads(args.options)
    wanted = inspect.signature(cls.__init__).parameters
    if "llm" in wanted:
        # The key travels in the environment, not on the command line (which `ps` shows).
        options["llm"] = llm_factory(
            args.llm_model, client=_client(args.llm_url, os.environ.get(KEY_VARIABLE))
        )
    if "embeddings" in wanted:
        if not args.embeddings_url:
            raise SystemExit(
                f"{args.metric_class} needs embeddings and no embeddings URL was given"
            )
        from ragas.embeddings.base import embedding_factory

        options["embeddings"] = embedding_factory(
            "openai", model=args.embeddings_model, client=_client(args.embeddings_url, "none")
        )
    return cls(**options)


def _parameters(metric: Any) -> list[inspect.Parameter]:
    """The fields `metric.ascore` takes by name."""
    return [
        p
        for p in inspect.signature(metric.ascore).parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"
    ]


def _fields(metric: Any, row: dict[str, Any]) -> dict[str, Any]:
    return {p.name: row[p.name] for p in _parameters(metric) if p.name in row}


def _message(exc: BaseException) -> str:
    """The exception's text and its causes ("Connection error." alone says little)."""
    parts: list[str] = []
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        parts.append(f"{type(link).__name__}: {link}" if parts else str(link))
        link = link.__cause__ or link.__context__
    return " <- ".join(parts)[:500]


def required_fields(metric: Any) -> list[str]:
    return [p.name for p in _parameters(metric) if p.default is inspect.Parameter.empty]


async def score_row(metric: Any, index: int, row: dict[str, Any], timeout: float) -> dict[str, Any]:
    usage = {"requests": 0, "input_tokens": 0, "output_tokens": 0}
    _ROW_USAGE.set(usage)  # this task's own context: tasks copy the context they start in
    started = time.perf_counter()
    line: dict[str, Any] = {"row": index}
    try:
        result = await asyncio.wait_for(metric.ascore(**_fields(metric, row)), timeout)
        value = getattr(result, "value", result)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            # What Ragas hands a user here is a NaN (or None) with no exception: recorded as such.
            line.update(
                status="error",
                error_type="NaN",
                message=f"Ragas returned {value!r} without raising",
            )
        else:
            line.update(status="ok", value=float(value))
    except asyncio.TimeoutError:
        line.update(status="error", error_type="Timeout", message=f"no result within {timeout:g} s")
    except Exception as exc:  # every failure becomes a line; the run goes on
        line.update(status="error", error_type=type(exc).__name__, message=_message(exc))
    line.update(seconds=time.perf_counter() - started, **usage)
    return line


def finished_rows(path: Path) -> set[int]:
    """Rows the output file already has a value for (errors are scored again)."""
    done: set[int] = set()
    if path.exists():
        for text in path.read_text(encoding="utf-8").split("\n"):
            try:
                line = json.loads(text)
            except ValueError:
                continue  # a line cut short by a crash
            if line.get("status") == "ok":
                done.add(int(line["row"]))
    return done


async def _exit_with_parent(parent: int) -> None:
    """Stop when the process that started us is gone (killed rather than interrupted): nobody
    reads the results any more, and a paid judge would go on being called."""
    while True:
        await asyncio.sleep(1.0)
        if os.getppid() != parent:
            os._exit(3)  # finished rows are already on disk, line by line


def cut_partial_line(path: Path) -> None:
    """Drop a last line left half-written by a killed run, so the next line starts clean."""
    if path.exists():
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            path.write_bytes(data[: data.rfind(b"\n") + 1])


async def run(args: argparse.Namespace) -> None:
    metric = build_metric(args)
    rows = [
        json.loads(text) for text in Path(args.rows).read_text(encoding="utf-8").split("\n") if text
    ]
    missing = [name for name in required_fields(metric) if rows and name not in rows[0]]
    if missing:
        # Every row would fail the same way: say so once, before any request.
        raise SystemExit(
            f"{args.metric_class} needs {', '.join(missing)}, which the suite's rows do not have "
            f"(they have {', '.join(sorted(rows[0]))})"
        )
    out = Path(args.out)
    cut_partial_line(out)
    done = finished_rows(out)
    todo = [(index, row) for index, row in enumerate(rows) if index not in done]
    print(json.dumps({"todo": len(todo), "done_before": len(done)}), flush=True)
    gate = asyncio.Semaphore(args.concurrency)
    watchdog = asyncio.create_task(_exit_with_parent(os.getppid()))

    async def one(index: int, row: dict[str, Any]) -> None:
        async with gate:
            line = await score_row(metric, index, row, args.timeout)
        text = json.dumps(line, ensure_ascii=False)
        with out.open("a", encoding="utf-8") as handle:
            handle.write(text + "\n")
        print(text, flush=True)

    await asyncio.gather(*(one(index, row) for index, row in todo))
    watchdog.cancel()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metric-class", required=True)
    parser.add_argument("--options", default="{}", help="JSON keyword arguments for the metric")
    parser.add_argument("--llm-url", required=True)
    parser.add_argument("--llm-model", required=True)
    parser.add_argument("--embeddings-url")
    parser.add_argument("--embeddings-model", default="embeddings")
    parser.add_argument("--rows", required=True, help="JSONL, one row of fields per line")
    parser.add_argument("--out", required=True, help="JSONL of finished rows (appended to)")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args(argv)

    try:
        import openai
        import ragas
    except ImportError as exc:
        raise SystemExit(
            f"{sys.executable} cannot import Ragas ({exc}): install ragas==0.4.3 and "
            "langchain-community==0.4.1 into its virtualenv"
        ) from None

    print(
        json.dumps(
            {
                "ready": True,
                "ragas": ragas.__version__,
                "openai": openai.__version__,
                "python": sys.version.split()[0],
            }
        ),
        flush=True,
    )
    asyncio.run(run(args))
    print(json.dumps({"done": True}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
