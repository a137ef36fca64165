"""Test-set generation on a real corpus, assay's generator and Ragas 0.4.3's side by side: exact
size, crashes, share of references supported, answerable, duplicates, coverage, LLM calls and
seconds per sample, plus the tiny-corpus cases (issue 19's "Measure it").

The corpus is the Python tutorial's reStructuredText sources from Debian's `python3.11-doc`
package (PSF licence), read in place; install it with `apt-get install python3.11-doc`, or
point `--docs` at any folder of .rst/.md/.txt files. The FAQ pages are not read (they are the
human questions a later human-likeness check holds out).

    .venv/bin/python benchmarks/testset_generation.py [--size 20] [--llm local] [--engine both]

Ragas runs in its own virtualenv (`--ragas-python`, default /tmp/ragas-venv/bin/python; make it
with `python3 -m venv /tmp/ragas-venv && /tmp/ragas-venv/bin/pip install ragas==0.4.3
langchain-community==0.4.1 rapidfuzz`): `ragas_testset_worker.py` generates from the same files
against the same judge over loopback (the embedded llama.cpp server's URL, or a served judge's)
and embeds with assay's embedding model behind a loopback `/v1/embeddings`. Its samples are then
judged here by assay's quality gate (the faithfulness and `answers_question` checks, with the
judge and thresholds assay's kept samples passed), so both columns are measured with one ruler.
Seconds are generation only; judging Ragas' samples is timed apart.

Writes benchmarks/results/testset_generation.{json,md}. `llm_calls` counts chat requests; `calls`
adds embedding requests (assay's knowledge graph makes no LLM call by default).

Nothing paid for is lost when a run stops: every judge answer goes through assay's response cache
(`--no-cache` turns it off), and assay's generation checkpoints to a directory (`--checkpoint`,
default `~/.cache/assay/checkpoints/testset_generation-<key of llm, docs, size, seed>`;
`--no-checkpoint` turns it off), so a rerun resumes: finished candidates are read back without
a call, and answers already made come from the cache. The record says how many judge calls
assay made and how many answers came from the cache (`judge_calls`, `cached_answers`) and how
many samples were read back from the checkpoint; a resumed run's calls and seconds are those of
the rerun only.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import importlib.util
import itertools
import json
import os
import platform
import re
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from assay import __version__
from assay.testset import TestsetGenerator, load_documents
from assay.testset.gate import QualityGate, leans_on_context

ROOT = Path(__file__).resolve().parent
DEFAULT_DOCS = Path("/usr/share/doc/python3.11/html/_sources/tutorial")
DEFAULT_RAGAS_PYTHON = Path("/tmp/ragas-venv/bin/python")
GATE = QualityGate()  # its thresholds say what "supported", "answerable", "duplicate" mean


def _sibling(name: str) -> Any:
    """A module beside this script (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"benchmarks_{name}", ROOT / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


ragas_side = _sibling("testset_ragas_side")


# -- the figures both engines are compared on -----------------------------------------------------
def _duplicates(questions: list[str]) -> int:
    """Questions with a near-copy among the earlier ones (the gate's token-sort ratio)."""
    norm = [" ".join(re.findall(r"\w+", q.lower())) for q in questions]
    dup = set()
    for a, b in itertools.combinations(range(len(norm)), 2):
        if fuzz.token_sort_ratio(norm[a], norm[b]) >= GATE.duplicate_threshold:
            dup.add(b)
    return len(dup)


def _share(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


def _per(total: float, count: int) -> float | None:
    return round(total / count, 2) if count else None


def figures(
    samples: list[dict[str, Any]],
    *,
    requested: int,
    documents: int,
    llm_calls: int,
    calls: int,
    seconds: float,
    error: str | None = None,
) -> dict[str, Any]:
    """A sample is a dict with `user_input`, `synthesizer`, `document_ids` and the judge's
    `reference_supported` and `answerable` scores (None: not judged). Shares say what they cover."""
    produced = len(samples)
    supported = [
        s["reference_supported"] for s in samples if s.get("reference_supported") is not None
    ]
    answerable = [s["answerable"] for s in samples if s.get("answerable") is not None]
    duplicates = _duplicates([s.get("user_input") or "" for s in samples])
    seeded = {d for s in samples for d in s.get("document_ids") or []}
    return {
        "requested": requested,
        "produced": produced,
        "exact_size": error is None and produced == requested,
        "crashed": error is not None,
        "error": error,
        "reference_supported": _share([v >= GATE.support_threshold for v in supported]),
        "supported_judged": len(supported),
        "answerable": _share([v >= GATE.answer_threshold for v in answerable]),
        "answerable_judged": len(answerable),
        "duplicates": duplicates,
        "duplicate_share": round(duplicates / produced, 4) if produced else None,
        "leaning_on_context": sum(
            bool(leans_on_context(s.get("user_input") or "")) for s in samples
        ),
        "coverage": round(len(seeded) / documents, 4) if documents else None,
        "documents": documents,
        "synthesizers": dict(collections.Counter(s.get("synthesizer") or "?" for s in samples)),
        "llm_calls": llm_calls,
        "calls": calls,
        "llm_calls_per_sample": _per(llm_calls, produced),
        "seconds": round(seconds, 1),
        "seconds_per_sample": _per(seconds, produced),
    }


def _brief(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the results file keeps of each sample (contexts left out: they are the corpus)."""
    keys = ("user_input", "reference", "synthesizer", "reference_supported", "answerable")
    return [{k: s.get(k) for k in keys} for s in samples]


# -- assay's side ---------------------------------------------------------------------------------
def assay_samples(testset: Any) -> list[dict[str, Any]]:
    out = []
    for sample in testset:
        gate = sample.provenance.gate if sample.provenance else {}
        out.append(
            {
                "user_input": sample.eval_sample.user_input,
                "reference": sample.eval_sample.reference,
                "synthesizer": sample.synthesizer_name,
                "document_ids": list(sample.provenance.document_ids) if sample.provenance else [],
                "reference_supported": gate.get("reference_supported"),
                "answerable": gate.get("answerable"),
            }
        )
    return out


def assay_details(testset: Any) -> dict[str, Any]:
    report = testset.report
    judged = [r.gate for r in report.rejected if "reference_supported" in r.gate]
    kept = [s.provenance.gate for s in testset if s.provenance]
    candidates = report.produced + len(report.rejected)
    both = [*kept, *judged]
    return {
        "candidates": candidates,
        "gate_pass_rate": round(report.produced / candidates, 4) if candidates else None,
        "rejections": report.rejection_counts(),
        "judged_candidates_supported": _share(
            [g.get("reference_supported", 0) >= GATE.support_threshold for g in both]
        ),
        "shortfall_reasons": report.shortfall_reasons,
        "produced_split": report.produced_split,
        "reassigned": [m.model_dump() for m in report.reassigned],
        "calls_by_stage": report.calls,
        "seconds_by_stage": report.seconds,
        "graph_calls_per_document": _per(report.calls.get("knowledge_graph", 0), report.documents),
        "failures": len(report.failures) + sum(r.kind == "failed" for r in report.rejected),
        "notes": report.notes,
    }


def _judge_usage(llm: Any) -> tuple[int, int]:
    """(calls made, answers from the cache) of `llm` so far."""
    usage = llm.usage.usage
    return usage.requests, usage.cached_requests


def run_assay(
    documents: list[Any], size: int, llm: Any, embeddings: Any, seed: int, checkpoint: Any = None
) -> dict[str, Any]:
    started = time.monotonic()
    calls_before, cached_before = _judge_usage(llm)
    try:
        testset = TestsetGenerator(llm=llm, embedding_model=embeddings).generate_with_documents(
            documents, testset_size=size, seed=seed, checkpoint_dir=checkpoint
        )
    except Exception as exc:  # a crash is what the figures report
        error = f"{type(exc).__name__}: {exc}"
        return {
            "figures": figures(
                [],
                requested=size,
                documents=len(documents),
                llm_calls=0,
                calls=0,
                seconds=time.monotonic() - started,
                error=error,
            ),
            "details": _usage_since(llm, calls_before, cached_before),
        }
    seconds = time.monotonic() - started
    calls = testset.report.calls
    samples = assay_samples(testset)
    details = {
        **_usage_since(llm, calls_before, cached_before),
        "resumed_samples": testset.report.resumed_samples,
        **assay_details(testset),
    }
    return {
        "figures": figures(
            samples,
            requested=size,
            documents=testset.report.documents,
            llm_calls=calls.get("personas", 0) + calls.get("samples", 0),
            calls=sum(calls.values()),
            seconds=seconds,
        ),
        "details": details,
        "samples": _brief(samples),
    }


def _usage_since(llm: Any, calls_before: int, cached_before: int) -> dict[str, int]:
    calls, cached = _judge_usage(llm)
    return {"judge_calls": calls - calls_before, "cached_answers": cached - cached_before}


def default_checkpoint(llm: str, embeddings: str | None, docs: Path, size: int, seed: int) -> Path:
    """Where assay's run checkpoints unless told: outside the repository, one directory per
    judge, corpus, size and seed, so a rerun of the same command resumes."""
    key = json.dumps([llm, embeddings, str(docs.resolve()), size, seed])
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "assay" / "checkpoints" / f"testset_generation-{digest}"


# -- Ragas' side ----------------------------------------------------------------------------------
def run_ragas(paths: list[Path], size: int, seed: int, **options: Any) -> dict[str, Any]:
    """Ragas' figures on `paths`: generated in its virtualenv, judged here by assay's gate."""
    try:
        run = ragas_side.generate_with_ragas(paths, size, seed, **options)
    except ragas_side.WorkerFailed as exc:  # recorded; assay's figures are not lost with it
        print(f"warning: {exc}", file=sys.stderr)
        return {
            "figures": figures([], requested=size, documents=len(paths), llm_calls=0, calls=0,
                               seconds=0.0, error=str(exc)),
            "details": {"worker_failed": True},
        }  # fmt: skip
    summary, jobs, samples = run["summary"], run["jobs"], run["samples"]
    sample_errors = collections.Counter(
        str(line["error"]).split(":", 1)[0] for line in jobs if line.get("error") is not None
    )
    return {
        "figures": figures(
            samples,
            requested=size,
            documents=run["documents"],
            llm_calls=summary["llm_calls"],
            calls=summary["llm_calls"] + summary["embedding_calls"],
            seconds=summary["seconds"],
            error=summary.get("error"),
        ),
        "details": {
            "ragas": run["ready"].get("ragas"),
            "max_token_limit": summary.get("max_token_limit"),
            "openai": run["ready"].get("openai"),
            "sample_jobs": summary.get("jobs"),
            "failed_samples": summary.get("failed_samples"),
            "sample_errors": dict(sample_errors),
            "plain_generate_would_raise": summary.get("plain_generate_would_raise"),
            "llm_failed_calls": summary.get("llm_failed_calls"),
            "embedding_calls": summary.get("embedding_calls"),
            "input_tokens": summary.get("input_tokens"),
            "output_tokens": summary.get("output_tokens"),
            "samples_without_context": sum(not s.get("reference_contexts") for s in samples),
            "contexts_matched_to_no_document": sum(
                bool(s.get("reference_contexts")) and not s["document_ids"] for s in samples
            ),
            "judge_errors": sum("judge_error" in s for s in samples),
            "judging_seconds": round(run["judging_seconds"], 1),
            **ragas_side.assay_gate_verdicts(samples),
        },
        "samples": _brief(samples),
    }


# -- the tiny corpora ---------------------------------------------------------------------------
def tiny_cases(documents: list[tuple[str, dict]]) -> dict[str, list[str]]:
    first = documents[0][0]
    no_headings = "\n".join(
        line for line in first.splitlines() if not re.match(r"^\s*[=\-~^*#]{3,}\s*$", line)
    )
    return {
        "one document": [first],
        "very short documents": [text[:300] for text, _ in documents[:5]],
        "no headings": [no_headings],
        "duplicate documents": [first, first, documents[1 % len(documents)][0]],
    }


def write_case(texts: list[str], folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"document-{i}.rst.txt" for i in range(len(texts))]
    for path, text in zip(paths, texts, strict=True):
        path.write_text(text, encoding="utf-8")
    return paths


# -- the report ---------------------------------------------------------------------------------
ROWS = [
    ("requested", "requested"),
    ("produced", "produced"),
    ("exact size", "exact_size"),
    ("crashed", "crashed"),
    ("references supported (share of judged)", "reference_supported"),
    ("samples judged for support", "supported_judged"),
    ("answerable (share of judged)", "answerable"),
    ("duplicates", "duplicates"),
    ("questions leaning on 'the context'", "leaning_on_context"),
    ("coverage (documents seeding a sample)", "coverage"),
    ("LLM calls", "llm_calls"),
    ("LLM calls per sample", "llm_calls_per_sample"),
    ("calls incl. embeddings", "calls"),
    ("seconds", "seconds"),
    ("seconds per sample", "seconds_per_sample"),
]


def _cell(value: Any) -> str:
    """A table cell: one line, no column breaks."""
    return "-" if value is None else " ".join(str(value).split()).replace("|", "\\|")


def markdown(record: dict[str, Any]) -> str:
    engines = record["engines"]
    names = [n for n in ("assay", "ragas") if "figures" in engines.get(n, {})]
    title = {
        "assay": f"assay {record['assay']}",
        "ragas": "Ragas "
        + str(
            engines.get("ragas", {}).get("details", {}).get("ragas")
            or "(its worker reported no version)"
        ),
    }
    lines = [
        f"# Test-set generation ({record['llm']}, {record['documents']} documents, size {record['size']})",
        "",
        f"{record['date']}, {record['machine']}; corpus {record['docs']}; seed {record['seed']}."
        + "".join(
            f" {name} measured {when}." for name, when in sorted(record.get("measured", {}).items())
        ),
        f"assay made {record.get('judge_calls', 0)} judge calls; "
        f"{record.get('cached_answers', 0)} answers came from the response cache"
        + ("" if record.get("response_cache", True) else " (cache off)")
        + ". A resumed run's calls and seconds are the rerun's only.",
        "Both engines' samples are judged by assay's quality gate with the same judge "
        f"(supported: faithfulness ({GATE.support_scoring}) >= {GATE.support_threshold}; "
        f"answerable: answers_question >= "
        f"{GATE.answer_threshold}): assay's while it generates (it keeps only samples that pass), "
        "Ragas' afterwards. Seconds are generation only (assay's include its gate).",
        "",
        "| measure | " + " | ".join(title[n] for n in names) + " |",
        "|---|" + "---|" * len(names),
        *(
            f"| {label} | "
            + " | ".join(_cell(engines[n]["figures"].get(key)) for n in names)
            + " |"
            for label, key in ROWS
        ),
    ]
    for name in names:
        details = engines[name].get("details", {})
        lines += ["", f"## {title[name]}: details", "", "| measure | value |", "|---|---|"]
        lines += [
            f"| {k} | {_cell(v)} |" for k, v in details.items() if k not in ("ragas", "notes")
        ]
        if engines[name]["figures"].get("error"):
            lines.append(f"| error | {_cell(engines[name]['figures']['error'][:300])} |")
    for name, engine in engines.items():
        if "note" in engine:
            lines += ["", f"{name}: {engine['note']}"]
    if record["tiny"]:
        lines += ["", f"## Tiny corpora (size {record['tiny_size']})", "",
                  "| case | engine | crashed | produced | exact size | supported | reasons or error |",
                  "|---|---|---|---|---|---|---|"]  # fmt: skip
        for case, by_engine in record["tiny"].items():
            for name, run in by_engine.items():
                f, d = run["figures"], run.get("details", {})
                why = _cell(f.get("error") or "; ".join(d.get("shortfall_reasons") or []) or "")
                lines.append(
                    f"| {case} | {name} | {f['crashed']} | {f['produced']} | {f['exact_size']} | "
                    f"{_cell(f['reference_supported'])} | {why[:200]} |"
                )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    parser.add_argument("--size", type=int, default=20)
    parser.add_argument("--llm", default="local", help="model string of the writer and judge")
    parser.add_argument("--embeddings", default=None, help="embedding model (default: local)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--engine", choices=("assay", "ragas", "both"), default=None,
                        help="default: both when the Ragas interpreter exists, else assay")  # fmt: skip
    parser.add_argument("--ragas-python", type=Path,
                        default=Path(os.environ.get("ASSAY_RAGAS_PYTHON") or DEFAULT_RAGAS_PYTHON))  # fmt: skip
    parser.add_argument(
        "--ragas-worker", type=Path, default=ragas_side.RAGAS_WORKER, help=argparse.SUPPRESS
    )
    parser.add_argument("--ragas-timeout", type=float, default=6 * 3600.0,
                        help="seconds a Ragas run may take before it is stopped")  # fmt: skip
    parser.add_argument("--ragas-tiny-timeout", type=float, default=900.0,
                        help="seconds a Ragas run on one tiny corpus may take")  # fmt: skip
    parser.add_argument(
        "--ragas-max-token-limit",
        type=int,
        default=None,
        help="cap the text Ragas' LLM extractors send per request (default: Ragas' 32,000 "
        "tokens; a 4,096-token local judge needs about 2,000)",
    )
    parser.add_argument("--concurrency", type=int, default=8, help="Ragas' max_workers, at most")
    parser.add_argument("--checkpoint", type=Path, default=None,
                        help="directory assay's run checkpoints to and resumes from (default: "
                        "one under ~/.cache/assay/checkpoints keyed by llm, docs, size, seed)")  # fmt: skip
    parser.add_argument("--no-checkpoint", action="store_true", help="start afresh, keep nothing")
    parser.add_argument("--no-cache", action="store_true",
                        help="do not use the response cache (every answer is asked again)")  # fmt: skip
    parser.add_argument("--tiny-size", type=int, default=3, help="size asked of each tiny case")
    parser.add_argument("--skip-tiny", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "testset_generation",
                        help="results path without suffix (.json and .md are written)")  # fmt: skip
    args = parser.parse_args(argv)
    if not args.docs.exists():
        raise SystemExit(
            f"{args.docs} does not exist: install python3.11-doc (apt-get install python3.11-doc) "
            "or pass --docs FOLDER"
        )
    notes: dict[str, str] = {}
    engine = args.engine
    if engine is None:
        engine = "both" if args.ragas_python.is_file() else "assay"
        if engine == "assay":
            notes["ragas"] = (
                f"not run: no Ragas interpreter at {args.ragas_python} (make one with `python3 -m "
                "venv /tmp/ragas-venv && /tmp/ragas-venv/bin/pip install ragas==0.4.3 "
                "langchain-community==0.4.1 rapidfuzz`, or pass --ragas-python)"
            )
            print(f"note: Ragas {notes['ragas']}", file=sys.stderr)
    elif engine != "assay" and not args.ragas_python.is_file():
        raise SystemExit(f"--engine {engine}: no Python interpreter at {args.ragas_python}")

    from assay.benchmark.runner import fit_to_judge, start_local_judge
    from assay.models.defaults import default_embeddings
    from assay.models.factory import embedding_factory, llm_factory

    cache = not args.no_cache
    llm = llm_factory(args.llm, cache=cache)
    embeddings = (
        embedding_factory(args.embeddings, cache=cache)
        if args.embeddings
        else default_embeddings(cache=cache)
    )
    checkpoint = None
    if not args.no_checkpoint:
        checkpoint = args.checkpoint or default_checkpoint(
            args.llm, args.embeddings, args.docs, args.size, args.seed
        )
        print(f"assay's run checkpoints to {checkpoint} (a rerun resumes)", file=sys.stderr)
    start_local_judge(llm)  # loading weights is nobody's generation time
    documents = load_documents(args.docs)
    base = args.docs if args.docs.is_dir() else args.docs.parent
    paths = [base / meta["source"] for _, meta in documents]
    ragas_options = {
        "python": args.ragas_python,
        "llm": llm,
        "embeddings": embeddings,
        "concurrency": fit_to_judge(llm, args.concurrency),
        "timeout": args.ragas_timeout,
        "worker": args.ragas_worker,
        "max_token_limit": args.ragas_max_token_limit,
    }
    engines: dict[str, Any] = {name: {"note": note} for name, note in notes.items()}
    tiny: dict[str, dict[str, Any]] = {}
    record = {
        "benchmark": "testset_generation",
        "assay": __version__,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} {platform.system()}, python {platform.python_version()}",
        "llm": args.llm,
        "embeddings": str(getattr(embeddings, "model", args.embeddings)),
        "docs": str(args.docs),
        "documents": len(documents),
        "size": args.size,
        "seed": args.seed,
        "response_cache": cache,
        "checkpoint": None if checkpoint is None else str(checkpoint),
        "judge_calls": 0,
        "cached_answers": 0,
        "tiny_size": args.tiny_size,
        "gate": GATE.judge_settings(),
        "engines": engines,
        "tiny": tiny,
    }
    for name in ("assay", "ragas") if engine == "both" else (engine,):
        record.setdefault("measured", {})[name] = record["date"]
    if engine != "both":
        keep_other_engine(record, args.out, "ragas" if engine == "assay" else "assay")
    # Written after every run, so a long run stopped halfway keeps what it measured.
    if engine in ("assay", "both"):
        engines["assay"] = run_assay(documents, args.size, llm, embeddings, args.seed, checkpoint)
        details = engines["assay"]["details"]
        print(
            f"assay: {details['judge_calls']} judge calls, {details['cached_answers']} answered "
            f"from the cache, {details.get('resumed_samples', 0)} samples read back from the "
            f"checkpoint, {engines['assay']['figures']['seconds']} s",
            file=sys.stderr,
        )
        write_results(record, args.out, llm)
    if engine in ("ragas", "both"):
        engines["ragas"] = run_ragas(paths, args.size, args.seed, **ragas_options)
        write_results(record, args.out, llm)
    if not args.skip_tiny:
        with tempfile.TemporaryDirectory(prefix="assay-tiny-") as folder:
            for number, (case, texts) in enumerate(tiny_cases(documents).items()):
                tiny.setdefault(case, {})
                if engine in ("assay", "both"):
                    tiny[case]["assay"] = run_assay(
                        texts, args.tiny_size, llm, embeddings, args.seed
                    )
                if engine in ("ragas", "both"):
                    case_paths = write_case(texts, Path(folder) / str(number))
                    tiny[case]["ragas"] = run_ragas(
                        case_paths,
                        args.tiny_size,
                        args.seed,
                        **{**ragas_options, "timeout": args.ragas_tiny_timeout},
                    )
                write_results(record, args.out, llm)
    print(write_results(record, args.out, llm))


def keep_other_engine(record: dict[str, Any], out: Path, other: str) -> None:
    """A run of one engine keeps the other engine's figures from the results already written
    (its main run and its tiny cases, each stamped with the date it was measured), so the two
    sides can be measured in separate sittings of the one judge."""
    path = out.with_suffix(".json")
    if not path.is_file():
        return
    previous = json.loads(path.read_text(encoding="utf-8"))
    # figures are comparable only from the same corpus, sizes, seed, models, version and gate
    same = ("size", "llm", "embeddings", "docs", "documents", "seed", "tiny_size", "assay", "gate")
    if not _gate_decided_any(previous, record, other):
        same = same[:-1]
    differ = [key for key in same if previous.get(key) != record.get(key)]
    if differ:
        print(f"note: {path} is not kept for {other} ({', '.join(differ)} differ)", file=sys.stderr)
        return
    if other in previous.get("engines", {}):
        record["engines"][other] = previous["engines"][other]
        when = previous.get("measured", {}).get(other, previous["date"])
        record.setdefault("measured", {})[other] = when
    for case, by_engine in previous.get("tiny", {}).items():
        if other in by_engine:
            record["tiny"].setdefault(case, {})[other] = by_engine[other]


# Gate settings that apply to multi-hop samples only.
_MULTI_HOP_SETTINGS = frozenset({"each_hop_needed"})


def _gate_decided_any(previous: dict[str, Any], record: dict[str, Any], engine: str) -> bool:
    """Could the gate settings that differ between `previous` and `record` have changed a figure
    of `engine` in `previous`? Not when it produced no sample (the gate judged nothing), nor when
    they differ only in multi-hop settings and it produced no multi-hop sample."""
    runs = [previous.get("engines", {}).get(engine)]
    runs += [by_engine.get(engine) for by_engine in previous.get("tiny", {}).values()]
    figures = [(run or {}).get("figures") or {} for run in runs]
    if not any(f.get("produced") for f in figures):
        return False
    before, now = previous.get("gate") or {}, record.get("gate") or {}
    differ = {key for key in before.keys() | now.keys() if before.get(key) != now.get(key)}
    multi_hop = any("multi_hop" in name for f in figures for name in f.get("synthesizers") or {})
    return bool(differ - _MULTI_HOP_SETTINGS) or multi_hop


def write_results(record: dict[str, Any], out: Path, llm: Any = None) -> str:
    if llm is not None:  # every call assay made through its judge so far (Ragas' own not included)
        record["judge_calls"], record["cached_answers"] = _judge_usage(llm)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(
        json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    text = markdown(record)
    out.with_suffix(".md").write_text(text, encoding="utf-8")
    return text


if __name__ == "__main__":
    main()
