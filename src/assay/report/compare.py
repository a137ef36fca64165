"""Comparing runs in a report: rows paired across runs, per-metric paired differences.

Pairing, differences and the bootstrap are `assay.stats`' (`pairing`, `bootstrap`), the same as
`assay experiments compare`: rows matched by `id` when every row of both runs has a distinct
one, else by position; a difference over the rows where both runs have a number (pass/fail
labels count as 1/0), with a seeded percentile bootstrap interval of the mean difference.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from assay.report.model import Row, Run
from assay.stats.bootstrap import CONFIDENCE, RESAMPLES, SEED, bootstrap_mean_ci
from assay.stats.pairing import Difference, paired_differences
from assay.stats.pairing import pair_rows as pair_dataset_rows

_VERDICTS = {
    "none": "no row has a value in both runs",
    "one": "one paired row: too few for an interval",
    "higher": "{other} higher (interval excludes 0)",
    "lower": "{other} lower (interval excludes 0)",
    "unclear": "no clear difference (interval includes 0)",
}


def pair_rows(baseline: Run, other: Run) -> tuple[str, list[tuple[str, Row | None, Row | None]]]:
    """(matched_by, [(key, baseline row, other row)]) in baseline order, then rows only in `other`."""
    pairing = pair_dataset_rows(
        [row.fields for row in baseline.rows],
        [row.fields for row in other.rows],
        positions=([row.index for row in baseline.rows], [row.index for row in other.rows]),
    )
    pairs = []
    for pair in pairing.pairs:
        mine = baseline.rows[pair.baseline] if pair.baseline is not None else None
        theirs = other.rows[pair.other] if pair.other is not None else None
        either = mine or theirs
        assert either is not None  # a pair has a row on at least one side
        pairs.append((either.key, mine, theirs))
    return pairing.matched_by, pairs


def bootstrap_interval(deltas: list[float]) -> tuple[float, float]:
    return bootstrap_mean_ci(deltas, resamples=RESAMPLES, seed=SEED, confidence=CONFIDENCE)


def _ok_value(row: Row, metric: str) -> Any:
    cell = row.cells.get(metric)
    return cell.value if cell is not None and cell.status == "ok" else None


def difference(
    baseline: Run, other: Run, metric: str, pairs: list[tuple[str, Row | None, Row | None]]
) -> Difference:
    found = paired_differences(
        (
            (key, _ok_value(mine, metric), _ok_value(theirs, metric))
            for key, mine, theirs in pairs
            if mine is not None and theirs is not None
        ),
        confidence=CONFIDENCE,
        resamples=RESAMPLES,
        seed=SEED,
    )
    return replace(
        found,
        metric=metric,
        baseline=baseline.name,
        other=other.name,
        verdict=_VERDICTS[found.direction].format(other=other.name),
    )


__all__ = ["CONFIDENCE", "Difference", "bootstrap_interval", "difference", "pair_rows"]
