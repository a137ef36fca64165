"""What a benchmark suite hands the runner, where its files are, and which aspect a metric tests.

A loader reads a data set in place and returns `SuiteData`: the rows to score with `evaluate()`
and the gold labels, in one of four shapes:

- `pairwise`:  `pairs` of (preferred row, other row); a metric agrees when it scores the first higher;
- `binary`:    one 0/1 `labels` entry per row (1 = good: relevant, faithful, attributable);
- `graded`:    `graded` instances, each two rows (response 1, response 2) and per-annotator labels
               of how much response 2 is preferred (-2..2);
- `agreement`: 0/1 `labels` per row (1 = acceptable) with a `groups` entry naming how the row was
               made (tool calls: the curated call or a controlled corruption of it).
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from assay.errors import UsageError

DATA_DIR_VARIABLE = "ASSAY_METAEVAL_DIR"
Kind = Literal["pairwise", "binary", "graded", "agreement"]


@dataclass
class GradedPair:
    """Two rows (indices into `SuiteData.rows`) and each annotator's preference per label name."""

    first: int
    second: int
    labels: dict[str, list[float]]


@dataclass
class SuiteData:
    suite: str
    aspect: str
    split: str
    kind: Kind
    rows: list[dict[str, Any]]
    ids: list[str]
    n_units: int  # pairs, labelled items, instances or cases taken from the files
    sources: list[str]  # files read, relative to the data directory
    pairs: list[tuple[int, int]] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    graded: list[GradedPair] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# Which human judgement a metric is checked against, by the metric's registry id.
METRIC_ASPECTS = {
    "faithfulness": "faithfulness",
    "answer_relevancy": "answer_relevance",
    "context_precision": "context_relevance",
    "context_utilization": "context_relevance",
    "context_recall": "context_relevance",
    "factual_correctness": "correctness",
    "nv_context_relevance": "context_relevance",
    "nv_response_groundedness": "faithfulness",
    "nv_accuracy": "correctness",
    "tool_call_accuracy": "tool_calls",
    "tool_call_f1": "tool_calls",
}

# suite -> (folder under the data directory, aspects it has labels for, splits it has)
SUITES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "wikieval": ("wikieval", ("faithfulness", "answer_relevance", "context_relevance"), ("test",)),
    "ares": (
        "ares_databricks",
        ("faithfulness", "answer_relevance", "context_relevance"),
        ("test",),
    ),
    "begin": ("begin_wow", ("faithfulness",), ("dev", "test")),
    "halueval-qa": ("halueval", ("faithfulness",), ("dev", "test")),
    "ragchecker": ("ragchecker", ("preference",), ("dev", "test", "all")),
    # constructed from RAGChecker's responses (benchmark/constructed.py), read from the same folder
    "ragchecker-relevance": ("ragchecker", ("answer_relevance",), ("dev", "test")),
    "bfcl": ("bfcl", ("tool_calls",), ("test",)),
}


def resolve_data_dir(path: str | Path | None = None) -> Path:
    """The folder holding the data sets (wikieval/, ares_databricks/, ...): `path`, else the
    ASSAY_METAEVAL_DIR environment variable. The files are read where they are, never copied."""
    chosen = path if path is not None else os.environ.get(DATA_DIR_VARIABLE)
    if not chosen:
        raise UsageError(
            f"no meta-evaluation data directory: pass --data-dir PATH or set {DATA_DIR_VARIABLE} "
            "(the folder holding wikieval/, ares_databricks/, begin_wow/, halueval/, ragchecker/, bfcl/)"
        )
    root = Path(chosen).expanduser()
    if not root.is_dir():
        raise UsageError(f"meta-evaluation data directory {root} does not exist")
    return root


def suite_file(root: Path, suite: str, name: str) -> Path:
    path = root / SUITES[suite][0] / name
    if not path.is_file():
        raise UsageError(
            f"suite {suite}: {path} not found (is {root} the meta-evaluation data directory?)"
        )
    return path


def check_suite(suite: str) -> None:
    if suite not in SUITES:
        raise UsageError(f"unknown suite {suite!r}; choose one of {', '.join(SUITES)}")


def choose_aspect(suite: str, metric_id: str, aspect: str | None) -> str:
    """The judgement a run compares against: given, the suite's only one, or the metric's own."""
    check_suite(suite)
    available = SUITES[suite][1]
    if aspect is not None:
        if aspect not in available:
            raise UsageError(f"suite {suite} has labels for {', '.join(available)}, not {aspect!r}")
        return aspect
    if len(available) == 1:
        return available[0]
    guess = METRIC_ASPECTS.get(metric_id)
    if guess in available:
        return guess
    raise UsageError(
        f"suite {suite} has labels for {', '.join(available)}; say which one metric {metric_id} "
        "should be compared with: --aspect ASPECT"
    )


def check_split(suite: str, split: str) -> None:
    splits = SUITES[suite][2]
    if split not in splits:
        raise UsageError(
            f"suite {suite} has no {split!r} split (it has {', '.join(splits)}); "
            "dev data exists for begin, halueval-qa, ragchecker and ragchecker-relevance only"
        )


def stratified_sample(labels: Sequence[Any], size: int, seed: int = 0) -> list[int]:
    """Indices of a sample of `size` that keeps the class proportions (largest remainder, at
    least one per class when size allows), drawn with `random.Random(seed)`, in file order."""
    if size >= len(labels):
        return list(range(len(labels)))
    by_class: dict[Any, list[int]] = {}
    for index, label in enumerate(labels):
        by_class.setdefault(label, []).append(index)
    classes = sorted(by_class, key=str)
    exact = {c: size * len(by_class[c]) / len(labels) for c in classes}
    counts = {c: int(exact[c]) for c in classes}
    if size >= len(classes):
        for c in classes:
            counts[c] = max(counts[c], 1)
    by_remainder = sorted(classes, key=lambda c: (-(exact[c] - int(exact[c])), str(c)))
    while sum(counts.values()) < size:
        for c in by_remainder:
            if sum(counts.values()) < size and counts[c] < len(by_class[c]):
                counts[c] += 1
    while sum(counts.values()) > size:
        largest = max(classes, key=lambda c: counts[c])
        counts[largest] -= 1
    rng = random.Random(seed)
    chosen: list[int] = []
    for c in classes:
        chosen.extend(rng.sample(by_class[c], counts[c]))
    return sorted(chosen)


__all__ = [
    "DATA_DIR_VARIABLE",
    "METRIC_ASPECTS",
    "SUITES",
    "GradedPair",
    "SuiteData",
    "check_split",
    "check_suite",
    "choose_aspect",
    "resolve_data_dir",
    "stratified_sample",
    "suite_file",
]
