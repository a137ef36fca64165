"""The one pairing rule for two runs' rows, and the paired difference of a metric between them.

- `pair_rows(baseline, other)`: rows matched by `id` when every row of both runs has one and no
  two rows of a run share one (`unique_ids`), else by position. Rows missing in either run are
  kept as half-pairs (index None) so callers can count them; they never enter a difference.
- `paired_differences(pairs)`: over the pairs where both values read as numbers
  (`assay.schema.values.as_number`: pass/fail labels as 1/0), delta = other - baseline per row,
  its mean and the seeded paired bootstrap interval of that mean (`bootstrap_mean_ci`), as one
  `Difference`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from assay.schema.values import as_number
from assay.stats.bootstrap import CONFIDENCE, RESAMPLES, SEED, bootstrap_mean_ci


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

    @property
    def matched(self) -> list[Pair]:
        """The pairs with a row in both runs."""
        return [pair for pair in self.pairs if pair.baseline is not None and pair.other is not None]

    @property
    def left_out(self) -> int:
        """How many rows are in one run only."""
        return len(self.pairs) - len(self.matched)


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


class Change(NamedTuple):
    """One paired row of a difference: (key, baseline value, other value).

    Read as a tuple, by attribute, or by name (`row["key"]`, `row["delta"]`: the dict form of
    `assay experiments compare` rows, kept working)."""

    key: Any
    baseline: float
    other: float

    @property
    def delta(self) -> float:
        return self.other - self.baseline

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, str):
            return getattr(self, item)
        return tuple.__getitem__(self, item)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "baseline": self.baseline,
            "other": self.other,
            "delta": self.delta,
        }


@dataclass(frozen=True)
class Difference:
    """other - baseline of one metric over the rows where both runs have a value.

    `mean` is kept as another name for `mean_delta` (the name `assay.schema.aggregate` used);
    `better`/`worse` for `higher`/`lower` (the names of `assay experiments compare`)."""

    n_pairs: int
    mean_delta: float | None
    low: float | None  # the bootstrap interval of the mean; None below two pairs
    high: float | None
    higher: int  # pairs where `other` is higher
    lower: int
    same: int
    rows: list[Change] = field(default_factory=list)  # biggest |delta| first
    metric: str = ""
    baseline: str = ""
    other: str = ""
    verdict: str = ""  # the direction in words, as the surface showing it says it

    @property
    def mean(self) -> float | None:
        return self.mean_delta

    @property
    def better(self) -> int:
        return self.higher

    @property
    def worse(self) -> int:
        return self.lower

    @property
    def includes_zero(self) -> bool | None:
        if self.low is None or self.high is None:
            return None
        return self.low <= 0 <= self.high

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
) -> Difference:
    """`pairs` = (key, baseline value, other value); a pair counts only when both values read as
    numbers."""
    rows = []
    for key, mine, theirs in pairs:
        a, b = as_number(mine), as_number(theirs)
        if a is not None and b is not None:
            rows.append(Change(key, a, b))
    deltas = [b - a for _, a, b in rows]
    low = high = None
    if len(deltas) >= 2:
        low, high = bootstrap_mean_ci(deltas, resamples=resamples, seed=seed, confidence=confidence)
    rows.sort(key=lambda row: -abs(row[2] - row[1]))
    return Difference(
        n_pairs=len(deltas),
        mean_delta=math.fsum(deltas) / len(deltas) if deltas else None,
        low=low,
        high=high,
        higher=sum(d > 0 for d in deltas),
        lower=sum(d < 0 for d in deltas),
        same=sum(d == 0 for d in deltas),
        rows=rows,
    )


__all__ = [
    "Change",
    "Difference",
    "Pair",
    "Pairing",
    "pair_rows",
    "paired_differences",
    "row_id",
    "unique_ids",
]
