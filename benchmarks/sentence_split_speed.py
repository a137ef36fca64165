"""Seconds to split 10 KB, 100 KB and 1 MB of prose into sentences (issue #14 item 4).

`split_sentences` now gives pysbd bounded segments; the "whole text to pysbd" column is how it
used to work (not run at 1 MB, where it does not finish). Two shapes of text: paragraphs of a few
hundred characters separated by blank lines, and the same sentences on one line with no newline.
Writes benchmarks/results/sentence_split_speed.md. Usage:

    .venv/bin/python benchmarks/sentence_split_speed.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time
from datetime import datetime, timezone
from pathlib import Path

from assay import __version__
from assay.metrics.text import MAX_SEGMENT_CHARS, _segmenter, split_sentences

ROOT = Path(__file__).resolve().parent
SIZES = {"10 KB": 10_000, "100 KB": 100_000, "1 MB": 1_000_000}
OLD_UP_TO = 100_000

SUBJECTS = [
    "The committee",
    "Dr. Smith",
    "Our team",
    "The U.S. agency",
    "Mrs. Park",
    "The model",
    "Each sample",
]
VERBS = ["reported", "measured", "estimated", "questioned", "confirmed", "rejected", "published"]
OBJECTS = [
    "a rise of 2.5 percent",
    "the results in Fig. 3",
    "costs of $4.20 per unit",
    "the draft (v2.1)",
    "roughly 3,000 responses",
    "the claim, e.g. in Table 2",
    "what the reviewers had found",
]
TAILS = [".", ".", ".", "!", "?", " on Jan. 5th.", " at 10 a.m. sharp.", ", and nobody objected."]


def prose(chars: int, *, newlines: bool, seed: int = 14) -> str:
    rng = random.Random(seed)
    paragraphs, size = [], 0
    while size < chars:
        target, sentences, length = (rng.randint(80, 900) if newlines else chars), [], 0
        while length < target:
            sentences.append(
                f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}{rng.choice(TAILS)}"
            )
            length += len(sentences[-1]) + 1
        paragraphs.append(" ".join(sentences))
        size += length + 2
    return "\n\n".join(paragraphs)[:chars]


def whole_text_to_pysbd(text: str) -> list[str]:
    return [s.strip() for s in _segmenter("en").segment(text.strip()) if s.strip()]


def best_of(repeat: int, function, text: str) -> tuple[float, int]:
    times, count = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        count = len(function(text))
        times.append(time.perf_counter() - started)
    return min(times), count


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per figure below 1 MB; the fastest is reported"
    )
    args = parser.parse_args()
    split_sentences("Warm up. The segmenter compiles its patterns once.")
    rows = []
    for shape, newlines in (("paragraphs", True), ("one line", False)):
        for label, chars in SIZES.items():
            text = prose(chars, newlines=newlines)
            repeat = args.repeat if chars < 1_000_000 else 1
            seconds, count = best_of(repeat, split_sentences, text)
            old = (
                f"{best_of(1, whole_text_to_pysbd, text)[0]:.2f}"
                if chars <= OLD_UP_TO
                else "not run"
            )
            rows.append(
                f"| {shape} | {label} | {count:,} | {seconds:.2f} | {seconds / chars * 1e6:.1f} | {old} |"
            )
            print(rows[-1], flush=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# Sentence splitting speed",
        "",
        f"assay {__version__}, {datetime.now(timezone.utc).isoformat(timespec='seconds')}, Python "
        f"{platform.python_version()}, {os.cpu_count()} cores; load average at the end {load:.1f} (other work "
        f"on the machine inflates these numbers). pysbd sees at most {MAX_SEGMENT_CHARS:,} characters at once.",
        "",
        "| text | size | sentences | seconds | µs / char | whole text to pysbd (before), seconds |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        "Made by `benchmarks/sentence_split_speed.py`.",
        "",
    ]
    out = ROOT / "results" / "sentence_split_speed.md"
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
