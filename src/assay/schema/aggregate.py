"""Aggregates and paired comparisons of per-row values, shared by results, reports and experiments.

- A value counts when it reads as a number (`assay.schema.values.as_number`): numbers, bools
  as 0/1, pass/fail-like labels as 1/0 (so a judge's mean is its pass rate); anything else, and
  None (a cell that was skipped or failed), does not.
- `aggregate(values)`: the mean over the values that count, with how many rows it covers.
- `pair_rows(baseline, other)`: rows of two runs matched by `id` when every row of both runs has
  one and no two rows of a run share one, else by position.
- `paired_differences(pairs)`: over the pairs where both values count, delta = other - baseline
  per row, its mean, and a seeded percentile bootstrap interval of that mean
  (`bootstrap_mean_ci`: the same inputs and seed always give the same interval).
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from assay.schema.values import as_number

CONFIDENCE = 0.95
RESAMPLES = 5000
SEED = 0


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


# -- pairing two runs -------------------------------------------------------------------------------
def row_id(row: Mapping[str, Any]) -> str:
    """A row's `id` as a comparable key (ids may be any JSON value)."""
    return json.dumps(row["id"], sort_keys=True, default=str)


def unique_ids(*runs: Sequence[Mapping[str, Any]]) -> bool:
    """True when every run has rows, every row an `id`, and no two rows of one run the same id."""
    for rows in runs:
        if not rows or any(row.get("id") is None for row in rows):
            return False
        ids = [row_id(row) for row in rows]
        if len(set(ids)) != len(ids):
            return False
    return True


class Pair(NamedTuple):
    """One matched row: its key (the id as JSON, or the position) and its index in each run."""

    key: Hashable
    baseline: int | None  # None: the row is only in `other`
    other: int | None  # None: the row is only in `baseline`


@dataclass(frozen=True)
class Pairing:
    matched_by: str  # "id" or "position"
    pairs: list[Pair]  # in baseline order, then the rows only in `other`


def pair_rows(
    baseline: Sequence[Mapping[str, Any]],
    other: Sequence[Mapping[str, Any]],
    *,
    positions: tuple[Sequence[Hashable], Sequence[Hashable]] | None = None,
    by_id: bool | None = None,
) -> Pairing:
    """Match the rows of `other` to those of `baseline`: by `id` when `unique_ids(baseline, other)`
    (or as `by_id` says, e.g. decided over more than two runs), else by position (`positions`
    gives each run's row positions when they are not 0, 1, 2, ...)."""
    if by_id is None:
        by_id = unique_ids(baseline, other)
    if by_id:
        keys_a: Sequence[Hashable] = [row_id(row) for row in baseline]
        keys_b: Sequence[Hashable] = [row_id(row) for row in other]
    elif positions is not None:
        keys_a, keys_b = positions
    else:
        keys_a, keys_b = range(len(baseline)), range(len(other))
    theirs = {key: index for index, key in enumerate(keys_b)}
    pairs = [Pair(key, index, theirs.pop(key, None)) for index, key in enumerate(keys_a)]
    pairs += [Pair(key, None, index) for key, index in theirs.items()]
    return Pairing("id" if by_id else "position", pairs)


# -- paired differences -------------------------------------------------------------------------
def bootstrap_mean_ci(
    deltas: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile interval of the mean of `deltas` over `resamples` resamples with replacement."""
    import numpy as np

    values = np.asarray(deltas, dtype=float)
    rng = np.random.default_rng(seed)
    means = []
    chunk = max(1, min(resamples, 2_000_000 // max(1, len(values))))  # bounded memory for long runs
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        means.append(values[rng.integers(0, len(values), size=(size, len(values)))].mean(axis=1))
    alpha = 1 - confidence
    low, high = np.quantile(np.concatenate(means), [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


@dataclass(frozen=True)
class PairedDifference:
    """other - baseline over the rows where both have a value."""

    n_pairs: int
    mean: float | None
    low: float | None  # the bootstrap interval of the mean; None below two pairs
    high: float | None
    higher: int  # pairs where `other` is higher
    lower: int
    same: int
    rows: list[tuple[Any, float, float]] = field(
        default_factory=list
    )  # (key, baseline, other), biggest |delta| first

    @property
    def direction(self) -> str:
        """ "none" (no pair), "one" (too few for an interval), "higher" or "lower" (the interval
        excludes 0), or "unclear" (it includes 0)."""
        if not self.n_pairs:
            return "none"
        if self.low is None or self.high is None:
            return "one"
        if self.low > 0:
            return "higher"
        if self.high < 0:
            return "lower"
        return "unclear"


def paired_differences(
    pairs: Iterable[tuple[Any, Any, Any]],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> PairedDifference:
    """`pairs` = (key, baseline value, other value); values read as `aggregate` reads them, and a
    pair counts only when both do."""
    rows = []
    for key, mine, theirs in pairs:
        a, b = as_number(mine), as_number(theirs)
        if a is not None and b is not None:
            rows.append((key, a, b))
    deltas = [b - a for _, a, b in rows]
    low = high = None
    if len(deltas) >= 2:
        low, high = bootstrap_mean_ci(deltas, resamples=resamples, seed=seed, confidence=confidence)
    rows.sort(key=lambda row: -abs(row[2] - row[1]))
    return PairedDifference(
        n_pairs=len(deltas),
        mean=math.fsum(deltas) / len(deltas) if deltas else None,
        low=low,
        high=high,
        higher=sum(d > 0 for d in deltas),
        lower=sum(d < 0 for d in deltas),
        same=sum(d == 0 for d in deltas),
        rows=rows,
    )


__all__ = [
    "CONFIDENCE",
    "RESAMPLES",
    "SEED",
    "Aggregate",
    "Pair",
    "PairedDifference",
    "Pairing",
    "aggregate",
    "bootstrap_mean_ci",
    "pair_rows",
    "paired_differences",
    "row_id",
    "unique_ids",
]
