"""How two columns of numbers move together: Pearson, Spearman, Kendall, and their intervals.

- `pearson`, `spearman` (Pearson on average ranks) and `mae` are numpy; `kendall` (tau-b) is
  scipy's `kendalltau` (extra `alignment`), O(n log n) where a by-hand count is O(n^2).
- Each is None when undefined (fewer than two rows, a column without spread), never NaN.
- `with_fisher(statistic, truth, predicted)`: the coefficient with a Fisher-z interval,
  se = sqrt(f / (n_eff - 3)), f = 1 for Pearson and 1.06 for Spearman (Fieller, Hartley and
  Pearson 1957); `n_eff` (default: the rows) is smaller when rows repeat an item.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from statistics import NormalDist
from typing import Any

import numpy as np

from assay._util.deps import require
from assay.stats.columns import Numbers
from assay.stats.estimate import Estimate, defined


def _columns(truth: Numbers, predicted: Numbers) -> tuple[Any, Any]:
    x, y = np.asarray(truth, dtype=float), np.asarray(predicted, dtype=float)
    if x.shape != y.shape:
        raise ValueError("truth and predicted must have the same length")
    return x, y


def average_ranks(values: Numbers) -> Any:
    """Ranks 1..n, tied values sharing the mean of their ranks (scipy's `rankdata` default)."""
    a = np.asarray(values, dtype=float)
    order = np.argsort(a, kind="mergesort")
    ordered = a[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], len(a)]
    group = np.repeat(np.arange(len(starts)), ends - starts)
    ranks = np.empty(len(a), dtype=float)
    ranks[order] = ((starts + ends - 1) / 2 + 1)[group]
    return ranks


def pearson(truth: Numbers, predicted: Numbers) -> float | None:
    """Pearson's r; None below two rows or when a column has no spread."""
    x, y = _columns(truth, predicted)
    if len(x) < 2 or x.std() == 0 or y.std() == 0:
        return None
    return defined(max(-1.0, min(1.0, float(np.corrcoef(x, y)[0, 1]))))


def spearman(truth: Numbers, predicted: Numbers) -> float | None:
    """Spearman's rho: Pearson's r of the average ranks."""
    x, y = _columns(truth, predicted)
    return pearson(average_ranks(x), average_ranks(y)) if len(x) else None


def kendall(truth: Numbers, predicted: Numbers) -> float | None:
    """Kendall's tau-b (scipy)."""
    x, y = _columns(truth, predicted)
    if len(x) < 2:
        return None
    sps = require("scipy.stats", extra="alignment", package="scipy", feature="Kendall's tau")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant input: undefined, reported as None
        return defined(sps.kendalltau(x, y).statistic)


def mae(truth: Numbers, predicted: Numbers) -> float | None:
    """Mean absolute difference."""
    x, y = _columns(truth, predicted)
    return float(np.mean(np.abs(x - y))) if len(x) else None


def with_fisher(
    statistic: Callable[[Sequence[float], Sequence[float]], float | None],
    truth: Sequence[float],
    predicted: Sequence[float],
    *,
    n_eff: int | None = None,
    confidence: float = 0.95,
) -> Estimate:
    """`statistic` (`pearson` or `spearman`) with its Fisher-z interval; none for n_eff <= 3."""
    r = statistic(truth, predicted)
    n = n_eff if n_eff is not None else len(truth)
    spread = 1.06 if statistic is spearman else 1.0
    method = "fisher-z (1.06)" if statistic is spearman else "fisher-z"
    if r is None or n <= 3:
        return Estimate(r, None, None, n, method)
    if abs(r) >= 1:
        return Estimate(r, r, r, n, method)
    z = math.atanh(r)
    half = NormalDist().inv_cdf(1 - (1 - confidence) / 2) * math.sqrt(spread / (n - 3))
    return Estimate(r, math.tanh(z - half), math.tanh(z + half), n, method)


__all__ = ["average_ranks", "kendall", "mae", "pearson", "spearman", "with_fisher"]
