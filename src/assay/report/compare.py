"""Comparing runs in a report: rows paired across runs, per-metric paired differences.

Rows are matched by `id` when every row of both runs has a distinct one, else by position.
A difference is taken over the rows where both runs have a number (pass/fail labels count as
1/0): mean of (other - baseline) with a percentile bootstrap interval, computed by the same
function as `assay experiments compare`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from assay.experiments.compare import bootstrap_mean_ci
from assay.report.load import unique_ids
from assay.report.model import Row, Run, as_number

CONFIDENCE = 0.95
RESAMPLES = 5000
SEED = 0


@dataclass
class Difference:
    metric: str
    baseline: str
    other: str
    n_pairs: int
    mean_delta: float | None
    low: float | None
    high: float | None
    higher: int  # paired rows where the other run scored higher
    lower: int
    same: int
    verdict: str
    rows: list[tuple[str, float, float]] = field(default_factory=list)  # (row key, baseline, other)


def pair_rows(baseline: Run, other: Run) -> tuple[str, list[tuple[str, Row | None, Row | None]]]:
    """(matched_by, [(key, baseline row, other row)]) in baseline order, then rows only in `other`."""
    by_id = unique_ids([r.fields for r in baseline.rows]) and unique_ids([r.fields for r in other.rows])

    def key(row: Row) -> str:
        return json.dumps(row.fields["id"], sort_keys=True, default=str) if by_id else str(row.index)

    theirs = {key(row): row for row in other.rows}
    pairs: list[tuple[str, Row | None, Row | None]] = [(row.key, row, theirs.pop(key(row), None))
                                                       for row in baseline.rows]
    pairs += [(row.key, None, row) for row in theirs.values()]
    return ("id" if by_id else "position"), pairs


def bootstrap_interval(deltas: list[float]) -> tuple[float, float]:
    return bootstrap_mean_ci(deltas, resamples=RESAMPLES, seed=SEED, confidence=CONFIDENCE)


def difference(baseline: Run, other: Run, metric: str,
               pairs: list[tuple[str, Row | None, Row | None]]) -> Difference:
    rows = []
    for key, mine, theirs in pairs:
        if mine is None or theirs is None:
            continue
        a_cell, b_cell = mine.cells.get(metric), theirs.cells.get(metric)
        if a_cell is None or b_cell is None or a_cell.status != "ok" or b_cell.status != "ok":
            continue
        a, b = as_number(a_cell.value), as_number(b_cell.value)
        if a is not None and b is not None:
            rows.append((key, a, b))
    deltas = [b - a for _, a, b in rows]
    mean = sum(deltas) / len(deltas) if deltas else None
    low = high = None
    if len(deltas) >= 2:
        low, high = bootstrap_interval(deltas)
    if not deltas:
        verdict = "no row has a value in both runs"
    elif low is None or high is None:
        verdict = "one paired row: too few for an interval"
    elif low > 0:
        verdict = f"{other.name} higher (interval excludes 0)"
    elif high < 0:
        verdict = f"{other.name} lower (interval excludes 0)"
    else:
        verdict = "no clear difference (interval includes 0)"
    rows.sort(key=lambda item: -abs(item[2] - item[1]))
    return Difference(metric, baseline.name, other.name, len(deltas), mean, low, high,
                      higher=sum(d > 0 for d in deltas), lower=sum(d < 0 for d in deltas),
                      same=sum(d == 0 for d in deltas), verdict=verdict, rows=rows)


__all__ = ["CONFIDENCE", "Difference", "bootstrap_interval", "difference", "pair_rows"]
