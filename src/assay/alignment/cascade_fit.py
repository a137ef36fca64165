"""`fit_cascade`: a cascade's band and tolerance chosen on your own rows, against the stronger judge.

    from assay.alignment import fit_cascade
    fit = fit_cascade(dev_rows, Faithfulness(), first=small, then=strong, budget=0.5)
    print(fit)                  # the choice, its nearest rivals, how much first's P(yes) tells
    judge = fit.cascade()       # Cascade(first=small, then=strong, band=..., tolerance=...)

A band is only as good as the first judge's confidence, and a small judge can be sure where it is
wrong (benchmarks/results/cascade_*.md measure one that is). So instead of guessing a band, both
judges answer the same rows once, each through a cache; every candidate (any two band edges
from the quantiles of the first judge's P(yes) on those rows in steps of 1/40, plus 0 and 1,
with a few tolerances) is then routed over the cached answers by `Cascade` itself, so no model
is asked twice. A row is scored once per distinct set of calls the candidates escalate
(`cascade_routing.py`), which keeps a few thousand candidates to minutes at most beyond the two
judges' own pass. Kept: the candidate whose cell scores lie closest to the stronger judge's
alone (mean absolute difference) among those escalating at most `budget` of the cells; fewer
escalations break ties.

The fit also says how well the first judge's P(yes) predicts the stronger judge's verdict on the
same statements (`verdict_auc`, a ROC-AUC with its interval). Near 0.5 the first judge's
confidence carries no word on where it disagrees, and no band can help: the cascade will either
escalate nearly everything or lose agreement. The figures hold for rows like the ones fitted on.
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from assay._util.sync import run_sync
from assay.alignment.cascade_routing import Candidates
from assay.errors import UsageError
from assay.metrics.base import Metric, default_model
from assay.models.cache import ResponseCache
from assay.models.cascade import (
    Cascade,
    asked_now,
    readable,
    reads_verdicts,
    stopped_after,
    verdict_probabilities,
)
from assay.models.llm import LLM
from assay.schema.outcome import Ok
from assay.schema.result import EvaluationResult
from assay.stats.bootstrap import bootstrap
from assay.stats.classification import roc_auc
from assay.stats.estimate import Estimate

# Band edges: quantiles of the first judge's P(yes) in steps of 1/40, plus 0 and 1; every pair of
# edges is a candidate band. Fine steps matter when each call holds one statement: a cell of seven
# such calls stays with the first judge only if none of the seven falls in the band, so a band
# holding a tenth of the statements already escalates about half the cells. And a band need not
# straddle the median: a first judge that leans one way (a small one saying "yes" to nearly
# everything) is unsure in its tail, where its P(yes) is lowest.
EDGE_QUANTILES = tuple(i / 40 for i in range(1, 40))  # 0.025 .. 0.975
TOLERANCES = (0.0, 0.25, 0.34, 0.5)
BUDGET = 0.5  # share of cells a cascade may send to the stronger judge


@dataclass(frozen=True)
class CascadeCandidate:
    """One band and tolerance, routed over the fitted rows: the share of cells it escalated, how
    far its cell scores lie from the stronger judge's alone, and the decisions (at the fit's
    threshold) it keeps of that judge's."""

    band: tuple[float, float]
    tolerance: float
    escalated_share: float
    mean_abs_difference: float
    decisions_kept: float
    cells: int

    def __str__(self) -> str:
        return (
            f"band ({self.band[0]:.3f}, {self.band[1]:.3f}), tolerance {self.tolerance:g}: "
            f"{self.escalated_share:.0%} of cells escalated, mean |difference| "
            f"{self.mean_abs_difference:.3f}, {self.decisions_kept:.0%} of decisions kept"
        )


