"""The mean of a human metric from a few labels and many judge scores: prediction-powered inference.

A judge scored every row; people labelled some of them. The labels' own mean is unbiased but
wide (few rows); the judge's mean is narrow but carries the judge's bias. PPI++ (Angelopoulos,
Duchi and Zrnic, 2023) takes the judge's mean over all rows and corrects it by the judge's error
measured on the labelled rows:

    estimate = lambda * mean(judge, unlabelled) + mean(label - lambda * judge, labelled)

which is unbiased for any lambda. Power tuning picks the lambda that makes its variance smallest,
`cov(label, judge) / ((1 + n/N) * var(judge))`, clipped to [0, 1]: 0 when the judge says nothing
about the labels (the estimate is then the labels' mean), near 1 when it tracks them. The normal
interval uses the two parts' variances, so it is valid whatever the judge's bias, and narrower than
the labels' alone as far as the judge tracks them.

Rows sampled for labelling with unequal probabilities (a review queue that asks about uncertain
rows first) carry weights, 1 / probability of being labelled, so the estimate stays unbiased.

Written here rather than imported from `ppi-python` (which the tests check it against): that
package takes seconds to import and pulls numba, statsmodels and scikit-learn into the platform
server for this one formula.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from assay.errors import UsageError
from assay.stats.estimate import Estimate

if TYPE_CHECKING:  # numpy's array type, for annotations only: importing assay stays light
    from assay.stats.columns import Numbers


@dataclass(frozen=True)
class PPIEstimate(Estimate):
    """An `Estimate` of a human metric's mean from labels and judge scores; `n` counts labels.

    `n_unlabeled`: rows with a judge score only. `lam`: the weight given to the judge (0: the
    labels' mean alone). `labels_mean` and `judge_mean`: the two naive figures, for comparison.
    `labels_to_halve`: about how many labelled rows in all would halve the interval (None when
    labels alone cannot, because the judge's part of the variance is already over a quarter)."""

    n_unlabeled: int = 0
    lam: float | None = None
    labels_mean: float | None = None
    judge_mean: float | None = None
    labels_to_halve: int | None = None


def _column(name: str, values: Any) -> list[float]:
    try:
        column = [float(v) for v in values]
    except (TypeError, ValueError):
        raise UsageError(f"{name} must be a sequence of numbers") from None
    bad = next((i for i, v in enumerate(column) if not math.isfinite(v)), None)
    if bad is not None:
        raise UsageError(f"{name}[{bad}] is {column[bad]}: every value must be a finite number")
    return column


def _weights(name: str, values: Any, size: int) -> list[float]:
    if values is None:
        return [1.0] * size
    weights = _column(name, values)
    if len(weights) != size:
        raise UsageError(f"{name} has {len(weights)} values for {size} rows")
    if any(w <= 0 for w in weights):
        raise UsageError(f"{name} must be positive (1 / the probability a row was labelled)")
    scale = size / sum(weights)  # weights averaging 1, as the estimator assumes
    return [w * scale for w in weights]


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _population_variance(values: list[float]) -> float:
    centre = _mean(values)
    return sum((v - centre) ** 2 for v in values) / len(values)


def _power_tuned_lambda(
    labels: list[float], judged: list[float], judged_unlabeled: list[float], ratio: float
) -> float:
    """The variance-minimising lambda (PPI++ for a mean), clipped to [0, 1]."""
    label_mean, judge_mean = _mean(labels), _mean(judged)
    covariance = sum(
        (y - label_mean) * (f - judge_mean) for y, f in zip(labels, judged, strict=True)
    ) / len(labels)
    pooled = judged + judged_unlabeled
    pooled_mean = _mean(pooled)
    variance = sum((f - pooled_mean) ** 2 for f in pooled) / (len(pooled) - 1)
    if variance == 0:
        return 0.0  # a constant judge carries no information about the labels
    return min(1.0, max(0.0, covariance / ((1 + ratio) * variance)))


def ppi_mean(
    y_labeled: Numbers,
    yhat_labeled: Numbers,
    yhat_unlabeled: Numbers,
    alpha: float = 0.05,
    *,
    weights: Numbers | None = None,
    weights_unlabeled: Numbers | None = None,
    lam: float | None = None,
) -> PPIEstimate:
    """The mean of the human metric with a (1 - alpha) interval, from labels `y_labeled`, the
    judge's scores of the same rows `yhat_labeled` and of the unlabelled rows `yhat_unlabeled`.

    `lam`: fix the judge's weight (1: plain PPI; 0: the labels alone); None tunes it.
    `weights`, `weights_unlabeled`: inverse sampling probabilities, when rows were not picked for
    labelling uniformly at random. Fewer than two labels: the value is None (undefined)."""
    if not (isinstance(alpha, float | int) and 0 < alpha < 1):
        raise UsageError(f"alpha must be between 0 and 1 (0.05 for a 95% interval), got {alpha!r}")
    labels = _column("y_labeled", y_labeled)
    judged = _column("yhat_labeled", yhat_labeled)
    judged_unlabeled = _column("yhat_unlabeled", yhat_unlabeled)
    if len(labels) != len(judged):
        raise UsageError(
            f"y_labeled has {len(labels)} values and yhat_labeled {len(judged)}: they are the "
            "same rows, labelled and judged"
        )
    if lam is not None and not (isinstance(lam, float | int) and 0 <= lam <= 1):
        raise UsageError(f"lam must be between 0 and 1, or None to tune it; got {lam!r}")
    n, big_n = len(labels), len(judged_unlabeled)
    labels_mean = _mean(labels) if labels else None
    judge_mean = _mean(judged + judged_unlabeled) if judged or judged_unlabeled else None
    if n < 2:
        return PPIEstimate(
            None, n=n, method="ppi++", n_unlabeled=big_n, labels_mean=labels_mean,
            judge_mean=judge_mean,
        )  # fmt: skip
    w = _weights("weights", weights, n)
    w_unlabeled = _weights("weights_unlabeled", weights_unlabeled, big_n) if big_n else []
    if big_n == 0:
        lam = 0.0  # nothing to borrow from: the labels' own mean and interval
    elif lam is None:
        # tuned on each row's weighted deviation from the plain (lambda = 1) estimate, which is
        # what the weighted estimator's variance is made of
        plain = _mean(
            [wi * f for wi, f in zip(w_unlabeled, judged_unlabeled, strict=True)]
        ) + _mean([wi * (y - f) for wi, y, f in zip(w, labels, judged, strict=True)])
        lam = _power_tuned_lambda(
            [wi * (y - plain) for wi, y in zip(w, labels, strict=True)],
            [wi * (f - plain) for wi, f in zip(w, judged, strict=True)],
            [wi * (f - plain) for wi, f in zip(w_unlabeled, judged_unlabeled, strict=True)],
            n / big_n,
        )
    lam = float(lam)
    imputed = [wi * lam * f for wi, f in zip(w_unlabeled, judged_unlabeled, strict=True)]
    rectifier = [wi * (y - lam * f) for wi, y, f in zip(w, labels, judged, strict=True)]
    value = (_mean(imputed) if imputed else 0.0) + _mean(rectifier)
    imputed_var = _population_variance(imputed) / big_n if imputed else 0.0
    rectifier_var = _population_variance(rectifier) / n
    half = NormalDist().inv_cdf(1 - alpha / 2) * math.sqrt(imputed_var + rectifier_var)
    return PPIEstimate(
        value,
        low=value - half,
        high=value + half,
        n=n,
        method="ppi++" if lam > 0 else "labels (judge uninformative)",
        n_unlabeled=big_n,
        lam=lam,
        labels_mean=labels_mean,
        judge_mean=judge_mean,
        labels_to_halve=_labels_to_halve(n, imputed_var, rectifier_var),
    )


def _labels_to_halve(n: int, imputed_var: float, rectifier_var: float) -> int | None:
    """Labelled rows needed for half the width: the variance must fall to a quarter, and only
    the labels' part (rectifier_var * n / n') shrinks with more labels."""
    target = (imputed_var + rectifier_var) / 4 - imputed_var
    if target <= 0 or rectifier_var == 0:
        return None
    return math.ceil(rectifier_var * n / target)


__all__ = ["PPIEstimate", "ppi_mean"]
