"""The mean of a metric over a run's rows, with its coverage; pairing and differences re-exported.

- A value counts when it reads as a number (`assay.schema.values.as_number`): numbers, bools
  as 0/1, pass/fail-like labels as 1/0 (so a judge's mean is its pass rate); anything else, and
  None (a cell that was skipped or failed), does not.
- `aggregate(values)`: the mean over the values that count, with how many rows it covers.
- `pair_rows`, `unique_ids`, `row_id`, `paired_differences` and the seeded `bootstrap_mean_ci`
  live in `assay.stats` (`pairing`, `bootstrap`) and are re-exported here, where the results,
  reports and experiments documentation names them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, NamedTuple

from assay.schema.values import as_number
from assay.stats.bootstrap import CONFIDENCE, RESAMPLES, SEED, bootstrap_mean_ci
from assay.stats.pairing import (
    Difference,
    Pair,
    Pairing,
    pair_rows,
    paired_differences,
    row_id,
    unique_ids,
)


# -- one run --------------------------------------------------------------------------------------
class Aggregate(NamedTuple):
    """A metric's mean over the rows that have a value; `coverage` = n_scored / n_rows."""

    mean: float | None
    n_scored: int
    n_rows: int
    coverage: float


def aggregate(values: Iterable[Any]) -> Aggregate:
    """One value per row (None where the cell has no value): the mean over the values that read
    as numbers (pass/fail labels as 1/0), how many those are, the rows, and the coverage."""
    rows = list(values)
    numbers = [number for number in map(as_number, rows) if number is not None]
    mean = math.fsum(numbers) / len(numbers) if numbers else None
    return Aggregate(mean, len(numbers), len(rows), len(numbers) / len(rows) if rows else 0.0)


__all__ = [
    "CONFIDENCE",
    "RESAMPLES",
    "SEED",
    "Aggregate",
    "Difference",
    "Pair",
    "Pairing",
    "aggregate",
    "bootstrap_mean_ci",
    "pair_rows",
    "paired_differences",
    "row_id",
    "unique_ids",
]