@dataclass(frozen=True)
class CascadeFit:
    """What `fit_cascade` found: the candidate kept, every candidate routed, the budget, and how
    well the first judge's P(yes) predicts the stronger judge's verdicts (`verdict_auc`, over
    `verdicts` statements)."""

    first: LLM
    then: LLM
    chosen: CascadeCandidate
    candidates: tuple[CascadeCandidate, ...]
    budget: float
    verdict_auc: Estimate
    verdicts: int

    @property
    def band(self) -> tuple[float, float]:
        return self.chosen.band

    @property
    def tolerance(self) -> float:
        return self.chosen.tolerance

    @property
    def within_budget(self) -> bool:
        """Whether the band kept escalates at most `budget` of the fitted cells. False when no
        candidate does (then the one escalating least is kept): with one statement per call, a
        cell of many statements is escalated when any one of them is unsure."""
        return self.chosen.escalated_share <= self.budget

    def cascade(self) -> Cascade:
        """The cascade with the band and tolerance kept."""
        return Cascade(first=self.first, then=self.then, band=self.band, tolerance=self.tolerance)

    def frontier(self) -> list[CascadeCandidate]:
        """The candidates no other beats on both counts (fewer escalations and closer scores),
        fewest escalations first: what each share of escalated cells buys."""
        found: list[CascadeCandidate] = []
        for candidate in sorted(
            self.candidates, key=lambda c: (c.escalated_share, c.mean_abs_difference)
        ):
            if not found or candidate.mean_abs_difference < found[-1].mean_abs_difference:
                found.append(candidate)
        return found

    def to_dict(self) -> dict[str, Any]:
        """The fit as JSON-ready data: the band and tolerance kept, the budget, the verdict AUC,
        the frontier and every candidate."""
        return {
            "first": self.first.model,
            "then": self.then.model,
            "band": list(self.band),
            "tolerance": self.tolerance,
            "budget": self.budget,
            "within_budget": self.within_budget,
            "chosen": asdict(self.chosen),
            "verdict_auc": self.verdict_auc.to_dict(),
            "verdicts": self.verdicts,
            "frontier": [asdict(c) for c in self.frontier()],
            "candidates": [asdict(c) for c in self.candidates],
        }

    def __str__(self) -> str:
        auc = self.verdict_auc
        interval = f" [{auc.low:.2f}, {auc.high:.2f}]" if auc.low is not None else ""
        over = (
            ""
            if self.within_budget
            else f"; OVER the budget: no candidate escalates at most {self.budget:.0%} of the "
            "cells, so the one escalating least was kept"
        )
        lines = [
            f"kept: {self.chosen} (budget {self.budget:.0%} of {self.chosen.cells} cells{over})",
            "the first judge's P(yes) predicts the stronger judge's verdict with ROC-AUC "
            + (f"{auc.value:.2f}{interval}" if auc.value is not None else "n/a")
            + f" over {self.verdicts} verdicts (0.5: it says nothing of where they disagree)",
            "what each share of escalated cells buys:",
            *(f"  {c}" for c in self.frontier()),
        ]
        return "\n".join(lines)


def band_edges(probabilities: Sequence[float]) -> list[float]:
    """Candidate band edges: quantiles of the first judge's P(yes), plus the ends 0 and 1."""
    if len(probabilities) < 2:
        raise UsageError(
            "fit_cascade: the first judge gave fewer than 2 verdict probabilities on these rows; "
            "fit on rows its metric judges with yes/no verdicts"
        )
    cuts = statistics.quantiles(probabilities, n=1000, method="inclusive")
    return sorted({0.0, *(round(cuts[round(q * 1000) - 1], 4) for q in EDGE_QUANTILES), 1.0})


def bands(edges: Sequence[float]) -> list[tuple[float, float]]:
    """Every candidate band over sorted `edges`: each pair of them, lower edge first."""
    return [(low, high) for i, low in enumerate(edges) for high in edges[i + 1 :]]


def pick(candidates: Sequence[CascadeCandidate], budget: float) -> CascadeCandidate:
    """The candidate closest to the stronger judge among those escalating at most `budget` of
    the cells (fewer escalations break ties); with none inside it, the one escalating least."""
    if not candidates:
        raise UsageError("fit_cascade: no candidate band was routed")
    within = [c for c in candidates if c.escalated_share <= budget]
    if not within:
        return min(candidates, key=lambda c: (c.escalated_share, c.mean_abs_difference))
    return min(within, key=lambda c: (c.mean_abs_difference, c.escalated_share))


