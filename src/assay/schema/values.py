"""Reading a stored metric value as a number, shared by the report and experiment comparisons."""

from __future__ import annotations

import math
from typing import Any

# Labels that read as a score: a pass/fail judge's mean is then its pass rate.
POSITIVE_LABELS = frozenset({"pass", "passed", "yes", "true", "correct", "success", "aligned"})
NEGATIVE_LABELS = frozenset({"fail", "failed", "no", "false", "incorrect", "failure", "misaligned"})


def as_number(value: Any) -> float | None:
    """A cell value as a number: numbers as they are, bools as 0/1, pass/fail-like labels as 1/0;
    anything else (and NaN or infinity) is None."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        number = float(value)
        return number if math.isfinite(number) else None
    if isinstance(value, str):
        label = value.strip().lower()
        if label in POSITIVE_LABELS:
            return 1.0
        if label in NEGATIVE_LABELS:
            return 0.0
    return None


__all__ = ["NEGATIVE_LABELS", "POSITIVE_LABELS", "as_number"]
