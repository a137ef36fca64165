"""What a report shows, whatever file it came from: runs of rows, each row with its metric cells.

Every loader (`load.py`) turns its source into a `Run`; the statistics (`stats.py`) and the page
(`page.py`) only ever see these types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.schema.values import NEGATIVE_LABELS, POSITIVE_LABELS, as_number


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
    usage: dict[str, Any] | None = (
        None  # summed tokens, requests and cost, when the source has them
    )
    info: dict[str, Any] = field(default_factory=dict)  # shown as key/value facts in the header
    specs: dict[str, dict[str, Any]] = field(default_factory=dict)  # metric -> spec (run dirs)

    def cells(self, metric: str) -> list[tuple[Row, Cell]]:
        return [(row, row.cells.get(metric) or Cell("missing")) for row in self.rows]


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
