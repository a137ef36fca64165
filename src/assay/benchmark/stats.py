"""Agreement statistics between metric scores and human labels, each with a confidence interval.

- pairs:   `pairwise_accuracy` (ties count 0.5) with an exact binomial (Clopper-Pearson) interval;
- binary:  `roc_auc` (ties 0.5), `balanced_accuracy` and `f1_score` at a threshold, each with a
           stratified bootstrap interval (`bootstrap_ci`: classes resampled separately, seeded);
- graded:  `pearson` and `spearman` with Fisher-z intervals.

numpy and scipy are imported when a statistic is computed (extra `benchmark`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from assay._util.deps import require


def _np() -> Any:
    return require("numpy", extra="benchmark", feature="assay benchmark")


def _scipy_stats() -> Any:
    return require("scipy.stats", extra="benchmark", package="scipy", feature="assay benchmark")


@dataclass(frozen=True)
class Estimate:
    """A figure with its interval. `low`/`high` are None when no interval can be formed."""

    value: float | None
    low: float | None
    high: float | None
    n: int
    method: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "n": self.n,
            "method": self.method,
        }


# -- proportions ---------------------------------------------------------------------------------
def clopper_pearson(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval for `successes` out of `n`.

    The bounds are Beta quantiles, Beta(a/2; k, n-k+1) and Beta(1-a/2; k+1, n-k), which are
    defined for a fractional k too: with ties counted as half a success, k may end in .5.
    """
    if n <= 0:
        raise ValueError("a proportion needs at least one trial")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be within [0, {n}], got {successes}")
    beta = _scipy_stats().beta
    alpha = 1 - confidence
    low = 0.0 if successes == 0 else float(beta.ppf(alpha / 2, successes, n - successes + 1))
    high = 1.0 if successes == n else float(beta.ppf(1 - alpha / 2, successes + 1, n - successes))
    return low, high


def proportion(successes: float, n: int, confidence: float = 0.95) -> Estimate:
    if n == 0:
        return Estimate(None, None, None, 0, "clopper-pearson")
    low, high = clopper_pearson(successes, n, confidence)
    return Estimate(successes / n, low, high, n, "clopper-pearson")


def pairwise_accuracy(
    better: Sequence[float], worse: Sequence[float], confidence: float = 0.95
) -> Estimate:
    """Share of pairs where the preferred item scores higher; an exact tie counts 0.5."""
    if len(better) != len(worse):
        raise ValueError("better and worse must have one score per pair")
    wins = sum(b > w for b, w in zip(better, worse, strict=True))
    ties = sum(b == w for b, w in zip(better, worse, strict=True))
    estimate = proportion(wins + 0.5 * ties, len(better), confidence)
    return Estimate(
        estimate.value, estimate.low, estimate.high, estimate.n, "ties=0.5, clopper-pearson"
    )


# -- binary labels -------------------------------------------------------------------------------
def _split(scores: Sequence[float], labels: Sequence[int]) -> tuple[Any, Any]:
    np = _np()
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=int)
    if s.shape != y.shape:
        raise ValueError("scores and labels must have the same length")
    if not set(np.unique(y).tolist()) <= {0, 1}:
        raise ValueError("labels must be 0 or 1")
    return s, y


