"""The Ragas half of `testset_generation.py`: run `ragas_testset_worker.py` with the Ragas
virtualenv's interpreter against this process's judge and embeddings (over loopback), read back
its samples, and judge them with assay's quality gate.

Loaded by `testset_generation.py` from beside it (benchmarks/ is not a package).
"""

from __future__ import annotations

import asyncio
import collections
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from assay._util.sync import run_sync
from assay.testset.gate import QualityGate, leans_on_context
from assay.testset.terms import detect_language
from assay.testset.text import count_tokens, normalize_space

RAGAS_WORKER = Path(__file__).resolve().with_name("ragas_testset_worker.py")
KEY_VARIABLE = "ASSAY_RAGAS_JUDGE_KEY"  # as ragas_testset_worker.py reads it
_HOP = re.compile(r"^\s*<\d+-hop>\s*")
_GATE = QualityGate()  # the thresholds of assay's gate


class WorkerFailed(RuntimeError):
    """The worker did not finish (no interpreter, a missing package, killed at the timeout...):
    not a measurement of Ragas' generator."""


def tiktoken_cache() -> str | None:
    """A folder with tiktoken's cl100k_base for the offline worker: $TIKTOKEN_CACHE_DIR, else the
    copy llama-index-core ships, when it is installed here."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return os.environ["TIKTOKEN_CACHE_DIR"]
    try:
        spec = importlib.util.find_spec("llama_index.core")
    except ImportError:
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        folder = Path(location) / "_static" / "tiktoken_cache"
        if folder.is_dir():
            return str(folder)
    return None


def run_worker(command: list[str], env: dict[str, str], timeout: float) -> tuple[dict, dict]:
    """Run the worker, passing its stderr (Ragas' progress bars) through. Returns its `ready` and
    `summary` lines; a worker that fails to start or exits badly raises WorkerFailed with its tail."""
    try:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
    except OSError as exc:
        raise WorkerFailed(f"the Ragas test-set worker could not start: {exc}") from exc
    tail: collections.deque[str] = collections.deque(maxlen=15)

    def pump() -> None:
        for text in process.stderr or []:
            tail.append(text)
            sys.stderr.write(text)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    fired = threading.Event()

    def stop() -> None:
        fired.set()
        process.kill()

    timer = threading.Timer(timeout, stop)
    timer.start()
    code: int | None = None
    ready: dict[str, Any] = {}
    summary: dict[str, Any] | None = None
    try:
        for text in process.stdout or []:
            try:
                line = json.loads(text)
            except ValueError:
                continue  # a library printing to stdout
            if isinstance(line, dict) and line.get("ready"):
                ready = line
            elif isinstance(line, dict) and line.get("summary"):
                summary = line
        code = process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        pass  # stdout closed but the process lingers: killed below, reported as failed
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()
        reader.join(timeout=5)
    if code != 0 or summary is None:
        stopped = f" (stopped after {timeout:g} s)" if fired.is_set() else ""
        raise WorkerFailed(
            f"the Ragas test-set worker ({command[0]}) failed with exit code {code}{stopped}:\n"
            + "".join(tail).strip()
        )
    return ready, summary


def distinct_texts(texts: list[str]) -> list[str]:
    return list(dict.fromkeys(normalize_space(t).lower() for t in texts if t.strip()))


def documents_of(contexts: list[str], distinct: list[str]) -> list[int]:
    """Which documents (indexes into `distinct`, normalized texts) the contexts come from: the
    first holding the context, or else its first 120 characters."""
    found = []
    for context in contexts:
        # Ragas' multi-hop samples mark each context "<1-hop>", "<2-hop>"...
        wanted = normalize_space(_HOP.sub("", context)).lower()
        for probe in (wanted, wanted[:120]):
            hits = [i for i, text in enumerate(distinct) if probe and probe in text]
            if hits:
                found.append(hits[0])
                break
    return sorted(set(found))


async def judge_samples(
    samples: list[dict[str, Any]], llm: Any, language: str, concurrency: int
) -> None:
    """Score each sample with the gate's judged checks (thresholds at 0 so both always run)."""
    from assay.schema.samples import SingleTurnSample

    gate = QualityGate(llm=llm, support_threshold=0.0, answer_threshold=0.0)
    limit = asyncio.Semaphore(concurrency)

    async def one(sample: dict[str, Any]) -> None:
        async with limit:
            try:
                candidate = SingleTurnSample(
                    user_input=sample.get("user_input") or "",
                    reference=sample.get("reference") or "",
                    reference_contexts=list(sample.get("reference_contexts") or []),
                )
                result = await gate.judged_checks(candidate, language)
            except Exception as exc:  # a failed judge call: recorded, the sample not judged
                sample["judge_error"] = f"{type(exc).__name__}: {exc}"[:300]
                return
        # No score means the faithfulness judge found nothing to check it against (no
        # contexts, say): the gate refuses that as unsupported.
        sample["reference_supported"] = result.scores.get("reference_supported", 0.0)
        sample["answerable"] = result.scores.get("answerable")
        if result.reason:
            sample["judge_note"] = result.reason[:300]

    await asyncio.gather(*(one(s) for s in samples))


def assay_gate_verdicts(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Which of assay's gate checks Ragas' samples would fail (the evidence check left out:
    Ragas writes no quote), in the gate's order."""
    kept: list[str] = []
    refusals: collections.Counter[str] = collections.Counter()
    for s in samples:
        question = s.get("user_input") or ""
        contexts = {_HOP.sub("", c) for c in s.get("reference_contexts") or []}
        if (
            count_tokens(question) < _GATE.min_question_tokens
            or not (s.get("reference") or "").strip()
        ):
            refusals["empty"] += 1
        elif leans_on_context(question):
            refusals["standalone"] += 1
        elif (s.get("synthesizer") or "").startswith("multi_hop") and len(contexts) < 2:
            refusals["multi_hop"] += 1
        elif _GATE.nearest(question, kept) >= _GATE.duplicate_threshold:
            refusals["duplicate"] += 1
        elif (
            s.get("reference_supported") is None
            or s["reference_supported"] < _GATE.support_threshold
        ):
            refusals["unsupported"] += 1
        elif s.get("answerable") is None or s["answerable"] < _GATE.answer_threshold:
            refusals["unanswered"] += 1
        else:
            kept.append(question)
    return {
        "would_pass_assay_gate": round(len(kept) / len(samples), 4) if samples else None,
        "assay_gate_refusals": dict(refusals),
    }


def generate_with_ragas(
    paths: list[Path],
    size: int,
    seed: int,
    *,
    python: Path,
    llm: Any,
    embeddings: Any,
    concurrency: int,
    timeout: float,
    worker: Path = RAGAS_WORKER,
    max_token_limit: int | None = None,
) -> dict[str, Any]:
    """Generate with Ragas from `paths` (in its virtualenv), then judge its samples here. Returns
    the worker's `ready` and `summary` lines, its sample jobs (a sample or an error each), the
    judged samples with the documents they came from, and the count of distinct documents."""
    from assay.benchmark.ragas_side import embeddings_endpoint, judge_endpoint

    texts = [p.read_text(encoding="utf-8") for p in paths]
    distinct = distinct_texts(texts)
    url, model, api_key = judge_endpoint(llm)
    env = {**os.environ, "RAGAS_DO_NOT_TRACK": "true"}
    env.pop(KEY_VARIABLE, None)
    if api_key:
        env[KEY_VARIABLE] = api_key  # never on the command line, which `ps` shows
    cache = tiktoken_cache()
    if cache:
        env["TIKTOKEN_CACHE_DIR"] = cache
    with tempfile.TemporaryDirectory(prefix="assay-ragas-testset-") as work:
        listing, out = Path(work) / "documents.txt", Path(work) / "samples.jsonl"
        listing.write_text("".join(f"{p.resolve()}\n" for p in paths), encoding="utf-8")
        with embeddings_endpoint(embeddings) as embeddings_url:
            command = [
                str(python), "-I", str(worker),
                "--docs-list", str(listing), "--out", str(out),
                "--llm-url", url, "--llm-model", model,
                "--embeddings-url", embeddings_url, "--embeddings-model", str(embeddings.model),
                "--size", str(size), "--seed", str(seed), "--concurrency", str(concurrency),
            ]  # fmt: skip
            if max_token_limit is not None:
                command += ["--max-token-limit", str(max_token_limit)]
            ready, summary = run_worker(command, env, timeout)
        lines = [json.loads(t) for t in out.read_text(encoding="utf-8").splitlines() if t.strip()]
    jobs = [line for line in lines if not line.get("summary")]
    samples = [
        {**line, "synthesizer": line.get("synthesizer_name")}
        for line in jobs
        if line.get("error") is None
    ]
    judging = time.monotonic()
    run_sync(judge_samples(samples, llm, detect_language(" ".join(texts[:3])), concurrency))
    for sample in samples:
        sample["document_ids"] = documents_of(sample.get("reference_contexts") or [], distinct)
    return {
        "ready": ready,
        "summary": summary,
        "jobs": jobs,
        "samples": samples,
        "documents": len(distinct),
        "judging_seconds": time.monotonic() - judging,
    }


__all__ = [
    "WorkerFailed",
    "assay_gate_verdicts",
    "documents_of",
    "generate_with_ragas",
    "judge_samples",
    "run_worker",
    "tiktoken_cache",
]
