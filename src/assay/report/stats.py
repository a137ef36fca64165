"""Per-metric aggregates of a run: mean with coverage (`assay.schema.aggregate`), counts, value
distribution, grouped problems."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from assay.report.model import Run, add_usage, as_number
from assay.schema.aggregate import aggregate


@dataclass
class Problem:
    """One distinct skip reason or error message, and the rows it happened on."""

    message: str
    rows: list[str] = field(default_factory=list)


@dataclass
class MetricStats:
    name: str
    n_rows: int
    n_ok: int
    n_skipped: int
    n_error: int
    n_missing: int
    numbers: list[float]  # the ok cells that read as numbers
    labels: Counter  # ok cells holding text labels
    mean: float | None
    from_labels: bool  # the mean is a pass rate read from labels
    errors: list[Problem]
    skips: list[Problem]
    usage: dict[str, Any] | None

    @property
    def coverage(self) -> float:
        return self.n_ok / self.n_rows if self.n_rows else 0.0

    @property
    def coverage_text(self) -> str:
        return f"{self.n_ok}/{self.n_rows}"


def _group(found: list[tuple[str, str]]) -> list[Problem]:
    groups: dict[str, Problem] = {}
    for message, row in found:
        groups.setdefault(message, Problem(message)).rows.append(row)
    return sorted(groups.values(), key=lambda problem: -len(problem.rows))


def metric_stats(run: Run, metric: str) -> MetricStats:
    numbers: list[float] = []
    labels: Counter[str] = Counter()
    errors: list[tuple[str, Any]] = []  # (message, row key)
    skips: list[tuple[str, Any]] = []
    usage: dict[str, Any] | None = None
    counts: Counter[str] = Counter()
    cells = run.cells(metric)
    for row, cell in cells:
        counts[cell.status] += 1
        usage = add_usage(usage, cell.usage)
        if cell.status == "ok":
            if isinstance(cell.value, str):
                labels[cell.value] += 1
            number = as_number(cell.value)
            if number is not None:
                numbers.append(number)
        elif cell.status == "error":
            errors.append((cell.reason or "error (no message)", row.key))
        elif cell.status == "skipped":
            skips.append((cell.reason or "skipped (no reason given)", row.key))
    from_labels = bool(labels) and len(numbers) == counts["ok"]  # every label read as pass/fail
    return MetricStats(
        name=metric,
        n_rows=len(run.rows),
        n_ok=counts["ok"],
        n_skipped=counts["skipped"],
        n_error=counts["error"],
        n_missing=counts["missing"],
        numbers=numbers,
        labels=labels,
        mean=aggregate(cell.value if cell.status == "ok" else None for _, cell in cells).mean,
        from_labels=from_labels,
        errors=_group(errors),
        skips=_group(skips),
        usage=usage,
    )


def histogram(numbers: list[float], bins: int = 10) -> tuple[list[tuple[float, float, int]], bool]:
    """Equal-width bins over [0, 1] when every value is in it (most scores), else over the data's
    range. Returns (low, high, count) per bin and whether the unit range was used."""
    if not numbers:
        return [], True
    low, high = min(numbers), max(numbers)
    unit = low >= -1e-9 and high <= 1.0 + 1e-9  # rounding may put a perfect score a hair above 1
    if unit:
        low, high = 0.0, 1.0
    elif low == high:
        low, high = low - 0.5, high + 0.5
    width = (high - low) / bins
    counts = [0] * bins
    for value in numbers:
        position = min(bins - 1, max(0, int(round((value - low) / width, 9))))
        counts[position] += 1
    return [(low + i * width, low + (i + 1) * width, counts[i]) for i in range(bins)], unit


def format_number(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.{digits}f}"


def format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_number(value)
    if isinstance(value, list):
        return ", ".join(format_value(item) for item in value)
    return "" if value is None else str(value)


__all__ = ["MetricStats", "Problem", "format_number", "format_value", "histogram", "metric_stats"]
