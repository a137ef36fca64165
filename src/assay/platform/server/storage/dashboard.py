"""The dashboard's queries over a project's logged traces in a time window (`DashboardRepo`):
per bucket and model the volume, errors, tokens and cost; the latency ranks the percentiles are
read from; the latest score of each criterion per trace; labels per bucket; the states of the
window's traces per online evaluator and how many each one's condition matches. Every figure
is computed in SQL that SQLite and PostgreSQL both run (group by, window functions), so the rows
that cross to Python are a few per bucket, except score values (one per scored trace and
criterion, which the interval needs). `dashboard_figures.py` turns the rows into the figures.

A trace is counted in the bucket of its `created_at`; a label in the bucket of the label's own
`created_at` (labels per day are the reviewers' work), for traces matching the condition.
`cost` is the trace's `metadata.cost` when it is a JSON number, as the trace list reads it.

An experiment's generations, published as traces of the project (`experiment_traces.py`), are
not production traffic: every figure leaves them out (`experiment_id IS NULL`) unless the
dashboard is asked to include them (`include_experiments`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, bindparam, case, func, literal_column, or_, select
from sqlalchemy.orm import aliased

from assay.platform.server.conditions.dialects import JsonNumber, JsonPath
from assay.platform.server.storage import models
from assay.platform.server.storage.dashboard_window import Window
from assay.platform.server.storage.repos import ProjectScoped

T = models.LoggedTrace
# Aliases: a condition's `score.x` / `label.x` subqueries read the score and label tables
# correlated to the trace; the rows counted here must be another FROM, or they would correlate too
S, L = (
    aliased(models.TraceScore, name="counted_score"),
    aliased(models.TraceLabel, name="counted_label"),
)
PERCENTILES = (50, 95, 99)  # whole percents: the ranks they fall between are integer maths


@dataclass(frozen=True)
class Latency:
    """The percentiles (`PERCENTILES`, whole percents -> ms) of the `n` latencies of a bucket."""

    n: int
    percentiles: dict[int, float]


@dataclass(frozen=True)
class Ranked:
    """Some latencies of a bucket in rank order: `values[i]` is the i-th smallest (from 0) of
    its `n` latencies, for the ranks the percentiles lie between (SQLite's path)."""

    key: str
    n: int
    values: dict[int, float]

    def percentile(self, p: int) -> float:
        """numpy's linear rule: the value at rank (n-1)p/100, between the two ranks around it."""
        low, rest = divmod((self.n - 1) * p, 100)
        value = self.values[low]
        if rest and low + 1 < self.n:
            value += (self.values[low + 1] - value) * rest / 100
        return value

    def latency(self) -> Latency:
        return Latency(self.n, {p: self.percentile(p) for p in PERCENTILES})


def _latency(row: Any) -> Latency:
    return Latency(int(row.n), {p: float(v) for p, v in zip(PERCENTILES, row.ms, strict=True)})


def cost_of(meta: Any) -> Any:
    """`metadata.cost` as a number; NULL when it is missing or not a JSON number."""
    return JsonNumber(meta, bindparam(None, ("cost",), type_=JsonPath()))


def failed() -> Any:
    """A trace that failed: its `error` is set and not empty (as the trace list reads it)."""
    return and_(T.error.is_not(None), T.error != "")


def traffic() -> Any:
    """A trace that is production traffic, not an experiment's published generation."""
    return T.experiment_id.is_(None)


class DashboardRepo(ProjectScoped):
    def __init__(
        self,
        session: Any,
        project_id: int,
        window: Window,
        where: Any = None,
        *,
        include_experiments: bool = False,
    ) -> None:
        super().__init__(session, project_id)
        self.window, self.where = window, where
        self.include_experiments = include_experiments
        self.postgres = session.get_bind().dialect.name == "postgresql"

    def traces_where(self) -> Any:
        """The condition and the traffic rule together (None: every trace), for readers of the
        same traces outside this class (the trust panel)."""
        if self.include_experiments:
            return self.where
        return traffic() if self.where is None else and_(traffic(), self.where)

    # -- shared pieces -----------------------------------------------------------------------------
    def bucket(self, column: Any) -> Any:
        """The UTC bucket key of a timestamp, as text (`dashboard_window.KEY_FORMAT`). The format
        is a literal, not a parameter, so GROUP BY repeats the SELECT's expression exactly."""
        hourly = self.window.unit == "hour"
        if self.postgres:
            pattern = "'YYYY-MM-DD HH24'" if hourly else "'YYYY-MM-DD'"
            return func.to_char(
                func.timezone(literal_column("'UTC'"), column), literal_column(pattern)
            )
        # SQLite keeps a timestamp as 'YYYY-MM-DD HH:MM:SS.ffffff' (UTC, as stored)
        return func.substr(column, 1, literal_column("13" if hourly else "10"))

    def _in_window(self, query: Any) -> Any:
        """`query` over the traces of the window that match the condition."""
        query = query.where(T.created_at >= self.window.since, T.created_at < self.window.until)
        where = self.traces_where()
        return query if where is None else query.where(where)

    # -- volume, errors, tokens, cost ----------------------------------------------------------------
    def volume(self) -> list[Any]:
        """Per bucket and model (None: not given), in one pass over the window: key, model,
        traces, errors, input and output tokens, cost, traces with a cost."""
        key = self.bucket(T.created_at).label("key")
        cost = cost_of(T.meta)
        query = self._in_window(
            self._columns(
                T,
                key,
                T.model,
                func.count().label("traces"),
                func.sum(case((failed(), 1), else_=0)).label("errors"),
                func.sum(T.input_tokens).label("input_tokens"),
                func.sum(T.output_tokens).label("output_tokens"),
                func.sum(cost).label("cost"),
                func.count(cost).label("with_cost"),
            )
        )
        return list(self.session.execute(query.group_by(key, T.model)))

    # -- latency percentiles -------------------------------------------------------------------------
    def latency(self) -> tuple[dict[str, Latency], Latency | None]:
        """The latency percentiles per bucket key and of the whole window (None: no latency),
        by numpy's linear rule, in the database. PostgreSQL has it as `percentile_cont` (about 4
        times faster than ranking, measured at 100,000 traces); SQLite ranks the latencies with
        a window function and returns only the ranks the percentiles lie between."""
        if self.postgres:
            return self._percentile_cont()
        overall = self._ranks(None)
        buckets = {r.key: r.latency() for r in self._ranks(self.bucket(T.created_at))}
        return buckets, (overall[0].latency() if overall else None)

    def _percentile_cont(self) -> tuple[dict[str, Latency], Latency | None]:
        fractions: Any = literal_column(
            "ARRAY[" + ", ".join(f"{p / 100}" for p in PERCENTILES) + "]"
        )
        measured = (
            func.count(T.latency_ms).label("n"),
            func.percentile_cont(fractions).within_group(T.latency_ms).label("ms"),
        )
        key = self.bucket(T.created_at).label("key")
        rows = self.session.execute(
            self._in_window(
                self._columns(T, key, *measured).where(T.latency_ms.is_not(None))
            ).group_by(key)
        )
        buckets = {row.key: _latency(row) for row in rows}
        whole = self.session.execute(
            self._in_window(self._columns(T, *measured).where(T.latency_ms.is_not(None)))
        ).one()
        return buckets, (_latency(whole) if whole.n else None)

    def _ranks(self, key: Any) -> list[Ranked]:
        ranked = self._in_window(
            self._columns(
                T,
                (key if key is not None else literal_column("''")).label("key"),
                T.latency_ms.label("value"),
                (func.row_number().over(partition_by=key, order_by=T.latency_ms) - 1).label("i"),
                func.count().over(partition_by=key).label("n"),
            ).where(T.latency_ms.is_not(None))
        ).subquery()
        wanted = []
        for p in PERCENTILES:
            low = ((ranked.c.n - 1) * p).op("/")(100)  # integer division: the floor
            wanted += [ranked.c.i == low, ranked.c.i == low + 1]
        rows = self.session.execute(
            select(ranked.c.key, ranked.c.n, ranked.c.i, ranked.c.value).where(or_(*wanted))
        )
        found: dict[str, Ranked] = {}
        for row in rows:
            entry = found.setdefault(row.key, Ranked(row.key, int(row.n), {}))
            entry.values[int(row.i)] = float(row.value)
        return list(found.values())

    # -- scores and labels ----------------------------------------------------------------------------
    def score_values(self) -> list[Any]:
        """(bucket key, criterion, value) of the latest score of each criterion on each trace of
        the window, when that score is a number (a boolean reads 1/0; a categorical label or an
        error has no number and is left out)."""
        latest = (
            func.row_number()
            .over(
                partition_by=(S.trace_id, S.criterion), order_by=(S.created_at.desc(), S.id.desc())
            )
            .label("latest")
        )
        ranked = self._in_window(
            self._columns(
                S, self.bucket(T.created_at).label("key"), S.criterion, S.value, latest
            ).join(T, and_(T.project_id == S.project_id, T.id == S.trace_id))
        ).subquery()
        query = select(ranked.c.key, ranked.c.criterion, ranked.c.value).where(
            ranked.c.latest == 1, ranked.c.value.is_not(None)
        )
        return list(self.session.execute(query))

    def label_counts(self) -> list[Any]:
        """(bucket key, criterion, count) of the labels given in the window to traces matching
        the condition."""
        key = self.bucket(L.created_at).label("key")
        query = (
            self._columns(L, key, L.criterion, func.count().label("n"))
            .join(T, and_(T.project_id == L.project_id, T.id == L.trace_id))
            .where(L.created_at >= self.window.since, L.created_at < self.window.until)
        )
        where = self.traces_where()
        if where is not None:
            query = query.where(where)
        return list(self.session.execute(query.group_by(key, L.criterion)))

    # -- online evaluators' coverage ------------------------------------------------------------------
    def evaluators(self) -> list[models.OnlineEvaluator]:
        query = self._select(models.OnlineEvaluator)
        return list(self.session.scalars(query.order_by(models.OnlineEvaluator.name)))

    def evaluation_counts(self) -> dict[tuple[int, str], int]:
        """(evaluator id, state) -> how many of the window's traces (matching the condition) the
        evaluator's current version has in that state (pending, scored, error, skipped_budget,
        superseded)."""
        E, Run = models.OnlineEvaluator, models.OnlineEvaluation
        query = self._in_window(
            self._columns(Run, Run.evaluator_id, Run.status, func.count().label("n"))
            .join(E, and_(E.project_id == Run.project_id, E.id == Run.evaluator_id))
            .join(T, and_(T.project_id == Run.project_id, T.id == Run.trace_id))
            .where(Run.evaluator_version == E.version)
        )
        rows = self.session.execute(query.group_by(Run.evaluator_id, Run.status))
        return {(int(r.evaluator_id), str(r.status)): int(r.n) for r in rows}

    def matching(self, condition: Any) -> int:
        """How many of the window's traces (matching the dashboard's condition) also match
        `condition` (an evaluator's, compiled; None: all of them)."""
        query = self._in_window(self._columns(T, func.count()))
        if condition is not None:
            query = query.where(condition)
        return int(self.session.scalar(query) or 0)


__all__ = ["PERCENTILES", "DashboardRepo", "Latency", "Ranked", "cost_of", "failed", "traffic"]
