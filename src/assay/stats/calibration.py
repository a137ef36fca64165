"""How well scores in [0, 1] read as probabilities of the positive label.

- `brier(truth, probabilities)`: mean squared difference;
- `calibration_bins`: equal-width bins over [0, 1] with count, mean score and positive rate;
- `expected_calibration_error`: sum over bins of (share of rows) * |positive rate - mean score|.

numpy only; None without rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from assay.stats.columns import Numbers


def brier(truth: Numbers, probabilities: Numbers) -> float | None:
    y, p = np.asarray(truth, dtype=float), np.asarray(probabilities, dtype=float)
    return float(np.mean((p - y) ** 2)) if len(y) else None


def calibration_bins(
    truth: Numbers, probabilities: Numbers, n_bins: int = 10
) -> list[dict[str, Any]]:
    """Equal-width bins over [0, 1]: count, mean score, share of positive labels (None if empty)."""
    y, p = np.asarray(truth, dtype=float), np.asarray(probabilities, dtype=float)
    # rounded: linspace's 0.30000000000000004 would put a score of exactly 0.3 in the bin below
    edges = np.round(np.linspace(0.0, 1.0, n_bins + 1), 12)
    which = np.clip(np.digitize(p, edges[1:-1], right=False), 0, n_bins - 1)
    bins = []
    for b in range(n_bins):
        members = which == b
        count = int(members.sum())
        bins.append(
            {
                "low": float(edges[b]),
                "high": float(edges[b + 1]),
                "n": count,
                "mean_score": float(p[members].mean()) if count else None,
                "positive_rate": float(y[members].mean()) if count else None,
            }
        )
    return bins


def expected_calibration_error(
    truth: Numbers, probabilities: Numbers, n_bins: int = 10
) -> float | None:
    """Sum over bins of (share of rows in the bin) * |positive rate - mean score|."""
    total = len(truth)
    if not total:
        return None
    error = 0.0
    for item in calibration_bins(truth, probabilities, n_bins):
        if item["n"]:
            error += item["n"] / total * abs(item["positive_rate"] - item["mean_score"])
    return float(error)


__all__ = ["brier", "calibration_bins", "expected_calibration_error"]