def roc_auc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """P(score of a random positive > score of a random negative), ties 0.5 (Mann-Whitney U).
    None when one class is absent."""
    s, y = _split(scores, labels)
    n_pos, n_neg = int(y.sum()), int((1 - y).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = _scipy_stats().rankdata(s)  # average ranks: a tie contributes one half
    return float((ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _confusion(
    scores: Sequence[float], labels: Sequence[int], threshold: float
) -> tuple[int, int, int, int]:
    s, y = _split(scores, labels)
    predicted = s >= threshold
    tp = int((predicted & (y == 1)).sum())
    fp = int((predicted & (y == 0)).sum())
    fn = int((~predicted & (y == 1)).sum())
    tn = int((~predicted & (y == 0)).sum())
    return tp, fp, fn, tn


def balanced_accuracy(
    scores: Sequence[float], labels: Sequence[int], threshold: float = 0.5
) -> float | None:
    """Mean of the true-positive and true-negative rates, predicting positive when score >= threshold."""
    tp, fp, fn, tn = _confusion(scores, labels, threshold)
    if tp + fn == 0 or tn + fp == 0:
        return None
    return (tp / (tp + fn) + tn / (tn + fp)) / 2


def best_threshold(scores: Sequence[float], labels: Sequence[int]) -> tuple[float, float] | None:
    """The threshold with the highest balanced accuracy on these scores, and that accuracy.
    Candidates are the midpoints between neighbouring distinct scores (and just below the lowest);
    a tie goes to the candidate nearest 0.5. None when one class is absent. Tune on dev data only:
    on the data it was tuned on, the accuracy is optimistic."""
    s, y = _split(scores, labels)
    if not (y == 1).any() or not (y == 0).any():
        return None
    distinct = sorted(set(float(v) for v in s))
    candidates = [distinct[0] - 1e-9] + [(a + b) / 2 for a, b in itertools.pairwise(distinct)]
    best: tuple[float, float] | None = None
    for candidate in candidates:
        accuracy = balanced_accuracy(scores, labels, candidate)
        if accuracy is None:
            continue
        if (
            best is None
            or accuracy > best[1] + 1e-12
            or (abs(accuracy - best[1]) <= 1e-12 and abs(candidate - 0.5) < abs(best[0] - 0.5))
        ):
            best = (candidate, accuracy)
    return best


def f1_score(
    scores: Sequence[float], labels: Sequence[int], threshold: float = 0.5, positive: int = 1
) -> float:
    """F1 for class `positive` (1, or 0 to score the detection of failures: score < threshold).
    0.0 when the class is never predicted correctly."""
    tp, fp, fn, tn = _confusion(scores, labels, threshold)
    if positive == 0:
        tp, fp, fn = tn, fn, fp
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def bootstrap_ci(
    statistic: Callable[[Any, Any], float | None],
    scores: Sequence[float],
    labels: Sequence[int],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float | None, float | None]:
    """Percentile interval of `statistic(scores, labels)` over resamples that keep the number
    of positives and of negatives fixed (each class resampled with replacement)."""
    np = _np()
    s, y = _split(scores, labels)
    positives, negatives = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    if len(positives) == 0 or len(negatives) == 0:
        return None, None
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_boot):
        index = np.concatenate(
            [rng.choice(positives, len(positives)), rng.choice(negatives, len(negatives))]
        )
        value = statistic(s[index], y[index])
        if value is not None:
            values.append(value)
    if not values:
        return None, None
    alpha = 1 - confidence
    low, high = np.quantile(np.asarray(values), [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def with_bootstrap(
    statistic: Callable[[Any, Any], float | None],
    scores: Sequence[float],
    labels: Sequence[int],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Estimate:
    value = statistic(scores, labels) if len(scores) else None
    low = high = None
    if value is not None:
        low, high = bootstrap_ci(
            statistic, scores, labels, n_boot=n_boot, seed=seed, confidence=confidence
        )
    return Estimate(value, low, high, len(scores), f"stratified bootstrap ({n_boot}, seed {seed})")


# -- graded labels ---------------------------------------------------------------------------------
def _fisher(
    r: float, n_eff: int, se_factor: float, confidence: float
) -> tuple[float | None, float | None]:
    if n_eff <= 3 or not math.isfinite(r):
        return None, None
    if abs(r) >= 1:
        return r, r
    z = math.atanh(r)
    half = float(_scipy_stats().norm.ppf(1 - (1 - confidence) / 2)) * math.sqrt(
        se_factor / (n_eff - 3)
    )
    return math.tanh(z - half), math.tanh(z + half)


def _pearson_r(x: Any, y: Any) -> float | None:
    np = _np()
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError("x and y must have the same length")
    if len(x) < 2 or x.std() == 0 or y.std() == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def pearson(
    x: Sequence[float], y: Sequence[float], *, n_eff: int | None = None, confidence: float = 0.95
) -> Estimate:
    """Pearson r with a Fisher-z interval, se = 1/sqrt(n_eff - 3). `n_eff` defaults to len(x);
    pass fewer when rows are duplicated (e.g. one row per annotator of the same item)."""
    r = _pearson_r(x, y)
    n = n_eff if n_eff is not None else len(x)
    low, high = _fisher(r, n, 1.0, confidence) if r is not None else (None, None)
    return Estimate(r, low, high, n, "fisher-z")


def spearman(
    x: Sequence[float], y: Sequence[float], *, n_eff: int | None = None, confidence: float = 0.95
) -> Estimate:
    """Spearman rho (Pearson on average ranks) with a Fisher-z interval, se = sqrt(1.06/(n_eff-3))
    (Fieller, Hartley and Pearson 1957)."""
    rank = _scipy_stats().rankdata
    r = _pearson_r(rank(x), rank(y)) if len(x) else None
    n = n_eff if n_eff is not None else len(x)
    low, high = _fisher(r, n, 1.06, confidence) if r is not None else (None, None)
    return Estimate(r, low, high, n, "fisher-z (1.06)")


__all__ = [
    "Estimate",
    "balanced_accuracy",
    "bootstrap_ci",
    "clopper_pearson",
    "f1_score",
    "pairwise_accuracy",
    "pearson",
    "proportion",
    "roc_auc",
    "spearman",
    "with_bootstrap",
]
