"""How well a judge's labels agree with gold labels: `get_correlation` of the custom metrics.

- labels (DiscreteMetric, @discrete_metric): Cohen's kappa;
- numbers (NumericMetric, @numeric_metric): Pearson's r;
- rankings (RankingMetric, @ranking_metric): the mean, over items, of the quadratic-weighted kappa
  between the gold and the predicted ranking (0.0 for no items), as Ragas computes it.

Pure Python, no scikit-learn or scipy needed. Where a statistic is undefined (every label the
same in both lists; a list of numbers with no spread), kappa is 1.0 for full agreement and 0.0
otherwise, and Pearson's r is a UsageError saying so: never NaN.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from assay.errors import UsageError


def _paired(gold: Any, predicted: Any) -> tuple[list[Any], list[Any]]:
    for name, values in (("gold_labels", gold), ("predictions", predicted)):
        if not isinstance(values, Sequence) or isinstance(values, (str, bytes)):
            raise UsageError(f"{name} must be a list, got {type(values).__name__}")
    if len(gold) != len(predicted):
        raise UsageError(
            f"gold_labels has {len(gold)} items and predictions {len(predicted)}; they must pair up"
        )
    return list(gold), list(predicted)


def cohen_kappa(gold: Sequence[Any], predicted: Sequence[Any], *, quadratic: bool = False) -> float:
    """Cohen's kappa of two label lists; `quadratic` weighs a disagreement by the squared distance
    between the labels' positions in their sorted order."""
    gold, predicted = _paired(gold, predicted)
    if not gold:
        raise UsageError("gold_labels is empty; kappa needs at least one pair")
    labels = sorted({*map(str, gold), *map(str, predicted)})
    index = {label: i for i, label in enumerate(labels)}
    k, n = len(labels), len(gold)
    pairs = Counter((index[str(g)], index[str(p)]) for g, p in zip(gold, predicted, strict=True))
    rows = Counter(index[str(g)] for g in gold)
    cols = Counter(index[str(p)] for p in predicted)

    def weight(i: int, j: int) -> float:
        if quadratic:
            return ((i - j) / (k - 1)) ** 2 if k > 1 else 0.0
        return 0.0 if i == j else 1.0

    observed = sum(weight(i, j) * count for (i, j), count in pairs.items()) / n
    expected = sum(weight(i, j) * rows[i] * cols[j] for i in range(k) for j in range(k)) / (n * n)
    if expected == 0:  # one label everywhere: agreement is all there is to say
        return 1.0 if observed == 0 else 0.0
    return 1.0 - observed / expected


def pearson(gold: Sequence[Any], predicted: Sequence[Any]) -> float:
    """Pearson's correlation coefficient of two lists of numbers (or numeric text)."""
    gold, predicted = _paired(gold, predicted)
    try:
        xs, ys = [float(v) for v in gold], [float(v) for v in predicted]
    except (TypeError, ValueError) as exc:
        raise UsageError(f"gold_labels and predictions must hold numbers: {exc}") from None
    if len(xs) < 2:
        raise UsageError("Pearson's r needs at least two pairs")
    mx, my = math.fsum(xs) / len(xs), math.fsum(ys) / len(ys)
    sxy = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx, syy = math.fsum((x - mx) ** 2 for x in xs), math.fsum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        which = "gold_labels" if sxx == 0 else "predictions"
        raise UsageError(f"{which} are all the same number; Pearson's r is undefined")
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def ranking_agreement(gold: Sequence[Any], predicted: Sequence[Any]) -> float:
    """Mean quadratic-weighted kappa between each gold ranking and its predicted ranking."""
    gold, predicted = _paired(gold, predicted)
    scores = [
        cohen_kappa(list(g), list(p), quadratic=True) for g, p in zip(gold, predicted, strict=True)
    ]
    return math.fsum(scores) / len(scores) if scores else 0.0


def correlation(kind: str, gold: Sequence[Any], predicted: Sequence[Any]) -> float:
    if kind == "numeric":
        return pearson(gold, predicted)
    if kind == "ranking":
        return ranking_agreement(gold, predicted)
    return cohen_kappa(gold, predicted)


__all__ = ["cohen_kappa", "correlation", "pearson", "ranking_agreement"]
