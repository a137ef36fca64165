"""The comparison of an experiment's cohorts, as its compare page shows it.

Per criterion: its scale (a 5-point judge is 1-5, a yes/no judge or a function criterion 0-1, a
free-rubric judge the span of its scores), each cohort's mean with its 95% interval and coverage
(the same rule and seeded bootstrap as the experiment's results, `assay.schema.aggregate`), and
each other cohort's difference to a chosen baseline cohort: the mean of the paired differences
over the examples both scored, with its paired bootstrap interval (`assay.stats.pairing`).

Per example (the rows of the page): each cohort's score on one criterion, its generation's id (the
page links it to its trace) and the difference to the baseline; optionally only the examples
where one cohort scored below the baseline; paged. Only ids and values are read for every row;
answers are read for the shown page alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from assay.platform.server.storage import models
from assay.platform.server.storage.experiment_reports import ExperimentReports

SCALES = {"5-point": (1.0, 5.0), "bool": (0.0, 1.0)}


@dataclass(frozen=True)
class Cell:
    """One cohort on one criterion."""

    mean: float | None
    low: float | None
    high: float | None
    n: int
    n_scored: int
    coverage: float


@dataclass(frozen=True)
class Delta:
    """other - baseline on one criterion, over the examples both scored."""

    mean: float | None
    low: float | None
    high: float | None
    n_pairs: int
    direction: str  # none, one, higher, lower, unclear (`assay.stats.pairing.Difference`)


@dataclass
class CriterionComparison:
    name: str
    key: int
    output_type: str
    scale: tuple[float, float]
    cells: dict[str, Cell] = field(default_factory=dict)  # by cohort name
    deltas: dict[str, Delta] = field(default_factory=dict)  # by non-baseline cohort name


@dataclass
class Grid:
    """Every generation's id and every score's value of one experiment (no texts)."""

    cohorts: list[models.ExperimentCohort]
    examples: list[tuple[int, int, str]]  # (example id, position, question), by position
    trace_ids: dict[tuple[int, int], int]  # (cohort id, example id) -> trace id
    values: dict[tuple[int, int], float | None]  # (trace id, criterion key) -> ok value
    statuses: dict[tuple[int, int], str]

    def value(self, cohort_id: int, example_id: int, key: int) -> float | None:
        trace = self.trace_ids.get((cohort_id, example_id))
        return None if trace is None else self.values.get((trace, key))


def scale_of(criterion: dict[str, Any], seen: list[float]) -> tuple[float, float]:
    """The axis of a criterion: its fixed scale, else the span of what was seen, 0 included."""
    kind = "bool" if criterion.get("criteria_type") == "function" else criterion.get("output_type")
    if kind in SCALES:
        return SCALES[kind or ""]
    low, high = min([0.0, *seen]), max([1.0, *seen])
    return (math.floor(low), math.ceil(high))


class ExperimentComparison(ExperimentReports):
    """The reads of the compare page."""

    def grid(self, experiment: models.Experiment) -> Grid:
        examples = [
            (row.id, row.position, row.question)
            for row in self.session.execute(
                self._columns(
                    models.Example,
                    models.Example.id,
                    models.Example.position,
                    models.Example.question,
                )
                .where(models.Example.dataset_version_id == experiment.dataset_version_id)
                .order_by(models.Example.position)
            )
        ]
        trace_ids = {
            (row.cohort_id, row.example_id): row.id
            for row in self.session.execute(
                self._columns(
                    models.Trace, models.Trace.id, models.Trace.cohort_id, models.Trace.example_id
                ).where(models.Trace.experiment_id == experiment.id)
            )
        }
        values: dict[tuple[int, int], float | None] = {}
        statuses: dict[tuple[int, int], str] = {}
        for row in self.session.execute(
            select(
                models.Score.trace_id,
                models.Score.criteria_key,
                models.Score.status,
                models.Score.value,
            ).where(
                models.Score.project_id == self.project_id,
                models.Score.experiment_id == experiment.id,
            )
        ):
            values[(row.trace_id, row.criteria_key)] = row.value if row.status == "ok" else None
            statuses[(row.trace_id, row.criteria_key)] = row.status
        return Grid(self.cohorts(experiment), examples, trace_ids, values, statuses)

    def criteria_comparison(
        self, experiment: models.Experiment, grid: Grid, baseline: str
    ) -> list[CriterionComparison]:
        from assay.schema.aggregate import aggregate, bootstrap_mean_ci
        from assay.stats.pairing import paired_differences

        out = []
        base = next((c for c in grid.cohorts if c.name == baseline), None)
        for criterion in experiment.criteria:
            key = criterion["key"]
            columns = {
                c.name: [grid.value(c.id, e[0], key) for e in grid.examples] for c in grid.cohorts
            }
            seen = [v for column in columns.values() for v in column if v is not None]
            compared = CriterionComparison(
                name=criterion["name"],
                key=key,
                output_type=criterion.get("output_type") or "",
                scale=scale_of(criterion, seen),
            )
            for cohort in grid.cohorts:
                cells = columns[cohort.name]
                stats = aggregate(cells)
                scored = [v for v in cells if v is not None]
                low = high = None
                if len(scored) >= 2:
                    low, high = (round(x, 6) for x in bootstrap_mean_ci(scored))
                elif len(scored) == 1:
                    low = high = scored[0]
                compared.cells[cohort.name] = Cell(
                    None if stats.mean is None else round(stats.mean, 6),
                    low,
                    high,
                    stats.n_rows,
                    stats.n_scored,
                    round(stats.coverage, 6),
                )
                if base is None or cohort.id == base.id:
                    continue
                difference = paired_differences(
                    (e[0], b, o)
                    for e, b, o in zip(grid.examples, columns[base.name], cells, strict=True)
                )
                compared.deltas[cohort.name] = Delta(
                    None if difference.mean_delta is None else round(difference.mean_delta, 6),
                    None if difference.low is None else round(difference.low, 6),
                    None if difference.high is None else round(difference.high, 6),
                    difference.n_pairs,
                    difference.direction,
                )
            out.append(compared)
        return out

    def item_rows(
        self,
        grid: Grid,
        key: int,
        baseline: str,
        *,
        worse: str = "",
        offset: int = 0,
        limit: int = 25,
    ) -> tuple[list[dict[str, Any]], int]:
        """One page of examples on criterion `key` (with `worse`, only those where that cohort
        scored below the baseline) and how many examples match in all."""
        by_name = {c.name: c for c in grid.cohorts}
        base = by_name.get(baseline)
        chosen = grid.examples
        if worse and worse in by_name and base is not None:
            other = by_name[worse]
            chosen = [
                e
                for e in grid.examples
                if (o := grid.value(other.id, e[0], key)) is not None
                and (b := grid.value(base.id, e[0], key)) is not None
                and o < b
            ]
        shown = chosen[offset : offset + limit]
        wanted = [
            grid.trace_ids[(c.id, e[0])]
            for e in shown
            for c in grid.cohorts
            if (c.id, e[0]) in grid.trace_ids
        ]
        texts: dict[int, models.Trace] = {}
        if wanted:
            texts = {
                t.id: t
                for t in self.session.scalars(
                    self._select(models.Trace).where(models.Trace.id.in_(wanted))
                )
            }
        rows = []
        for example_id, position, question in shown:
            base_value = None if base is None else grid.value(base.id, example_id, key)
            cells = {}
            for cohort in grid.cohorts:
                trace_id = grid.trace_ids.get((cohort.id, example_id))
                trace = texts.get(trace_id) if trace_id is not None else None
                value = grid.value(cohort.id, example_id, key)
                status = grid.statuses.get((trace_id, key), "") if trace_id else ""
                cells[cohort.name] = {
                    "trace_id": trace_id,
                    "answer": None if trace is None else trace.output,
                    "error": None
                    if trace is None or trace.error_type is None
                    else trace.error_type,
                    "value": value,
                    "status": status or ("pending" if trace_id is None else "unscored"),
                    "delta": None
                    if value is None or base_value is None or cohort is base
                    else round(value - base_value, 6),
                }
            rows.append(
                {
                    "example_id": example_id,
                    "position": position,
                    "question": question,
                    "cells": cells,
                }
            )
        return rows, len(chosen)


__all__ = [
    "Cell",
    "CriterionComparison",
    "Delta",
    "ExperimentComparison",
    "Grid",
    "scale_of",
]
