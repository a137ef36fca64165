"""Ragas 0.4.3's test-set generator on given documents: the Ragas side of
`benchmarks/testset_generation.py`, run with the Ragas virtualenv's interpreter.

It imports nothing from assay (assay is not installed there). It reads the files listed in
`--docs-list` (one path a line) with LangChain's `TextLoader`, builds `ragas.testset.TestsetGenerator`
with Ragas' own `llm_factory` / `embedding_factory` on OpenAI clients pointed at the loopback URLs
it is given (the parent's judge and an embeddings endpoint in front of assay's embedding model),
and runs `generate_with_langchain_docs` with Ragas' default transforms and query distribution.

Ragas is asked for the sample executor (`return_executor=True`, `raise_exceptions=False`) rather
than the finished `Testset`: with either setting of `raise_exceptions`, one failed sample makes
Ragas' own `generate` raise at the end (the failure itself, or a pydantic error on the NaN that
stands in for it), losing every sample. Running the executor here keeps the samples that were made
and records each failure; `plain_generate_would_raise` says whether the plain call would have.

Output (`--out`, JSON lines): one line per sample job, `{"user_input", "reference",
"reference_contexts", "synthesizer_name", "error": null}`, or `{"synthesizer_name", "error": "..."}`
for a job that failed; then one `{"summary": true, ...}` line with the run's error (a crash before
any sample: too-short documents, no clusters...), LLM and embedding call counts, tokens and seconds.
Stdout: `{"ready": true, "ragas": version, ...}` once imported, then the summary line.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
warnings.filterwarnings("ignore")

KEY_VARIABLE = "ASSAY_RAGAS_JUDGE_KEY"  # the judge's API key, if any, travels in the environment
INSTALL = "ragas==0.4.3 langchain-community==0.4.1 rapidfuzz"
ENCODING = "cl100k_base"  # the tiktoken encoding Ragas counts document tokens with


class CallCounter:
    """Requests and tokens that went through one OpenAI client (an httpx response hook)."""

    def __init__(self) -> None:
        self.requests = 0
        self.failed = 0
        self.input_tokens = 0
        self.output_tokens = 0

    async def __call__(self, response: Any) -> None:
        self.requests += 1
        await response.aread()
        if response.status_code >= 400:
            self.failed += 1
            return
        try:
            body = response.json()
        except ValueError:
            return
        usage = body.get("usage") if isinstance(body, dict) else None
        if isinstance(usage, dict):
            self.input_tokens += int(usage.get("prompt_tokens") or 0)
            self.output_tokens += int(usage.get("completion_tokens") or 0)


def openai_client(base_url: str, api_key: str | None, counter: CallCounter, timeout: float) -> Any:
    import httpx
    from openai import AsyncOpenAI

    # Ragas runs each stage in its own event loop (asyncio.run per stage): a kept-alive
    # connection from one loop cannot serve the next, so none is kept.
    http = httpx.AsyncClient(
        timeout=httpx.Timeout(timeout),
        limits=httpx.Limits(max_keepalive_connections=0),
        event_hooks={"response": [counter]},
    )
    return AsyncOpenAI(
        base_url=base_url, api_key=api_key or "none", http_client=http, max_retries=2
    )


class JobErrors(logging.Handler):
    """Ragas' executor logs a failed job ("Exception raised in Job[i]: Type(message)") and hands
    back a NaN; this keeps the message by job index."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.by_job: dict[int, str] = {}

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        if len(args) == 3 and isinstance(args[0], int):
            self.by_job[args[0]] = f"{args[1]}: {args[2]}"[:500]


def _message(exc: BaseException) -> str:
    parts, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        parts.append(f"{type(exc).__name__}: {exc}")
        exc = exc.__cause__ or exc.__context__
    return " <- ".join(parts)[:800]


def synthesizer_of(job: Any) -> str:
    """The synthesizer whose `generate_sample` a queued executor job wraps."""
    wrapped = job[0]
    for cell in getattr(wrapped, "__closure__", None) or ():
        try:
            owner = getattr(cell.cell_contents, "__self__", None)
        except ValueError:  # an empty cell
            continue
        if owner is not None and hasattr(owner, "name"):
            return str(owner.name)
    return "unknown"


