"""Agreement statistics between a judge and human labels, each with a bootstrap 95% interval.

Correlations, the rank-sum behind ROC-AUC and the resampling are scipy's (`spearmanr`,
`kendalltau`, `pearsonr`, `mannwhitneyu`, `bootstrap`); Cohen's kappa, Brier score and expected
calibration error are their textbook formulas over numpy arrays. A statistic that is undefined on
the data (one class only, no variance) is None, never NaN; resamples where it is undefined are
left out of its interval and counted.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from assay._util.deps import require

sps = require("scipy.stats", extra="alignment", package="scipy", feature="alignment statistics")


def _defined(value: float) -> float | None:
    return None if value is None or not np.isfinite(value) else float(value)


def confusion_matrix(
    labels: Sequence[Any], predictions: Sequence[Any], categories: Sequence[Any]
) -> np.ndarray:
    """Rows: human label; columns: judge; in the order of `categories`."""
    index = {json_key(c): i for i, c in enumerate(categories)}
    matrix = np.zeros((len(categories), len(categories)), dtype=int)
    for label, prediction in zip(labels, predictions, strict=True):
        matrix[index[json_key(label)], index[json_key(prediction)]] += 1
    return matrix


def json_key(value: Any) -> str:
    """One key per category: 1, 1.0 and numpy's 1.0 are the same category."""
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = float(value)
        value = int(number) if number.is_integer() else number
    return json.dumps(value, sort_keys=True, default=str)


def cohen_kappa(
    labels: Sequence[Any],
    predictions: Sequence[Any],
    categories: Sequence[Any] | None = None,
    weights: str | None = None,
) -> float:
    """Cohen's kappa from the confusion matrix: 1 - sum(w*O) / sum(w*E), E the product of the
    margins. `weights` None (every disagreement counts 1), "linear" or "quadratic" (by distance
    between category positions, as sklearn does). NaN when chance agreement is total."""
    if categories is None:
        categories = sorted({json_key(v): v for v in [*labels, *predictions]}.values(), key=_order)
    observed = confusion_matrix(labels, predictions, categories).astype(float)
    n = observed.sum()
    if n == 0:
        return float("nan")
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / n
    k = len(categories)
    positions = np.arange(k)
    distance = np.abs(positions[:, None] - positions[None, :]).astype(float)
    if weights is None:
        w = (distance > 0).astype(float)
    elif weights == "linear":
        w = distance
    elif weights == "quadratic":
        w = distance**2
    else:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    denominator = (w * expected).sum()
    if denominator == 0:
        return float("nan")
    return float(1 - (w * observed).sum() / denominator)


def _order(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))


def agreement(labels: Sequence[Any], predictions: Sequence[Any]) -> float:
    return float(
        np.mean([json_key(a) == json_key(b) for a, b in zip(labels, predictions, strict=True)])
    )


def balanced_accuracy(y: np.ndarray, decisions: np.ndarray) -> float:
    pos, neg = y == 1, y == 0
    if not pos.any() or not neg.any():
        return float("nan")
    return float(0.5 * (decisions[pos].mean() + (1 - decisions[neg]).mean()))


def roc_auc(y: np.ndarray, scores: np.ndarray) -> float:
    """P(a random positive scores above a random negative), ties counting one half: the
    Mann-Whitney U of the positives over n_pos * n_neg."""
    positives, negatives = scores[y == 1], scores[y == 0]
    if len(positives) == 0 or len(negatives) == 0:
        return float("nan")
    u = sps.mannwhitneyu(
        positives, negatives, alternative="two-sided", method="asymptotic"
    ).statistic
    return float(u / (len(positives) * len(negatives)))


def brier(y: np.ndarray, probabilities: np.ndarray) -> float:
    return float(np.mean((probabilities - y) ** 2))


def calibration_bins(
    y: np.ndarray, probabilities: np.ndarray, n_bins: int = 10
) -> list[dict[str, Any]]:
    """Equal-width bins over [0, 1]: count, mean score, share of positive labels (None if empty)."""
    # rounded: linspace's 0.30000000000000004 would put a score of exactly 0.3 in the bin below
    edges = np.round(np.linspace(0.0, 1.0, n_bins + 1), 12)
    which = np.clip(np.digitize(probabilities, edges[1:-1], right=False), 0, n_bins - 1)
    bins = []
    for b in range(n_bins):
        members = which == b
        count = int(members.sum())
        bins.append(
            {
                "low": float(edges[b]),
                "high": float(edges[b + 1]),
                "n": count,
                "mean_score": float(probabilities[members].mean()) if count else None,
                "positive_rate": float(y[members].mean()) if count else None,
            }
        )
    return bins


def expected_calibration_error(y: np.ndarray, probabilities: np.ndarray, n_bins: int = 10) -> float:
    """Sum over bins of (share of rows in the bin) * |positive rate - mean score|."""
    total = len(y)
    error = 0.0
    for item in calibration_bins(y, probabilities, n_bins):
        if item["n"]:
            error += item["n"] / total * abs(item["positive_rate"] - item["mean_score"])
    return float(error)


def _quiet(function: Callable[..., Any]) -> Callable[..., float]:
    def run(*args: Any) -> float:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # constant inputs: undefined, reported as None
            try:
                return float(function(*args))
            except ValueError:
                return float("nan")

    return run


spearman = _quiet(lambda a, b: sps.spearmanr(a, b).statistic)
kendall = _quiet(lambda a, b: sps.kendalltau(a, b).statistic)
pearson = _quiet(lambda a, b: sps.pearsonr(a, b).statistic if len(a) > 1 else float("nan"))


def mae(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean(np.abs(a - b)))


@dataclass
class Estimate:
    """A statistic with its bootstrap 95% interval over `n` rows."""

    value: float | None
    low: float | None
    high: float | None
    n: int
    degenerate_resamples: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "n": self.n,
            "degenerate_resamples": self.degenerate_resamples,
        }


def with_interval(
    statistic: Callable[..., float],
    columns: Sequence[np.ndarray],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Estimate:
    """`statistic(*columns)` and its percentile interval from a paired bootstrap over rows
    (`scipy.stats.bootstrap`); resamples where the statistic is undefined are left out."""
    n = len(columns[0])
    if n == 0:  # every row failed: nothing to estimate
        return Estimate(None, None, None, 0)
    value = _defined(statistic(*columns))
    if value is None or n < 2:
        return Estimate(value, None, None, n)
    with warnings.catch_warnings():
        # scipy warns when some resamples are undefined (one class only); they are counted below.
        warnings.simplefilter("ignore", sps.DegenerateDataWarning)
        result = sps.bootstrap(
            tuple(columns),
            statistic,
            paired=True,
            vectorized=False,
            n_resamples=n_resamples,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    distribution = np.asarray(result.bootstrap_distribution, dtype=float)
    finite = distribution[np.isfinite(distribution)]
    degenerate = int(len(distribution) - len(finite))
    if len(finite) == 0:
        return Estimate(value, None, None, n, degenerate)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    return Estimate(value, float(low), float(high), n, degenerate)


__all__ = [
    "Estimate",
    "agreement",
    "balanced_accuracy",
    "brier",
    "calibration_bins",
    "cohen_kappa",
    "confusion_matrix",
    "expected_calibration_error",
    "kendall",
    "mae",
    "pearson",
    "roc_auc",
    "spearman",
    "with_interval",
]
