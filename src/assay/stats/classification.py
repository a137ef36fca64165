"""Binary labels (1 positive, 0 negative) against a judge's scores or yes/no decisions.

- `roc_auc(truth, scores)`: P(a random positive scores above a random negative), ties counting
  one half (the Mann-Whitney U over n_pos * n_neg, from average ranks);
- `balanced_accuracy(truth, decisions)`: mean of the true-positive and true-negative rates;
- `f1_score(truth, decisions, positive=1)`: F1 of one class (0 scores the detection of failures);
- `best_threshold(truth, scores)`: the cut with the best balanced accuracy (tune on dev data).

Decisions are 0/1 (e.g. `scores >= threshold`). A figure needing both classes is None when one
is absent. numpy only.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from assay.stats.columns import Labels, Numbers, Values
from assay.stats.correlation import average_ranks


def _binary(truth: Values, predicted: Values) -> tuple[Any, Any]:
    y = np.asarray(truth, dtype=float)
    p = np.asarray(predicted, dtype=float)
    if y.shape != p.shape:
        raise ValueError("truth and predicted must have the same length")
    if not set(np.unique(y).tolist()) <= {0.0, 1.0}:
        raise ValueError("truth labels must be 0 or 1")
    return y, p


def roc_auc(truth: Labels, scores: Numbers) -> float | None:
    """Area under the ROC curve; None when one class is absent."""
    y, s = _binary(truth, scores)
    n_pos, n_neg = int((y == 1).sum()), int((y == 0).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = average_ranks(s)  # average ranks: a tie contributes one half
    return float((ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def balanced_accuracy(truth: Labels, decisions: Numbers) -> float | None:
    """(TPR + TNR) / 2 of 0/1 decisions; None when one class is absent."""
    y, d = _binary(truth, decisions)
    positive, negative = y == 1, y == 0
    if not positive.any() or not negative.any():
        return None
    return float((d[positive].mean() + (1 - d[negative]).mean()) / 2)


def f1_score(truth: Labels, decisions: Numbers, positive: int = 1) -> float:
    """F1 of class `positive` (1, or 0 for the failures); 0.0 when never predicted correctly."""
    y, d = _binary(truth, decisions)
    actual, said = y == positive, d == positive
    tp = int((actual & said).sum())
    fp, fn = int((~actual & said).sum()), int((actual & ~said).sum())
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def best_threshold(truth: Labels, scores: Numbers) -> tuple[float, float] | None:
    """The threshold with the highest balanced accuracy on these scores, and that accuracy.
    Candidates are the midpoints between neighbouring distinct scores (and just below the lowest);
    a tie goes to the candidate nearest 0.5. None when one class is absent. Tune on dev data only:
    on the data it was tuned on, the accuracy is optimistic."""
    y, s = _binary(truth, scores)
    if not (y == 1).any() or not (y == 0).any():
        return None
    distinct = sorted(set(s.tolist()))
    candidates = [distinct[0] - 1e-9] + [(a + b) / 2 for a, b in itertools.pairwise(distinct)]
    best: tuple[float, float] | None = None
    for candidate in candidates:
        accuracy = balanced_accuracy(y, s >= candidate)
        if accuracy is None:
            continue
        if (
            best is None
            or accuracy > best[1] + 1e-12
            or (abs(accuracy - best[1]) <= 1e-12 and abs(candidate - 0.5) < abs(best[0] - 0.5))
        ):
            best = (candidate, accuracy)
    return best


__all__ = ["balanced_accuracy", "best_threshold", "f1_score", "roc_auc"]