class _Alone(Cascade):
    """One judge alone on the verdict calls, noting P(yes) of each by its prompt. As the first
    judge it is stopped after the asked verdicts and its calls that ask no probability go to
    `then`, exactly as a cascade routes them (so the cascades routed later find every answer
    cached); as the stronger judge (`then` is itself) it is asked as a cascade asks it. Only
    answers with every asked verdict are noted (a shorter list cannot be paired by position)."""

    def __init__(self, judge: LLM, then: LLM, *, as_first: bool, labels: tuple[str, str]) -> None:
        super().__init__(first=judge, then=then, labels=labels)
        self.as_first = as_first
        self.seen: dict[str, list[float]] = {}

    async def agenerate(self, messages: Any, schema: Any = None, n: int = 1, **params: Any) -> Any:
        if not reads_verdicts(schema, params.get("response_model"), params):
            return await self.then.agenerate(messages, schema, n, **params)
        asked = asked_now()
        if self.as_first:
            params = stopped_after(params, asked)
        answer = await self.first.agenerate(messages, schema, n, **params)
        found = readable(verdict_probabilities(answer.generations[0].logprobs, *self.labels), asked)
        if found is not None:
            self.seen[str(messages)] = found
        return answer


@contextmanager
def _cached(judges: Sequence[LLM]) -> Iterator[None]:
    """Each judge with a cache for the fit: its own if it has one, else a temporary one."""
    with tempfile.TemporaryDirectory(prefix="assay-cascade-fit-") as folder:
        lent = list({id(j): j for j in judges if j.cache is None}.values())
        caches = [ResponseCache(Path(folder) / f"judge{i}.sqlite") for i in range(len(lent))]
        for judge, cache in zip(lent, caches, strict=True):
            judge.cache = cache
        try:
            yield
        finally:
            for judge, cache in zip(lent, caches, strict=True):
                judge.cache = None
                cache.close()


