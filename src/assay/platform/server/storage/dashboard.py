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
dashboard is asked to include them (`include_experiments`).

With a condition, the traces of the window that match it are first written once to a temporary
table (`dashboard_matched.narrowed` sets `matched`), and the figures read those traces by `seq`
instead of matching the condition again in each query over every trace of the window."""

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


def failed(traces: Any = T) -> Any:
    """A trace that failed: its `error` is set and not empty (as the trace list reads it)."""
    return and_(traces.error.is_not(None), traces.error != "")


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
        # the window's traces that match the condition, once `dashboard_matched.narrowed` has
        # written them to a temporary table (this, with the columns the figures read); None:
        # each query reads `logged_traces` and matches the condition itself
        self.matched: Any = None

    def condition(self) -> Any:
        """The condition and the traffic rule together (None: every trace), over any trace."""
        if self.include_experiments:
            return self.where
        return traffic() if self.where is None else and_(traffic(), self.where)

    def traces_where(self) -> Any:
        """Which of the window's traces count (None: every one), for readers of the same traces
        outside this class (the trust panel): the condition and the traffic rule, or once
        narrowed, the matched traces (the same ones, found by `seq`)."""
        if self.matched is not None:
            return T.seq.in_(select(self.matched.c.seq))
        return self.condition()

    @property
    def traces(self) -> Any:
        """What the figures read the window's traces from: `logged_traces`, or once narrowed
        the temporary table of the matching ones, under the same column names."""
        if self.matched is None:
            return T
        return aliased(T, self.matched, adapt_on_names=True)

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
        """`query` over the traces of the window that match the condition (once narrowed, a
        query over `traces` needs nothing more: it holds only those)."""
        if self.matched is not None:
            return query
        query = query.where(T.created_at >= self.window.since, T.created_at < self.window.until)
        where = self.condition()
        return query if where is None else query.where(where)

    # -- volume, errors, tokens, cost ----------------------------------------------------------------
    def volume(self) -> list[Any]:
        """Per bucket and model (None: not given), in one pass over the window: key, model,
        traces, errors, input and output tokens, cost, traces with a cost."""
        t = self.traces
        key = self.bucket(t.created_at).label("key")
        cost = cost_of(t.meta)
        query = self._in_window(
            self._columns(
                t,
                key,
                t.model,
                func.count().label("traces"),
                func.sum(case((failed(t), 1), else_=0)).label("errors"),
                func.sum(t.input_tokens).label("input_tokens"),
                func.sum(t.output_tokens).label("output_tokens"),
                func.sum(cost).label("cost"),
                func.count(cost).label("with_cost"),
            )
        )
        return list(self.session.execute(query.group_by(key, t.model)))

    # -- latency percentiles -------------------------------------------------------------------------
    def latency(self) -> tuple[dict[str, Latency], Latency | None]:
        """The latency percentiles per bucket key and of the whole window (None: no latency),
        by numpy's linear rule, in the database. PostgreSQL has it as `percentile_cont` (about 4
        times faster than ranking, measured at 100,000 traces); SQLite ranks the latencies with
        a window function and returns only the ranks the percentiles lie between."""
        if self.postgres:
            return self._percentile_cont()
        t = self.traces
        overall = self._ranks(None)
        buckets = {r.key: r.latency() for r in self._ranks(self.bucket(t.created_at))}
        return buckets, (overall[0].latency() if overall else None)

    def _percentile_cont(self) -> tuple[dict[str, Latency], Latency | None]:
        t = self.traces
        fractions: Any = literal_column(
            "ARRAY[" + ", ".join(f"{p / 100}" for p in PERCENTILES) + "]"
        )
        measured = (
            func.count(t.latency_ms).label("n"),
            func.percentile_cont(fractions).within_group(t.latency_ms).label("ms"),
        )
        key = self.bucket(t.created_at).label("key")
        rows = self.session.execute(
            self._in_window(
                self._columns(t, key, *measured).where(t.latency_ms.is_not(None))
            ).group_by(key)
        )
        buckets = {row.key: _latency(row) for row in rows}
        whole = self.session.execute(
            self._in_window(self._columns(t, *measured).where(t.latency_ms.is_not(None)))
        ).one()
        return buckets, (_latency(whole) if whole.n else None)

    def _ranks(self, key: Any) -> list[Ranked]:
        t = self.traces
        ranked = self._in_window(
            self._columns(
                t,
                (key if key is not None else literal_column("''")).label("key"),
                t.latency_ms.label("value"),
                (func.row_number().over(partition_by=key, order_by=t.latency_ms) - 1).label("i"),
                func.count().over(partition_by=key).label("n"),
            ).where(t.latency_ms.is_not(None))
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
        t = self.traces
        ranked = self._in_window(
            self._columns(
                S, self.bucket(t.created_at).label("key"), S.criterion, S.value, latest
            ).join(t, and_(t.project_id == S.project_id, t.id == S.trace_id))
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
        where = self.condition()  # the labelled trace may be older than the window
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
        E, Run, t = models.OnlineEvaluator, models.OnlineEvaluation, self.traces
        query = self._in_window(
            self._columns(Run, Run.evaluator_id, Run.status, func.count().label("n"))
            .join(E, and_(E.project_id == Run.project_id, E.id == Run.evaluator_id))
            .join(t, and_(t.project_id == Run.project_id, t.id == Run.trace_id))
            .where(Run.evaluator_version == E.version)
        )
        rows = self.session.execute(query.group_by(Run.evaluator_id, Run.status))
        return {(int(r.evaluator_id), str(r.status)): int(r.n) for r in rows}

    def matching(self, condition: Any) -> int:
        """How many of the window's traces (matching the dashboard's condition) also match
        `condition` (an evaluator's, compiled over `logged_traces`; None: all of them)."""
        if condition is None:
            query = self._in_window(self._columns(self.traces, func.count()))
        elif self.matched is not None:  # the evaluator's condition reads the traces themselves
            query = self._columns(T, func.count()).where(self.traces_where(), condition)
        else:
            query = self._in_window(self._columns(T, func.count())).where(condition)
        return int(self.session.scalar(query) or 0)


__all__ = ["PERCENTILES", "DashboardRepo", "Latency", "Ranked", "cost_of", "failed", "traffic"]
