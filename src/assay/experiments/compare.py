"""Comparing experiment runs: means with coverage, per-row deltas, paired bootstrap intervals.

The first run is the baseline; every other run is compared with it, metric by metric.

- A metric is a column; a row's value counts when it is a number (bools count as 0/1), a
  pass/fail-like label (pass/yes/correct 1, fail/no/incorrect 0), or a `MetricResult`-like dict
  holding one of those. Coverage = rows with a value / rows.
- A row whose function raised has no values (its stored input is not a result).
- Rows are matched by their `id` column when every row of every run has one and the ids are
  unique within each run; otherwise by position in the dataset.
- A difference is taken over the rows where both runs have a value (paired): delta = other -
  baseline per row, its mean, and a percentile bootstrap interval of that mean from resampling
  the paired rows (numpy, seeded: the same inputs always give the same interval). An interval
  that includes 0 means the data do not show a difference.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from assay.errors import UsageError
from assay.experiments.store import Experiment
from assay.schema.aggregate import aggregate
from assay.schema.values import as_number
from assay.stats.bootstrap import bootstrap_mean_ci
from assay.stats.pairing import Difference, pair_rows, paired_differences, unique_ids


def numeric(value: Any) -> float | None:
    """A row's value for a metric column: a number, a bool, a pass/fail-like label (1/0, so a
    judge's mean is its pass rate), or a stored `MetricResult` holding one of those."""
    if isinstance(value, dict) and "value" in value:
        value = value["value"]
    return as_number(value)


@dataclass
class Mean:
    experiment: str
    metric: str
    mean: float | None
    n_values: int
    n_rows: int

    @property
    def coverage(self) -> str:
        return f"{self.n_values}/{self.n_rows}"


@dataclass
class Comparison:
    experiments: list[str]
    metrics: list[str]
    matched_by: str  # "id" or "position"
    means: list[Mean]
    differences: list[Difference]
    confidence: float
    resamples: int
    seed: int

    def mean(self, experiment: str, metric: str) -> Mean:
        return next(m for m in self.means if m.experiment == experiment and m.metric == metric)

    def difference(self, other: str, metric: str) -> Difference:
        return next(d for d in self.differences if d.other == other and d.metric == metric)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["differences"] = [_difference_dict(diff) for diff in self.differences]
        return data


def _difference_dict(diff: Difference) -> dict[str, Any]:
    """A difference as `compare --json` writes it: better/worse counts, rows as objects."""
    return {
        "baseline": diff.baseline,
        "other": diff.other,
        "metric": diff.metric,
        "n_pairs": diff.n_pairs,
        "mean_delta": diff.mean_delta,
        "low": diff.low,
        "high": diff.high,
        "better": diff.better,
        "worse": diff.worse,
        "same": diff.same,
        "verdict": diff.verdict,
        "rows": [row.to_dict() for row in diff.rows],
        "includes_zero": diff.includes_zero,
    }


def scored_rows(experiment: Experiment) -> list[dict[str, Any]]:
    """The rows whose values count: a row whose function raised has none (its `input` is not a result)."""
    return [
        row if record.get("status") != "error" else {}
        for record, row in zip(experiment.records, experiment.rows, strict=True)
    ]


def numeric_columns(experiment: Experiment) -> list[str]:
    """Columns with at least one numeric value, in order of first appearance. Labels alone do not
    make a column a metric here (an input column may hold "yes"); name such a column explicitly."""
    seen: dict[str, None] = {}
    for row in scored_rows(experiment):
        seen.update(
            (key, None)
            for key, value in row.items()
            if numeric(value) is not None and not isinstance(value, str)
        )
    return list(seen)


def compare_experiments(
    experiments: Sequence[Experiment],
    metrics: Sequence[str] | None = None,
    *,
    confidence: float = 0.95,
    resamples: int = 5000,
    seed: int = 0,
) -> Comparison:
    """Compare each run after the first with the first; see the module docstring."""
    if len(experiments) < 2:
        raise UsageError("compare needs at least two experiments")
    names = [run.name for run in experiments]
    if len(set(names)) != len(names):
        raise UsageError(f"compare needs distinct experiments, got {', '.join(names)}")
    if not 0 < confidence < 1:
        raise UsageError(f"confidence must be between 0 and 1, got {confidence}")
    if resamples < 100:
        raise UsageError(f"resamples must be at least 100, got {resamples}")
    columns = [numeric_columns(run) for run in experiments]
    if metrics:
        known = sorted(set().union(*columns))
        absent = [m for m in metrics if not any(m in run_columns for run_columns in columns)]
        if absent:
            raise UsageError(
                f"no numeric column {', '.join(map(repr, absent))} in these experiments; "
                f"numeric columns: {', '.join(known) or 'none'}"
            )
        chosen = list(dict.fromkeys(metrics))
    else:
        chosen = [c for c in columns[0] if c != "id" and all(c in other for other in columns[1:])]
        if not chosen:
            raise UsageError(
                "these experiments share no numeric column to compare; name one with --metric"
            )
    by_id = unique_ids(*(run.rows for run in experiments))
    means = []
    for run in experiments:
        for metric in chosen:
            found = aggregate(numeric(row.get(metric)) for row in scored_rows(run))
            means.append(Mean(run.name, metric, found.mean, found.n_scored, found.n_rows))
    differences = [
        _difference(
            experiments[0],
            run,
            metric,
            by_id,
            confidence=confidence,
            resamples=resamples,
            seed=seed,
        )
        for run in experiments[1:]
        for metric in chosen
    ]
    return Comparison(
        names,
        chosen,
        "id" if by_id else "position",
        means,
        differences,
        confidence,
        resamples,
        seed,
    )


_VERDICTS = {
    "none": "no rows where both runs have a value",
    "one": "one paired row: too few for an interval",
    "higher": "{other} higher: CI excludes 0",
    "lower": "{other} lower: CI excludes 0",
    "unclear": "CI includes 0: no clear difference",
}


def _difference(
    base: Experiment,
    other: Experiment,
    metric: str,
    by_id: bool,
    *,
    confidence: float,
    resamples: int,
    seed: int,
) -> Difference:
    pairing = pair_rows(
        base.rows,
        other.rows,
        by_id=by_id,
        positions=([r["index"] for r in base.records], [r["index"] for r in other.records]),
    )
    mine, theirs = scored_rows(base), scored_rows(other)
    found = paired_differences(
        (
            (
                pair.key,
                numeric(mine[pair.baseline].get(metric)),
                numeric(theirs[pair.other].get(metric)),
            )
            for pair in pairing.pairs
            if pair.baseline is not None and pair.other is not None
        ),
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )
    rows = [row._replace(key=json.loads(row.key)) for row in found.rows] if by_id else found.rows
    return replace(
        found,
        metric=metric,
        baseline=base.name,
        other=other.name,
        verdict=_VERDICTS[found.direction].format(other=other.name),
        rows=rows,
    )


__all__ = [
    "Comparison",
    "Difference",
    "Mean",
    "bootstrap_mean_ci",
    "compare_experiments",
    "numeric",
]