def exit_with_parent() -> None:
    """Stop when the process that started us is gone: nobody reads the samples any more, and a
    paid judge would go on being called."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(3)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def transforms_within(limit: int | None, documents: list[Any], llm: Any, embeddings: Any) -> Any:
    """Ragas' default transforms, their LLM extractors sending at most `limit` tokens of text
    per request (Ragas' default is 32,000, more than a small local judge's context holds).
    None: Ragas builds its defaults itself, untouched."""
    if limit is None:
        return None
    from ragas.testset.transforms import Parallel, default_transforms

    transforms = default_transforms(documents=documents, llm=llm, embedding_model=embeddings)
    pending = list(transforms)
    while pending:
        step = pending.pop()
        if isinstance(step, Parallel):
            pending.extend(step.transformations)
        elif hasattr(step, "max_token_limit"):
            step.max_token_limit = limit
    return transforms


def load_documents(listing: Path) -> list[Any]:
    from langchain_community.document_loaders import TextLoader

    paths = [line for line in listing.read_text(encoding="utf-8").splitlines() if line.strip()]
    documents = []
    for path in paths:
        documents.extend(TextLoader(path, encoding="utf-8").load())
    return documents


def check_encoding() -> None:
    import tiktoken

    try:
        tiktoken.get_encoding(ENCODING)
    except Exception as exc:
        raise SystemExit(
            f"tiktoken cannot load {ENCODING} ({type(exc).__name__}); Ragas needs it to count "
            "document tokens and there is no network: set TIKTOKEN_CACHE_DIR to a folder holding "
            "it (llama-index-core ships one: llama_index/core/_static/tiktoken_cache)"
        ) from None


def generate(args: argparse.Namespace, documents: list[Any]) -> dict[str, Any]:
    """Run Ragas' generator; returns the summary and writes the sample lines to `args.out`."""
    import numpy as np
    from ragas.embeddings.base import embedding_factory
    from ragas.llms import llm_factory
    from ragas.run_config import RunConfig
    from ragas.testset import TestsetGenerator

    llm_calls, embedding_calls = CallCounter(), CallCounter()
    llm = llm_factory(
        args.llm_model,
        client=openai_client(args.llm_url, os.environ.get(KEY_VARIABLE), llm_calls, args.timeout),
    )
    embeddings = embedding_factory(
        "openai",
        model=args.embeddings_model,
        client=openai_client(args.embeddings_url, "none", embedding_calls, args.timeout),
    )
    random.seed(args.seed)  # Ragas shuffles with `random` and picks personas with numpy
    np.random.seed(args.seed)
    run_config = RunConfig(max_workers=args.concurrency, seed=args.seed, timeout=int(args.timeout))
    errors = JobErrors()
    logging.getLogger("ragas.executor").addHandler(errors)

    lines: list[dict[str, Any]] = []
    crash: str | None = None
    started = time.perf_counter()
    try:
        executor = TestsetGenerator(
            llm=llm, embedding_model=embeddings
        ).generate_with_langchain_docs(
            documents,
            testset_size=args.size,
            transforms=transforms_within(args.max_token_limit, documents, llm, embeddings),
            run_config=run_config,
            raise_exceptions=False,
            return_executor=True,
        )
        names = [synthesizer_of(job) for job in executor.jobs]
        results = executor.results()
    except Exception as exc:  # what this run measures: where Ragas stops on this corpus
        crash, names, results = _message(exc), [], []
    seconds = time.perf_counter() - started

    for index, result in enumerate(results):
        name = names[index] if index < len(names) else "unknown"
        if callable(getattr(result, "model_dump", None)):
            row = result.model_dump()
            lines.append(
                {
                    "user_input": row.get("user_input"),
                    "reference": row.get("reference"),
                    "reference_contexts": list(row.get("reference_contexts") or []),
                    "synthesizer_name": name,
                    "error": None,
                }
            )
        else:
            message = errors.by_job.get(index, f"the job returned {result!r}")
            lines.append({"synthesizer_name": name, "error": message})
    failed = sum(line["error"] is not None for line in lines)
    summary = {
        "summary": True,
        "error": crash,
        "jobs": len(lines),
        "failed_samples": failed,
        "plain_generate_would_raise": crash is not None or failed > 0,
        "documents": len(documents),
        "max_token_limit": args.max_token_limit,
        "llm_calls": llm_calls.requests,
        "llm_failed_calls": llm_calls.failed,
        "embedding_calls": embedding_calls.requests,
        "input_tokens": llm_calls.input_tokens,
        "output_tokens": llm_calls.output_tokens,
        "seconds": round(seconds, 3),
    }
    with Path(args.out).open("w", encoding="utf-8") as handle:
        for line in [*lines, summary]:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs-list", type=Path, required=True, help="file of paths, one a line")
    parser.add_argument("--llm-url", required=True)
    parser.add_argument("--llm-model", required=True)
    parser.add_argument("--embeddings-url", required=True)
    parser.add_argument("--embeddings-model", default="embeddings")
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", type=Path, required=True, help="JSON lines written here")
    parser.add_argument("--concurrency", type=int, default=2, help="Ragas' max_workers")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per HTTP request")
    parser.add_argument(
        "--max-token-limit", type=int, default=None, help="tokens of text per extractor request"
    )
    args = parser.parse_args(argv)

    try:
        import langchain_community  # noqa: F401 - the document loader
        import openai
        import ragas
        import rapidfuzz  # noqa: F401 - Ragas' test-set transforms need it, its install does not
    except ImportError as exc:
        raise SystemExit(
            f"{sys.executable} cannot import what Ragas' generator needs ({exc}): install "
            f"{INSTALL} into its virtualenv"
        ) from None
    check_encoding()
    exit_with_parent()
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
    summary = generate(args, load_documents(args.docs_list))
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
