"""What a report shows, whatever file it came from: runs of rows, each row with its metric cells.

Every loader (`load.py`) turns its source into a `Run`; the statistics (`stats.py`) and the page
(`page.py`) only ever see these types.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

# Labels that read as a score: a pass/fail judge's mean is then its pass rate.
POSITIVE_LABELS = frozenset({"pass", "passed", "yes", "true", "correct", "success", "aligned"})
NEGATIVE_LABELS = frozenset({"fail", "failed", "no", "false", "incorrect", "failure", "misaligned"})


@dataclass
class Cell:
    """One metric's outcome on one row. `status` is ok, skipped, error, or missing (never run)."""

    status: str
    value: Any = None
    reason: str | None = None
    details: Any = None
    usage: dict[str, Any] | None = None
    attempts: int | None = None
    raw: str | None = None


@dataclass
class Row:
    """One input row: its fields (inputs and outputs of the app) and one cell per metric."""

    index: int
    key: str
    fields: dict[str, Any]
    cells: dict[str, Cell]
    error: str | None = None  # an experiment row whose function raised


@dataclass
class Run:
    """One results source: an evaluation results file, a run directory or an experiment."""

    name: str
    kind: str
    path: str
    metrics: list[str]
    rows: list[Row]
    usage: dict[str, Any] | None = None  # summed tokens, requests and cost, when the source has them
    info: dict[str, Any] = field(default_factory=dict)  # shown as key/value facts in the header

    def cells(self, metric: str) -> list[tuple[Row, Cell]]:
        return [(row, row.cells.get(metric) or Cell("missing")) for row in self.rows]


def as_number(value: Any) -> float | None:
    """A cell value as a number: numbers as they are, bools as 0/1, pass/fail-like labels as 1/0."""
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


def add_usage(total: dict[str, Any] | None, usage: dict[str, Any] | None) -> dict[str, Any] | None:
    """Sum two usage dicts (tokens, requests, cost); None stands for "unknown"."""
    if not usage:
        return total
    merged = dict(total or {})
    for key, amount in usage.items():
        if isinstance(amount, (int, float)) and not isinstance(amount, bool):
            merged[key] = merged.get(key, 0) + amount
    return merged


__all__ = ["NEGATIVE_LABELS", "POSITIVE_LABELS", "Cell", "Row", "Run", "add_usage", "as_number"]
