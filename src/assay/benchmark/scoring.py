"""From per-row scores (None where a cell was skipped or failed) to a suite's figures.

Only units whose every row was scored enter a statistic: a pair needs both members, a graded
instance both responses. How many units that leaves is `coverage`, reported beside every figure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from assay.benchmark.suites import SuiteData
from assay.stats.bootstrap import bootstrap
from assay.stats.classification import balanced_accuracy, best_threshold, f1_score, roc_auc
from assay.stats.correlation import pearson, spearman, with_fisher
from assay.stats.estimate import Estimate
from assay.stats.proportion import pairwise_accuracy, proportion

PASS = 1.0 - 1e-9  # a tool-call metric "accepts" a row when it scores 1.0


@dataclass(frozen=True)
class Figure:
    name: str  # machine name, e.g. "roc_auc", "pearson_overall"
    label: str  # for people, e.g. "ROC-AUC"
    estimate: Estimate
    headline: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "headline": self.headline,
            **self.estimate.to_dict(),
        }


@dataclass(frozen=True)
class Scored:
    figures: list[Figure]
    n_units: int
    n_scored: int  # units that entered the statistics

    @property
    def coverage(self) -> float:
        return self.n_scored / self.n_units if self.n_units else 0.0


def score_suite(
    data: SuiteData,
    values: Sequence[float | None] | dict[str, Sequence[float | None]],
    *,
    threshold: float = 0.5,
    seed: int = 0,
    n_boot: int = 2000,
) -> Scored:
    """`values`: one score per row of `data` (None = not scored), or for graded suites a list
    per label name (e.g. a baseline with a separate score for each)."""
    if data.kind == "pairwise":
        return _pairwise(data, _one(values))
    if data.kind == "binary":
        return _binary(data, _one(values), threshold, seed, n_boot)
    if data.kind == "graded":
        return _graded(data, values)
    return _agreement(data, _one(values), seed, n_boot)


def _one(values: Any) -> Sequence[float | None]:
    if isinstance(values, dict):
        raise ValueError("per-label scores are only meaningful for graded suites")
    return values


def _pairwise(data: SuiteData, values: Sequence[float | None]) -> Scored:
    kept = [
        (better, worse)
        for better, worse in ((values[a], values[b]) for a, b in data.pairs)
        if better is not None and worse is not None
    ]
    better = [float(a) for a, _ in kept]
    worse = [float(b) for _, b in kept]
    accuracy = pairwise_accuracy(better, worse)
    wins = sum(a > b for a, b in kept)
    ties = sum(a == b for a, b in kept)
    counts = [
        Figure("wins", "preferred scored higher", Estimate(wins, None, None, len(kept), "count")),
        Figure("ties", "ties (counted 0.5)", Estimate(ties, None, None, len(kept), "count")),
    ]
    return Scored(
        [Figure("pairwise_accuracy", "pairwise accuracy", accuracy, headline=True), *counts],
        len(data.pairs),
        len(kept),
    )


def _binary(
    data: SuiteData, values: Sequence[float | None], threshold: float, seed: int, n_boot: int
) -> Scored:
    kept = [
        (float(v), label) for v, label in zip(values, data.labels, strict=True) if v is not None
    ]
    scores = [v for v, _ in kept]
    labels = [label for _, label in kept]

    def boot(statistic: Callable[[Any, Any], float | None]) -> Estimate:
        return _stratified(statistic, labels, scores, seed, n_boot)

    figures = [
        Figure(
            "roc_auc",
            "ROC-AUC",
            boot(roc_auc),
            headline=True,
        ),
        Figure(
            "balanced_accuracy",
            f"balanced accuracy @ {threshold:g}",
            boot(lambda y, s: balanced_accuracy(y, s >= threshold)),
            headline=True,
        ),
        Figure(
            "f1_negative",
            f"F1 of label 0 (score < {threshold:g})",
            boot(lambda y, s: f1_score(y, s >= threshold, positive=0)),
            headline=True,
        ),
        Figure(
            "f1_positive",
            f"F1 of label 1 (score >= {threshold:g})",
            boot(lambda y, s: f1_score(y, s >= threshold, positive=1)),
        ),
        Figure(
            "positives",
            "items labelled 1",
            Estimate(sum(labels), None, None, len(labels), "count"),
        ),
    ]
    tuned = best_threshold(labels, scores)
    if tuned is not None:
        # Reported on every split; only a dev split's value may be carried to test (--threshold-from).
        figures += [
            Figure(
                "best_threshold",
                f"threshold with the best balanced accuracy on this {data.split} split",
                Estimate(tuned[0], None, None, len(labels), "search over midpoints"),
            ),
            Figure(
                "best_balanced_accuracy",
                "balanced accuracy at that threshold (optimistic on its own split)",
                Estimate(tuned[1], None, None, len(labels), "in-sample"),
            ),
        ]
    return Scored(figures, len(data.labels), len(kept))


def _stratified(
    statistic: Callable[[Any, Any], float | None],
    labels: Sequence[int],
    scores: Sequence[float],
    seed: int,
    n_boot: int,
) -> Estimate:
    """`statistic(labels, scores)` with a bootstrap interval that resamples each class on its own
    (every resample keeps the numbers of positives and negatives); no interval with one class."""
    found = bootstrap(statistic, [labels, scores], resamples=n_boot, seed=seed, strata=labels)
    if len(set(labels)) < 2:
        return replace(found, low=None, high=None, degenerate_resamples=0)
    return found


def _graded(data: SuiteData, values: Any) -> Scored:
    label_names = list(data.graded[0].labels) if data.graded else []
    per_label = values if isinstance(values, dict) else {name: values for name in label_names}
    figures: list[Figure] = []
    n_scored = 0
    for name in label_names:
        scores = per_label[name]
        deltas: list[float] = []
        humans: list[float] = []
        instances = 0
        for pair in data.graded:
            first, second = scores[pair.first], scores[pair.second]
            if first is None or second is None:
                continue
            instances += 1
            for label in pair.labels[name]:  # one row per annotator, as the RAGChecker paper does
                deltas.append(float(second) - float(first))
                humans.append(label)
        n_scored = max(n_scored, instances)
        signs = [(d, h) for d, h in zip(deltas, humans, strict=True) if h != 0]
        agree = sum(1.0 if d * h > 0 else 0.5 if d == 0 else 0.0 for d, h in signs)
        figures += [
            Figure(
                f"pearson_{name}",
                f"Pearson r ({name})",
                with_fisher(pearson, humans, deltas, n_eff=instances),
                headline=True,
            ),
            Figure(
                f"spearman_{name}",
                f"Spearman rho ({name})",
                with_fisher(spearman, humans, deltas, n_eff=instances),
            ),
            Figure(
                f"sign_agreement_{name}",
                f"sign agreement ({name}, label != 0, tie 0.5)",
                proportion(agree, len(signs)) if signs else Estimate(None, None, None, 0, ""),
            ),
        ]
    return Scored(figures, len(data.graded), n_scored)


def _agreement(data: SuiteData, values: Sequence[float | None], seed: int, n_boot: int) -> Scored:
    kept = [
        (float(v), label, group)
        for v, label, group in zip(values, data.labels, data.groups, strict=True)
        if v is not None
    ]
    agree = sum((value >= PASS) == bool(label) for value, label, _ in kept)
    figures = [
        Figure(
            "agreement",
            "agreement with BFCL (pass = score 1.0)",
            proportion(agree, len(kept)),
            headline=True,
        ),
        Figure(
            "roc_auc",
            "ROC-AUC (acceptable vs corrupted)",
            _stratified(
                roc_auc, [lab for _, lab, _ in kept], [v for v, _, _ in kept], seed, n_boot
            ),
        ),
    ]
    for group in dict.fromkeys(data.groups):
        rows = [value for value, _, g in kept if g == group]
        total = sum(g == group for g in data.groups)
        acceptable = data.labels[data.groups.index(group)] == 1
        what = "pass rate" if acceptable else "false-pass rate"
        estimate = (
            proportion(sum(v >= PASS for v in rows), len(rows))
            if rows
            else Estimate(None, None, None, 0, f"no row scored of {total}")
        )
        figures.append(
            Figure(f"pass_{group}", f"{what}: {group} ({len(rows)}/{total} scored)", estimate)
        )
    return Scored(figures, len(data.labels), len(kept))


__all__ = ["PASS", "Figure", "Scored", "score_suite"]
