"""Fitting a decision threshold on training scores, and choosing fixed examples.

The threshold is the cut `score >= threshold` with the best balanced accuracy (or accuracy, or
F1) on the training rows; among equally good cuts the one nearest the uncalibrated default wins,
so a tie never drifts to an extreme.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import Any, Literal

from assay.errors import UsageError
from assay.metrics.aligned import AlignedExample, nearest_examples

Objective = Literal["balanced_accuracy", "accuracy", "f1"]


def rate(decisions: Sequence[bool], labels: Sequence[int], objective: Objective) -> float:
    tp = sum(d and y == 1 for d, y in zip(decisions, labels, strict=True))
    tn = sum((not d) and y == 0 for d, y in zip(decisions, labels, strict=True))
    pos = sum(labels)
    neg = len(labels) - pos
    if objective == "accuracy":
        return (tp + tn) / len(labels)
    if objective == "f1":
        fp, fn = neg - tn, pos - tp
        return 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return 0.5 * (tp / pos + tn / neg)


def calibrate_threshold(
    scores: Sequence[float],
    labels: Sequence[int],
    objective: Objective = "balanced_accuracy",
    prior: float = 0.5,
) -> tuple[float, float]:
    """(threshold, objective value): the cut `score >= threshold` that best separates the labels.
    Candidates are the midpoints between neighbouring distinct scores and the lowest score (all
    yes); among equally good cuts, the one nearest `prior` (the uncalibrated default) wins."""
    if len(scores) != len(labels) or not scores:
        raise UsageError("calibration needs as many scores as labels, and at least one")
    if len(set(labels)) < 2:
        raise UsageError("calibration needs rows of both labels")
    distinct = sorted(set(scores))
    candidates = [distinct[0]] + [(a + b) / 2 for a, b in itertools.pairwise(distinct)]
    candidates.append(distinct[-1] + 1e-9)  # all no
    best: tuple[float, float] | None = None
    for threshold in candidates:
        value = rate([s >= threshold for s in scores], labels, objective)
        if (
            best is None
            or value > best[1] + 1e-12
            or (abs(value - best[1]) <= 1e-12 and abs(threshold - prior) < abs(best[0] - prior))
        ):
            best = (threshold, value)
    assert best is not None
    return best


def default_threshold(metric: Any) -> float:
    """The cut a score judge is read at before calibration: the middle of its scale."""
    for attr in ("score_range",):
        if hasattr(metric, attr):
            low, high = getattr(metric, attr)
            return (low + high) / 2
    rubric = getattr(metric, "rubrics", None)
    if isinstance(rubric, dict) and rubric:
        from assay.metrics.general.rubrics import rubric_scores

        scores = rubric_scores(rubric)
        return (scores[0] + scores[-1]) / 2
    return 0.5


def pick_fixed(pool: list[AlignedExample], k: int, balance: bool, seed: int) -> list[str]:
    """Examples shown to every row: those nearest the centre of the pool, labels taking turns."""
    vectors = [e.vector for e in pool if e.vector]
    if vectors and len(vectors) == len(pool):
        centre = [sum(column) / len(vectors) for column in zip(*vectors, strict=True)]
        chosen = nearest_examples(pool, centre, k, balance=balance)
    else:
        shuffled = list(pool)
        random.Random(seed).shuffle(shuffled)
        chosen = nearest_examples(shuffled, None, k, balance=balance)
    return [e.id for e in chosen]


__all__ = ["Objective", "calibrate_threshold", "default_threshold", "pick_fixed", "rate"]
