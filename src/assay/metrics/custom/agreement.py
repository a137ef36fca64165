"""How well a judge's labels agree with gold labels: `get_correlation` of the custom metrics.

- labels (DiscreteMetric, @discrete_metric): Cohen's kappa;
- numbers (NumericMetric, @numeric_metric): Pearson's r;
- rankings (RankingMetric, @ranking_metric): the mean, over items, of the quadratic-weighted kappa
  between the gold and the predicted ranking (0.0 for no items), as Ragas computes it.

The arithmetic is `assay.stats`' (`agreement.cohen_kappa`, `correlation.pearson`; numpy, no
scikit-learn or scipy, imported when a correlation is asked for); labels are compared as text.
Where a statistic is undefined (every label the same in both lists; a list of numbers with no
spread), kappa is 1.0 (the lists agree on their one label) and Pearson's r is a UsageError saying
so: never NaN.
"""

from __future__ import annotations

import math
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
    from assay.stats.agreement import cohen_kappa as kappa

    gold, predicted = _paired(gold, predicted)
    if not gold:
        raise UsageError("gold_labels is empty; kappa needs at least one pair")
    found = kappa(
        [str(g) for g in gold],
        [str(p) for p in predicted],
        weights="quadratic" if quadratic else None,
    )
    return 1.0 if found is None else found  # one label everywhere: agreement is all there is


def pearson(gold: Sequence[Any], predicted: Sequence[Any]) -> float:
    """Pearson's correlation coefficient of two lists of numbers (or numeric text)."""
    from assay.stats.correlation import pearson as pearson_r

    gold, predicted = _paired(gold, predicted)
    try:
        xs, ys = [float(v) for v in gold], [float(v) for v in predicted]
    except (TypeError, ValueError) as exc:
        raise UsageError(f"gold_labels and predictions must hold numbers: {exc}") from None
    if len(xs) < 2:
        raise UsageError("Pearson's r needs at least two pairs")
    found = pearson_r(xs, ys)
    if found is None:
        which = "gold_labels" if len(set(xs)) == 1 else "predictions"
        raise UsageError(f"{which} are all the same number; Pearson's r is undefined")
    return found


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
