"""Losses for prompt optimization. Each says whether a higher value is better, so an optimizer
never has to guess (Ragas keeps the candidate with the largest loss, the worst one under MSE)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from assay.errors import UsageError


class Loss:
    """`loss(predicted, actual)` over paired values; `higher_is_better` says which way is up.
    `needs_decisions`: the loss compares yes/no decisions (scores are thresholded first)."""

    higher_is_better: ClassVar[bool] = False
    needs_decisions: ClassVar[bool] = False

    def __call__(self, predicted: Sequence[float], actual: Sequence[float]) -> float:
        if len(predicted) != len(actual):
            raise UsageError(
                f"{type(self).__name__}: {len(predicted)} predictions for {len(actual)} labels"
            )
        if not predicted:
            raise UsageError(f"{type(self).__name__}: no predictions to compare")
        return self.compute([float(p) for p in predicted], [float(a) for a in actual])

    def compute(self, predicted: list[float], actual: list[float]) -> float:
        raise NotImplementedError

    def better(self, candidate: float, incumbent: float) -> bool:
        """Is `candidate` strictly better than `incumbent` under this loss?"""
        if math.isnan(incumbent):
            return not math.isnan(candidate)
        return candidate > incumbent if self.higher_is_better else candidate < incumbent

    def best_index(self, values: Sequence[float]) -> int:
        """Index of the best value (the first among equals)."""
        best = 0
        for index, value in enumerate(values):
            if self.better(value, values[best]):
                best = index
        return best


@dataclass
class MSELoss(Loss):
    """Mean squared error; lower is better."""

    reduction: Literal["mean", "sum"] = "mean"

    def compute(self, predicted: list[float], actual: list[float]) -> float:
        total = sum((p - a) ** 2 for p, a in zip(predicted, actual, strict=True))
        return total / len(actual) if self.reduction == "mean" else total


@dataclass
class HuberLoss(Loss):
    """Squared error within `delta`, linear beyond (less swayed by a few wild scores); lower is better."""

    delta: float = 1.0
    reduction: Literal["mean", "sum"] = "mean"

    def __post_init__(self) -> None:
        if not self.delta > 0:
            raise UsageError(f"HuberLoss delta must be positive, got {self.delta!r}")

    def compute(self, predicted: list[float], actual: list[float]) -> float:
        total = 0.0
        for p, a in zip(predicted, actual, strict=True):
            error = abs(p - a)
            total += (
                0.5 * error**2 if error <= self.delta else self.delta * (error - 0.5 * self.delta)
            )
        return total / len(actual) if self.reduction == "mean" else total


@dataclass
class BinaryMetricLoss(Loss):
    """Accuracy or F1 of yes/no decisions against yes/no labels; higher is better."""

    metric: Literal["accuracy", "f1"] = "accuracy"
    higher_is_better: ClassVar[bool] = True
    needs_decisions: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.metric not in ("accuracy", "f1"):
            raise UsageError(
                f"BinaryMetricLoss metric must be 'accuracy' or 'f1', got {self.metric!r}"
            )

    def compute(self, predicted: list[float], actual: list[float]) -> float:
        pairs = list(zip((p >= 0.5 for p in predicted), (a >= 0.5 for a in actual), strict=True))
        if self.metric == "accuracy":
            return sum(p == a for p, a in pairs) / len(pairs)
        tp = sum(p and a for p, a in pairs)
        fp = sum(p and not a for p, a in pairs)
        fn = sum(a and not p for p, a in pairs)
        return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


__all__ = ["BinaryMetricLoss", "HuberLoss", "Loss", "MSELoss"]
