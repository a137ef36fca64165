"""Intervals of a proportion: successes out of n trials (a pass rate, a pairwise accuracy).

- `wilson`: the Wilson score interval (scipy's `binomtest(...).proportion_ci`), the interval the
  pytest gate puts on pass rates;
- `clopper_pearson`: the exact binomial interval, from Beta quantiles so a fractional count
  (ties counted as half a success) works too; `proportion` wraps it as an `Estimate`;
- `pairwise_accuracy(better, worse)`: share of pairs where the preferred item scores higher,
  a tie counting 0.5, with the exact interval.

scipy is imported when an interval is computed (extras `testing`, `benchmark`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay._util.deps import require
from assay.stats.estimate import Estimate


def _scipy_stats(extra: str) -> Any:
    return require("scipy.stats", extra=extra, package="scipy", feature="proportion intervals")


def wilson(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for `successes` out of `n` (whole numbers, n > 0)."""
    found = (
        _scipy_stats("testing")
        .binomtest(int(successes), n)
        .proportion_ci(confidence_level=confidence, method="wilson")
    )
    return float(found.low), float(found.high)


def clopper_pearson(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval for `successes` out of `n`.

    The bounds are Beta quantiles, Beta(a/2; k, n-k+1) and Beta(1-a/2; k+1, n-k), which are
    defined for a fractional k too: with ties counted as half a success, k may end in .5.
    """
    if n <= 0:
        raise ValueError("a proportion needs at least one trial")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be within [0, {n}], got {successes}")
    beta = _scipy_stats("benchmark").beta
    alpha = 1 - confidence
    low = 0.0 if successes == 0 else float(beta.ppf(alpha / 2, successes, n - successes + 1))
    high = 1.0 if successes == n else float(beta.ppf(1 - alpha / 2, successes + 1, n - successes))
    return low, high


def proportion(
    successes: float, n: int, confidence: float = 0.95, method: str = "clopper-pearson"
) -> Estimate:
    """successes / n with its exact interval; value None when n is 0."""
    if n == 0:
        return Estimate(None, None, None, 0, method)
    low, high = clopper_pearson(successes, n, confidence)
    return Estimate(successes / n, low, high, n, method)


def pairwise_accuracy(
    better: Sequence[float], worse: Sequence[float], confidence: float = 0.95
) -> Estimate:
    """Share of pairs where the preferred item scores higher; an exact tie counts 0.5."""
    if len(better) != len(worse):
        raise ValueError("better and worse must have one score per pair")
    wins = sum(b > w for b, w in zip(better, worse, strict=True))
    ties = sum(b == w for b, w in zip(better, worse, strict=True))
    return proportion(wins + 0.5 * ties, len(better), confidence, "ties=0.5, clopper-pearson")


__all__ = ["clopper_pearson", "pairwise_accuracy", "proportion", "wilson"]
