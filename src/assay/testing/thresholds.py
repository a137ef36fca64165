"""Thresholds written as text: ">=0.80", "> 0.5", "<=0.1", "<0.2"; a bare number means ">=".

A threshold says which side of a number a metric's mean must be on. "Above" thresholds (`>=`, `>`)
are cleared by high scores, "below" thresholds (`<=`, `<`) by low ones (an error rate, a cost).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from assay.errors import UsageError

_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}
_PATTERN = re.compile(r"^\s*(>=|<=|>|<|≥|≤)?\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$")
_UNICODE = {"≥": ">=", "≤": "<="}


@dataclass(frozen=True)
class Threshold:
    op: str  # one of >=, >, <=, <
    value: float

    @property
    def upward(self) -> bool:
        """True when higher scores are better (`>=`, `>`)."""
        return self.op in (">=", ">")

    def cleared_by(self, number: float) -> bool:
        return _OPERATORS[self.op](number, self.value)

    def __str__(self) -> str:
        return f"{self.op}{self.value:g}"


def parse_threshold(spec: Any, *, metric: str = "threshold") -> Threshold:
    """A `Threshold` from ">=0.8"-style text, a number (read as ">="), or a `Threshold`."""
    if isinstance(spec, Threshold):
        return spec
    if isinstance(spec, bool):
        raise UsageError(
            f"{metric}: a threshold must be a number or text like '>=0.8', got {spec!r}"
        )
    if isinstance(spec, (int, float)):
        if not math.isfinite(spec):
            raise UsageError(f"{metric}: a threshold must be finite, got {spec!r}")
        return Threshold(">=", float(spec))
    if isinstance(spec, str):
        match = _PATTERN.match(spec)
        if match:
            op = _UNICODE.get(match.group(1) or ">=", match.group(1) or ">=")
            return Threshold(op, float(match.group(2)))
    raise UsageError(
        f"{metric}: threshold {spec!r} is not one of '>=X', '>X', '<=X', '<X' or a number"
    )


__all__ = ["Threshold", "parse_threshold"]
