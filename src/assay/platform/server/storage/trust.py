"""The queries behind "how far to trust a criterion's scores" (`TrustRepo`): over the traces of a
time window that match a condition, the latest score of each criterion on each trace (its value
and what produced it), the latest label of each criterion on each trace (its value, when, through
which queue, and the chance that queue's sampling gave the trace), the saved criteria and the
online evaluators that name a score's producer.

Kept apart from the dashboard's own queries (`dashboard.py`) on purpose: these rows are one per
scored or labelled trace, which the estimates corrected by labels and the agreement test need,
and they are read only for the trust panels. `trust_figures.py` turns them into figures.

The counted score and label rows are aliases, as in `dashboard.py`: a condition's `score.x` /
`label.x` subqueries are correlated to the trace and would otherwise take these rows for theirs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.orm import aliased

from assay.platform.server.storage import models
from assay.platform.server.storage.dashboard_window import Window
from assay.platform.server.storage.repos import ProjectScoped

T = models.LoggedTrace
S, L, Item = (
    aliased(models.TraceScore, name="trust_score"),
    aliased(models.TraceLabel, name="trust_label"),
    aliased(models.ReviewQueueItem, name="trust_item"),
)


@dataclass(frozen=True)
class LatestScore:
    """A criterion's latest score on one trace: a number (None for a categorical label, a
    skipped or failed score) and its `source` (`judge:<model>`, `evaluator:<name>@v<n>`, ...)."""

    trace_id: str
    criterion: str
    value: float | None
    source: str


@dataclass(frozen=True)
class LatestLabel:
    """A person's latest label of a criterion on one trace; `inclusion_probability` is the
    chance the labelling queue's sampling kept the trace (None: not through a queue, or a queue
    that has not decided it)."""

    trace_id: str
    criterion: str
    value: Any
    created_at: datetime
    queue_id: int | None
    inclusion_probability: float | None


class TrustRepo(ProjectScoped):
    def __init__(self, session: Any, project_id: int, window: Window, where: Any = None) -> None:
        super().__init__(session, project_id)
        self.window, self.where = window, where

    def _in_window(self, query: Any) -> Any:
        query = query.where(T.created_at >= self.window.since, T.created_at < self.window.until)
        return query if self.where is None else query.where(self.where)

    def latest_scores(self, criterion: str | None = None) -> list[LatestScore]:
        """The latest score of each criterion (or of `criterion` only) on each trace of the
        window, whatever its kind: the caller keeps the numbers."""
        rank = (
            func.row_number()
            .over(
                partition_by=(S.trace_id, S.criterion), order_by=(S.created_at.desc(), S.id.desc())
            )
            .label("latest")
        )
        query = self._in_window(
            self._columns(S, S.trace_id, S.criterion, S.value, S.source, rank).join(
                T, and_(T.project_id == S.project_id, T.id == S.trace_id)
            )
        )
        if criterion is not None:
            query = query.where(S.criterion == criterion)
        ranked = query.subquery()
        rows = self.session.execute(
            select(ranked.c.trace_id, ranked.c.criterion, ranked.c.value, ranked.c.source).where(
                ranked.c.latest == 1
            )
        )
        return [
            LatestScore(
                str(r.trace_id),
                str(r.criterion),
                None if r.value is None else float(r.value),
                str(r.source or ""),
            )
            for r in rows
        ]

    def latest_labels(self, criterion: str | None = None) -> list[LatestLabel]:
        """The latest label of each criterion (or of `criterion` only) on each trace of the
        window, with the inclusion probability of the queue item it was given through."""
        rank = (
            func.row_number()
            .over(
                partition_by=(L.trace_id, L.criterion), order_by=(L.created_at.desc(), L.id.desc())
            )
            .label("latest")
        )
        query = self._in_window(
            self._columns(L, L.trace_id, L.criterion, L.value, L.created_at, L.queue_id, rank).join(
                T, and_(T.project_id == L.project_id, T.id == L.trace_id)
            )
        )
        if criterion is not None:
            query = query.where(L.criterion == criterion)
        ranked = query.subquery()
        joined = select(
            ranked.c.trace_id,
            ranked.c.criterion,
            ranked.c.value,
            ranked.c.created_at,
            ranked.c.queue_id,
            Item.inclusion_probability,
        ).outerjoin(
            Item,
            and_(
                Item.project_id == self.project_id,
                Item.queue_id == ranked.c.queue_id,
                Item.trace_id == ranked.c.trace_id,
            ),
        )
        rows = self.session.execute(joined.where(ranked.c.latest == 1))
        return [
            LatestLabel(
                str(r.trace_id),
                str(r.criterion),
                r.value,
                r.created_at,
                None if r.queue_id is None else int(r.queue_id),
                None if r.inclusion_probability is None else float(r.inclusion_probability),
            )
            for r in rows
        ]

    def criteria(self, names: list[str]) -> dict[str, models.Criteria]:
        """The project's saved criteria of these names."""
        C = models.Criteria
        return {c.name: c for c in self.session.scalars(self._select(C).where(C.name.in_(names)))}

    def evaluator_judges(self, names: list[str]) -> dict[str, str]:
        """Online evaluator name -> its judge model, for the evaluators of these names."""
        E = models.OnlineEvaluator
        query = self._columns(E, E.name, E.judge_model).where(E.name.in_(names))
        return {str(r.name): str(r.judge_model or "") for r in self.session.execute(query)}


__all__ = ["LatestLabel", "LatestScore", "TrustRepo"]
