"""Many candidate bands routed over one set of cached answers, each distinct routing scored once.

`fit_cascade` compares hundreds of (band, tolerance) candidates on the same rows. Routing each one
through a whole evaluation re-reads every cached answer and re-scores every cell, once per
candidate: fine for a coarse grid, too slow for the fine one that one statement per call needs
(a cell of seven one-statement calls stays with the first judge only under a narrow band, so the
grid must be fine). But a cell's score under a candidate depends only on which of its verdict
calls the candidate escalates, and that is known from the first judge's recorded P(yes) without
asking anything. So each row is scored by a real `Cascade` once per distinct set of escalated
calls, and every other candidate escalating the same set reads that score.

Exactness is checked, not assumed: each real routing notes the verdict calls it made and the
P(yes) list it read from each answer. A row scored once is read back only while it keeps sending
the same calls and each answer reads as the first judge's recorded one (then the same escalated
calls give the same answers, so the same score); a row that sends other calls (a metric whose
later prompts depend on earlier verdicts) or whose answers read otherwise is routed for real
under every candidate.
"""

from __future__ import annotations

import contextvars
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.engine.cell import score_cell
from assay.metrics.base import Metric
from assay.models.cascade import Cascade, readable, unsure_verdicts, verdict_probabilities
from assay.models.llm import LLM
from assay.models.types import ModelResponse
from assay.schema.outcome import Ok
from assay.schema.samples import Sample

_prompt: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "assay_fit_prompt", default=None
)


class _Traced(Cascade):
    """A cascade that notes, for each verdict call (by its prompt), the P(yes) lists it decided
    on, one per generation, as `readable` gives them."""

    def __init__(self, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        self.read: dict[str, list[list[float] | None]] = {}

    async def agenerate(self, messages: Any, schema: Any = None, n: int = 1, **params: Any) -> Any:
        token = _prompt.set(str(messages))  # read by `unsure` below, inside this call only
        try:
            return await super().agenerate(messages, schema, n, **params)
        finally:
            _prompt.reset(token)

    def unsure(self, response: ModelResponse, asked: int | None = None) -> bool:
        prompt = _prompt.get()
        if prompt is not None:
            self.read[prompt] = [
                readable(verdict_probabilities(g.logprobs, *self.labels), asked)
                for g in response.generations
            ]
        return super().unsure(response, asked)


@dataclass(frozen=True)
class Routed:
    """One row under one routing: its value (None when the cell gave none), whether it made any
    model call (a cell, as `Cascade.summary` counts them) and whether any call escalated."""

    value: float | None
    counted: bool
    escalated: bool


@dataclass
class _Row:
    sample: Sample
    calls: frozenset[str] | None = None  # the verdict prompts it sends, once routed
    predictable: bool = True  # False: route it for real under every candidate
    scored: dict[frozenset[str], Routed] = field(default_factory=dict)


@dataclass(frozen=True)
class Candidates:
    """The rows, the metric and the two judges every candidate is routed with, and the first
    judge's recorded P(yes) lists by prompt (trimmed to the verdicts asked; a prompt missing
    had too few to read, so every band escalates it)."""

    samples: Sequence[Sample]
    metric: Metric
    first: LLM
    then: LLM
    probabilities: Mapping[str, Sequence[float]]
    labels: tuple[str, str]

    async def route(
        self, settings: Sequence[tuple[tuple[float, float], float]]
    ) -> list[tuple[dict[int, float], float]]:
        """For each (band, tolerance): the rows' values by index and the share of cells
        escalated."""
        rows = [_Row(sample) for sample in self.samples]
        found = []
        for band, tolerance in settings:
            values: dict[int, float] = {}
            cells = escalated = 0
            for index, row in enumerate(rows):
                routed = await self._routed(row, band, tolerance)
                if routed.value is not None:
                    values[index] = routed.value
                cells += routed.counted
                escalated += routed.escalated
            found.append((values, escalated / cells if cells else 0.0))
        return found

    def _sent_on(
        self, calls: frozenset[str], band: tuple[float, float], tolerance: float
    ) -> frozenset[str]:
        """The calls the band escalates, as the recorded P(yes) lists predict."""
        return frozenset(
            p
            for p in calls
            if unsure_verdicts(self.probabilities.get(p, ()), None, band, tolerance)
        )

    async def _routed(self, row: _Row, band: tuple[float, float], tolerance: float) -> Routed:
        if row.predictable and row.calls is not None:
            known = row.scored.get(self._sent_on(row.calls, band, tolerance))
            if known is not None:
                return known
        cascade = _Traced(
            first=self.first, then=self.then, band=band, tolerance=tolerance, labels=self.labels
        )
        outcome, _ = await score_cell(
            self.metric.with_models(llm=cascade), row.sample, timeout=None
        )
        made = frozenset(cascade.read)
        if row.calls is None:
            row.calls = made
        # the prediction holds for every band when this row sends the same calls each time and
        # each answer reads as the first judge's recorded one
        if made != row.calls or any(
            read != [self.probabilities.get(p)] for p, read in cascade.read.items()
        ):
            row.predictable = False
        summary = cascade.summary()
        routed = Routed(
            value=float(outcome.value)
            if isinstance(outcome, Ok) and isinstance(outcome.value, (int, float))
            else None,
            counted=summary.cells > 0,
            escalated=summary.escalated_cells > 0,
        )
        if row.predictable:
            row.scored[self._sent_on(made, band, tolerance)] = routed
        return routed


__all__ = ["Candidates", "Routed"]
