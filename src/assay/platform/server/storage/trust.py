"""The queries behind "how far to trust a criterion's scores" (`TrustRepo`): over the traces of a
time window that match a condition, the latest score of each labelled criterion on each trace
(its value and what produced it) and, for the others, only how many latest scores each source
gave (counted in the database), the latest label of each criterion on each trace (its value, when, through
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

    def _latest(self, *columns: Any, only: list[str] | None, excluding: list[str]) -> Any:
        """The latest score of each criterion on each trace of the window (those of `only`, when
        given, and never those of `excluding`), as a subquery with `latest` = 1 on that row."""
        rank = (
            func.row_number()
            .over(
                partition_by=(S.trace_id, S.criterion), order_by=(S.created_at.desc(), S.id.desc())
            )
            .label("latest")
        )
        query = self._in_window(
            self._columns(S, *columns, rank).join(
                T, and_(T.project_id == S.project_id, T.id == S.trace_id)
            )
        )
        if only is not None:
            query = query.where(S.criterion.in_(only))
        if excluding:
            query = query.where(S.criterion.not_in(excluding))
        return query.subquery()

    def latest_scores(self, criteria: list[str]) -> list[tuple[str, str, float, str]]:
        """(trace id, criterion, value, source) of the latest score of each of `criteria` on
        each trace of the window, when that score is a number (a boolean reads 1/0)."""
        if not criteria:
            return []
        ranked = self._latest(
            S.trace_id, S.criterion, S.value, S.source, only=criteria, excluding=[]
        )
        query = select(
            ranked.c.trace_id, ranked.c.criterion, ranked.c.value, ranked.c.source
        ).where(ranked.c.latest == 1, ranked.c.value.is_not(None))
        return [
            (str(t), str(c), float(v), str(s or "")) for t, c, v, s in self.session.execute(query)
        ]

    def score_sources(
        self, only: list[str] | None, excluding: list[str]
    ) -> dict[str, dict[str, int]]:
        """Criterion -> source -> how many of the window's traces have their latest score of
        the criterion, a number, from that source: counted in the database, for the criteria
        whose scores need no row each (those without labels)."""
        ranked = self._latest(S.criterion, S.value, S.source, only=only, excluding=excluding)
        query = (
            select(ranked.c.criterion, ranked.c.source, func.count().label("n"))
            .where(ranked.c.latest == 1, ranked.c.value.is_not(None))
            .group_by(ranked.c.criterion, ranked.c.source)
        )
        found: dict[str, dict[str, int]] = {}
        for criterion, source, n in self.session.execute(query):
            found.setdefault(str(criterion), {})[str(source or "")] = int(n)
        return found

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


__all__ = ["LatestLabel", "TrustRepo"]