def _checked(budget: Any, tolerances: Sequence[float], threshold: Any) -> tuple[float, ...]:
    """The fit's settings, refused before any judge is asked."""
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not 0 < budget <= 1:
        raise UsageError(f"fit_cascade: budget= must be a share in (0, 1], got {budget!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise UsageError(f"fit_cascade: threshold= must be a number, got {threshold!r}")
    found = tuple(tolerances)
    bad = [
        t for t in found if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t < 1
    ]
    if not found or bad:
        raise UsageError(
            f"fit_cascade: tolerances= must be one or more shares in [0, 1), got {list(found)!r}"
        )
    return found


async def afit_cascade(
    dataset: Any,
    metric: Metric,
    *,
    first: LLM | str,
    then: LLM | str,
    budget: float = BUDGET,
    tolerances: Sequence[float] = TOLERANCES,
    threshold: float = 0.5,
    labels: tuple[str, str] = ("yes", "no"),
    max_concurrency: int | None = None,
) -> CascadeFit:
    """Choose a `Cascade`'s band and tolerance for `metric` on `dataset` (see the module)."""
    from assay.engine.plan import coerce_dataset
    from assay.engine.run import aevaluate

    if not isinstance(metric, Metric) or not metric.needs_llm:
        raise UsageError("fit_cascade: metric= must be a judged metric object (Faithfulness())")
    if getattr(metric, "llm", None) is not None:
        raise UsageError(
            "fit_cascade: give the metric without a judge of its own (metric.llm is set); the "
            "fit judges it with first=, then= and each candidate cascade in turn"
        )
    tolerances = _checked(budget, tolerances, threshold)
    probe = Cascade(first=first, then=then, labels=labels)  # checks both judges as a cascade does
    small, strong = probe.first, probe.then

    rows = coerce_dataset(dataset)

    async def values(judge: Any) -> dict[int, float]:
        result = await aevaluate(
            rows, [metric], llm=judge, show_progress=False, max_concurrency=max_concurrency
        )
        assert isinstance(result, EvaluationResult)  # not asked for an Executor
        found = {}
        for row, outcomes in enumerate(result.outcomes):
            cell = outcomes[metric.name]
            if isinstance(cell, Ok) and isinstance(cell.value, (int, float)):
                found[row] = float(cell.value)
        return found

    with _cached([small, strong]):
        first_alone = _Alone(small, strong, as_first=True, labels=labels)
        # a stronger judge without log-probabilities is asked as it is: no verdict AUC then
        reads = getattr(strong.provider.profile, "logprobs", False)
        then_alone = _Alone(strong, strong, as_first=False, labels=labels) if reads else None
        await values(first_alone)
        reference = await values(then_alone or strong)
        edges = band_edges([p for ps in first_alone.seen.values() for p in ps])
        settings = [(band, tolerance) for band in bands(edges) for tolerance in tolerances]
        routing = Candidates(
            samples=rows.samples,
            metric=_with_embeddings(metric),
            first=small,
            then=strong,
            probabilities=first_alone.seen,
            labels=probe.labels,
        )
        candidates = [
            _candidate(band, tolerance, reference, routed, escalated, threshold)
            for ((band, tolerance), (routed, escalated)) in zip(
                settings, await routing.route(settings), strict=True
            )
        ]
    truth, scores = _paired_verdicts(first_alone.seen, then_alone.seen if then_alone else {})
    auc = bootstrap(roc_auc, [truth, scores], strata=truth)
    return CascadeFit(
        first=small,
        then=strong,
        chosen=pick(candidates, budget),
        candidates=tuple(candidates),
        budget=budget,
        verdict_auc=auc,
        verdicts=len(truth),
    )


def fit_cascade(dataset: Any, metric: Metric, **options: Any) -> CascadeFit:
    """`afit_cascade` run to completion (its loop in a worker thread)."""
    return run_sync(afit_cascade(dataset, metric, **options))


def _candidate(
    band: tuple[float, float],
    tolerance: float,
    reference: dict[int, float],
    routed: dict[int, float],
    escalated_share: float,
    threshold: float,
) -> CascadeCandidate:
    # a row the stronger judge scored and this routing did not (an error) counts as a full miss
    rows = sorted(reference)
    missed = {r: 1.0 for r in rows if r not in routed}
    kept = sum(
        r not in missed and (reference[r] >= threshold) == (routed[r] >= threshold) for r in rows
    )
    difference = sum(missed.get(r) or abs(reference[r] - routed[r]) for r in rows)
    return CascadeCandidate(
        band=band,
        tolerance=tolerance,
        escalated_share=escalated_share,
        mean_abs_difference=difference / max(1, len(rows)),
        decisions_kept=kept / max(1, len(rows)),
        cells=len(reference),
    )


def _with_embeddings(metric: Metric) -> Metric:
    """The metric with the embeddings an evaluation would give it (routing scores cells itself):
    the process's default, built once and shared, if it has none of its own."""
    if not metric.needs_embeddings or getattr(metric, "embeddings", None) is not None:
        return metric
    return metric.with_models(
        embeddings=default_model("embeddings", getattr(metric, "language", None))
    )


def _paired_verdicts(
    first: dict[str, list[float]], then: dict[str, list[float]]
) -> tuple[list[int], list[float]]:
    """The stronger judge's verdicts (1: yes) and the first judge's P(yes), statement by
    statement, for the calls both answered."""
    truth: list[int] = []
    scores: list[float] = []
    for prompt, small in first.items():
        for p_first, p_then in zip(small, then.get(prompt, ()), strict=False):
            truth.append(int(p_then >= 0.5))
            scores.append(p_first)
    return truth, scores


__all__ = [
    "CascadeCandidate",
    "CascadeFit",
    "afit_cascade",
    "band_edges",
    "bands",
    "fit_cascade",
    "pick",
]
