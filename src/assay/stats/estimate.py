"""`Estimate`: a figure with its interval, the one return type of every estimator in `assay.stats`.

A figure that cannot be computed on the data (one class only, no spread, no rows) has value None,
never NaN; an interval that cannot be formed (too few rows) has low and high None.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Estimate:
    """`value` over `n` rows with its interval [`low`, `high`] found by `method`.

    `degenerate_resamples` counts the bootstrap resamples on which the statistic was undefined
    (left out of the interval)."""

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0
    method: str = ""
    degenerate_resamples: int = 0

    @property
    def interval(self) -> tuple[float, float] | None:
        """(low, high), or None when there is no interval."""
        if self.low is None or self.high is None:
            return None
        return self.low, self.high

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "n": self.n,
            "method": self.method,
            "degenerate_resamples": self.degenerate_resamples,
        }


def defined(value: Any) -> float | None:
    """`value` as a float, or None when it is None, NaN or infinite."""
    if value is None:
        return None
    number = float(value)
    return number if number == number and abs(number) != float("inf") else None


__all__ = ["Estimate", "defined"]
