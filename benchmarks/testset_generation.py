"""Test-set generation on a real corpus: the gate's pass rates, duplicates, coverage, calls and
seconds per sample, plus the tiny-corpus cases (issue 19's "Measure it").

The corpus is the Python tutorial's reStructuredText sources from Debian's `python3.11-doc`
package (PSF licence), read in place; install it with `apt-get install python3.11-doc`, or
point `--docs` at any folder of .rst/.md/.txt files. The FAQ pages are not read (they are the
human questions a later human-likeness check holds out).

    .venv/bin/python benchmarks/testset_generation.py [--size 20] [--llm local] [--docs DIR]

Writes benchmarks/results/testset_generation.{json,md}. With the default `--llm local` this runs
the embedded judge (not yet measured here); `--llm vllm/<model>@<url>` uses a served one.
`graph_calls_per_document` counts the knowledge graph's model calls (embedding batches only,
unless LLM extractors are asked for).
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from assay import __version__
from assay.testset import TestsetGenerator, load_documents

ROOT = Path(__file__).resolve().parent
DEFAULT_DOCS = Path("/usr/share/doc/python3.11/html/_sources/tutorial")


def _duplicates(questions: list[str]) -> int:
    """Kept questions with a near-copy among the others (token-sort ratio >= 90)."""
    norm = [" ".join(re.findall(r"\w+", q.lower())) for q in questions]
    dup = set()
    for a, b in itertools.combinations(range(len(norm)), 2):
        if fuzz.token_sort_ratio(norm[a], norm[b]) >= 90:
            dup.add(b)
    return len(dup)


def _measure(testset: Any, seconds: float, documents: int) -> dict[str, Any]:
    report = testset.report
    judged = [r for r in report.rejected if "reference_supported" in r.gate]
    kept_gates = [s.provenance.gate for s in testset]
    supported = [g.get("reference_supported", 0.0) >= 0.8 for g in kept_gates]
    candidates = report.produced + len(report.rejected)
    calls = sum(report.calls.values())
    return {
        "requested": report.requested,
        "produced": report.produced,
        "exact_size": report.produced == report.requested,
        "shortfall_reasons": report.shortfall_reasons,
        "candidates": candidates,
        "gate_pass_rate": round(report.produced / candidates, 4) if candidates else None,
        "rejections": report.rejection_counts(),
        "kept_with_supported_reference": round(sum(supported) / len(supported), 4)
        if supported
        else None,
        "judged_candidates_supported": round(
            (
                len(kept_gates)
                + sum(g.get("reference_supported", 0) >= 0.8 for g in (r.gate for r in judged))
            )
            / (len(kept_gates) + len(judged)),
            4,
        )
        if kept_gates or judged
        else None,
        "answerable": round(
            sum(g.get("answerable", 0) >= 0.5 for g in kept_gates) / len(kept_gates), 4
        )
        if kept_gates
        else None,
        "duplicates": _duplicates([s.eval_sample.user_input or "" for s in testset]),
        "coverage": round(report.coverage, 4),
        "documents": documents,
        "produced_split": report.produced_split,
        "reassigned": [m.model_dump() for m in report.reassigned],
        "calls": report.calls,
        "graph_calls_per_document": round(
            report.calls.get("knowledge_graph", 0) / max(documents, 1), 3
        ),
        "calls_per_sample": round(calls / max(report.produced, 1), 2),
        "seconds": round(seconds, 1),
        "seconds_per_sample": round(seconds / max(report.produced, 1), 1),
        "failures": len(report.failures) + sum(r.kind == "failed" for r in report.rejected),
    }


def _tiny_cases(documents: list[tuple[str, dict]]) -> dict[str, list[Any]]:
    first = documents[0][0]
    no_headings = "\n".join(
        line for line in first.splitlines() if not re.match(r"^\s*[=\-~^*#]{3,}\s*$", line)
    )
    return {
        "one document": [documents[0]],
        "very short documents": [text[:300] for text, _ in documents[:5]],
        "no headings": [no_headings],
        "duplicate documents": [documents[0], documents[0], documents[1]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    parser.add_argument("--size", type=int, default=20)
    parser.add_argument("--llm", default="local", help="model string of the writer and judge")
    parser.add_argument(
        "--embeddings", default=None, help="embedding model string (default: local)"
    )
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--checkpoint", type=Path, default=None, help="resume an interrupted run")
    parser.add_argument(
        "--tiny-size", type=int, default=3, help="size asked of each tiny-corpus case"
    )
    parser.add_argument("--skip-tiny", action="store_true")
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "results" / "testset_generation",
        help="results path without suffix (.json and .md are written)",
    )
    args = parser.parse_args()
    if not args.docs.exists():
        raise SystemExit(
            f"{args.docs} does not exist: install python3.11-doc (apt-get install python3.11-doc) "
            "or pass --docs FOLDER"
        )
    from assay.models.defaults import default_embeddings
    from assay.models.factory import embedding_factory, llm_factory

    llm = llm_factory(args.llm, cache=False)
    embeddings = (
        embedding_factory(args.embeddings, cache=False)
        if args.embeddings
        else default_embeddings(cache=False)
    )
    documents = load_documents(args.docs)
    started = time.monotonic()
    testset = TestsetGenerator(llm=llm, embedding_model=embeddings).generate_with_documents(
        documents, testset_size=args.size, seed=args.seed, checkpoint_dir=args.checkpoint
    )
    main_run = _measure(testset, time.monotonic() - started, len(documents))
    tiny: dict[str, Any] = {}
    if not args.skip_tiny:
        for name, docs in _tiny_cases(documents).items():
            began = time.monotonic()
            try:
                result = TestsetGenerator(
                    llm=llm, embedding_model=embeddings
                ).generate_with_documents(docs, testset_size=args.tiny_size, seed=args.seed)
                tiny[name] = {
                    "crashed": False,
                    **_measure(result, time.monotonic() - began, len(docs)),
                }
            except Exception as exc:  # a crash is what this case measures
                tiny[name] = {"crashed": True, "error": f"{type(exc).__name__}: {exc}"}
    record = {
        "benchmark": "testset_generation",
        "assay": __version__,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} {platform.system()}, python {platform.python_version()}",
        "llm": args.llm,
        "docs": str(args.docs),
        "main": main_run,
        "tiny": tiny,
    }
    out = args.out
    out.with_suffix(".json").write_text(
        json.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8"
    )
    lines = [
        f"# Test-set generation ({args.llm}, {len(documents)} documents, size {args.size})",
        "",
        "| measure | value |",
        "|---|---|",
        *(f"| {k} | {v} |" for k, v in main_run.items() if not isinstance(v, (dict, list))),
        "",
        "## Tiny corpora",
        "",
        "| case | crashed | produced | shortfall reasons |",
        "|---|---|---|---|",
        *(
            f"| {name} | {r['crashed']} | {r.get('produced', '-')} | {'; '.join(r.get('shortfall_reasons', [])) or r.get('error', '')} |"
            for name, r in tiny.items()
        ),
    ]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
