"""Comparing runs in a report: rows paired across runs, per-metric paired differences.

Pairing, differences and the bootstrap are `assay.schema.aggregate`'s, the same as
`assay experiments compare`: rows matched by `id` when every row of both runs has a distinct
one, else by position; a difference over the rows where both runs have a number (pass/fail
labels count as 1/0), with a seeded percentile bootstrap interval of the mean difference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.report.model import Row, Run
from assay.schema import aggregate

CONFIDENCE = aggregate.CONFIDENCE
RESAMPLES = aggregate.RESAMPLES
SEED = aggregate.SEED

_VERDICTS = {
    "none": "no row has a value in both runs",
    "one": "one paired row: too few for an interval",
    "higher": "{other} higher (interval excludes 0)",
    "lower": "{other} lower (interval excludes 0)",
    "unclear": "no clear difference (interval includes 0)",
}


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
    pairing = aggregate.pair_rows(
        [row.fields for row in baseline.rows],
        [row.fields for row in other.rows],
        positions=([row.index for row in baseline.rows], [row.index for row in other.rows]),
    )
    pairs = []
    for pair in pairing.pairs:
        mine = baseline.rows[pair.baseline] if pair.baseline is not None else None
        theirs = other.rows[pair.other] if pair.other is not None else None
        pairs.append(((mine or theirs).key, mine, theirs))
    return pairing.matched_by, pairs


def bootstrap_interval(deltas: list[float]) -> tuple[float, float]:
    return aggregate.bootstrap_mean_ci(
        deltas, resamples=RESAMPLES, seed=SEED, confidence=CONFIDENCE
    )


def _ok_value(row: Row, metric: str) -> Any:
    cell = row.cells.get(metric)
    return cell.value if cell is not None and cell.status == "ok" else None


def difference(
    baseline: Run, other: Run, metric: str, pairs: list[tuple[str, Row | None, Row | None]]
) -> Difference:
    found = aggregate.paired_differences(
        (
            (key, _ok_value(mine, metric), _ok_value(theirs, metric))
            for key, mine, theirs in pairs
            if mine is not None and theirs is not None
        ),
        confidence=CONFIDENCE,
        resamples=RESAMPLES,
        seed=SEED,
    )
    return Difference(
        metric,
        baseline.name,
        other.name,
        found.n_pairs,
        found.mean,
        found.low,
        found.high,
        higher=found.higher,
        lower=found.lower,
        same=found.same,
        verdict=_VERDICTS[found.direction].format(other=other.name),
        rows=found.rows,
    )


__all__ = ["CONFIDENCE", "Difference", "bootstrap_interval", "difference", "pair_rows"]
