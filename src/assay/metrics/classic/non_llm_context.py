"""Context precision and recall judged by string similarity to reference contexts, no model.

A retrieved context is relevant when its best similarity to any reference context reaches
`threshold`; a reference context is recalled when some retrieved context reaches it.
`distance_measure` is a `DistanceMeasure` (default Levenshtein) or any model-free metric
taking `response` and `reference` whose value is a similarity (e.g. `RougeScore()`).

Every retrieved context is compared with every reference context, so the work of a quadratic
measure grows with the product of the two sides' total lengths: beyond `max_chars`² the cell is a
`MetricError` naming the limit (the measure's default, as in `NonLLMStringSimilarity`). A large grid
is computed in a worker thread; a metric measure applies its own limits to each pair.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio.lowlevel

from assay.errors import NotApplicable, UsageError
from assay.metrics.base import Metric
from assay.metrics.classic._offload import OFF_LOOP_CHARS, check_limit, run
from assay.metrics.classic.string_similarity import (
    DistanceMeasure,
    as_distance_measure,
    check_sizes,
    string_similarity,
)
from assay.schema.outcome import MetricResult

# Added to the average-precision denominator, as Ragas does, so that a ranking with no
# relevant context scores 0 instead of dividing by zero; it is also why a perfect ranking
# scores 0.9999999999 rather than 1.0, which the published examples show.
AP_EPSILON = 1e-10


def _check_measure(owner: str, measure: Any) -> DistanceMeasure | Metric:
    if isinstance(measure, Metric):
        if measure.needs_llm or measure.needs_embeddings:
            raise UsageError(
                f"{owner}: distance_measure must not need a model, got {type(measure).__name__}"
            )
        if not set(measure.required_fields) <= {"response", "reference"}:
            raise UsageError(f"{owner}: distance_measure must score response against reference")
        return measure
    return as_distance_measure(measure)


def _grid(
    measure: DistanceMeasure, references: list[str], retrieved: list[str]
) -> list[list[float]]:
    return [[string_similarity(measure, ref, ret) for ret in retrieved] for ref in references]


async def _similarities(
    metric: _SimilarityJudged, references: list[str], retrieved: list[str]
) -> list[list[float]]:
    """Row i, column j: similarity of retrieved context j (as response) to reference context i."""
    measure = metric.distance_measure
    if not isinstance(measure, Metric):
        sizes = {
            "retrieved_contexts": sum(map(len, retrieved)),
            "reference_contexts": sum(map(len, references)),
        }
        check_sizes(metric.name, measure, metric.max_chars, sizes)
        # Each pair costs a call besides its characters: a hundred pairs count as a large input.
        work = sum(sizes.values()) + len(references) * len(retrieved) * (OFF_LOOP_CHARS // 100)
        return await run(work, _grid, measure, references, retrieved)
    grid: list[list[float]] = []
    for ref in references:
        grid.append([])
        for ret in retrieved:
            # Many small pairs scored inline would never yield: let a timeout in between pairs.
            await anyio.lowlevel.checkpoint()
            result = await measure.ascore(response=ret, reference=ref)
            grid[-1].append(float(result.value))
    return grid


def _best(scores: list[float]) -> tuple[float, int]:
    """Highest score and its index; (0.0, -1) when there is nothing to compare with."""
    if not scores:
        return 0.0, -1
    index = max(range(len(scores)), key=scores.__getitem__)
    return scores[index], index


def average_precision(verdicts: list[int]) -> float:
    """Mean of precision@k over the ranks k holding a relevant item (epsilon-guarded)."""
    hits = 0
    total = 0.0
    for rank, verdict in enumerate(verdicts, start=1):
        hits += verdict
        total += (hits / rank) * verdict
    return total / (sum(verdicts) + AP_EPSILON)


@dataclass(kw_only=True)
class _SimilarityJudged(Metric):
    """Fields and checks shared by the two metrics below (no default name: not registered)."""

    distance_measure: Any = DistanceMeasure.LEVENSHTEIN
    threshold: float = 0.5
    # Limit on the product of the two sides' total lengths (max_chars²); None: the measure's
    # default. Not part of the spec: it decides whether a value is computed, never which.
    max_chars: int | None = None
    required_fields = ("retrieved_contexts", "reference_contexts")

    def __post_init__(self) -> None:
        super().__post_init__()
        self.distance_measure = _check_measure(type(self).__name__, self.distance_measure)
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, (int, float)):
            raise UsageError(f"threshold must be a number, got {self.threshold!r}")
        self.max_chars = check_limit("max_chars", self.max_chars)

    def params(self) -> dict[str, Any]:
        values = super().params()
        values.pop("max_chars")
        if isinstance(self.distance_measure, Metric):
            # A nested metric is described by its own spec, so run manifests stay JSON.
            values["distance_measure"] = self.distance_measure.spec()
        return values


@dataclass(kw_only=True)
class NonLLMContextPrecisionWithReference(_SimilarityJudged):
    """Average precision of the retrieved ranking, relevance decided by string similarity."""

    name: str = "non_llm_context_precision_with_reference"

    async def _ascore(
        self, *, retrieved_contexts: list[str], reference_contexts: list[str]
    ) -> MetricResult:
        if not retrieved_contexts:
            raise NotApplicable("no retrieved contexts: precision is undefined")
        grid = await _similarities(self, reference_contexts, retrieved_contexts)
        best = [_best([row[j] for row in grid]) for j in range(len(retrieved_contexts))]
        verdicts = [int(score >= self.threshold) for score, _ in best]
        return MetricResult(
            average_precision(verdicts),
            reason=f"{sum(verdicts)} of {len(verdicts)} retrieved contexts reach similarity "
            f"{self.threshold} to a reference context; score is their average precision",
            details={
                "verdicts": verdicts,
                "best_similarity": [score for score, _ in best],
                "best_reference_index": [index for _, index in best],
            },
        )


@dataclass(kw_only=True)
class NonLLMContextRecall(_SimilarityJudged):
    """Share of reference contexts matched by some retrieved context."""

    name: str = "non_llm_context_recall"

    async def _ascore(
        self, *, retrieved_contexts: list[str], reference_contexts: list[str]
    ) -> MetricResult:
        if not reference_contexts:
            raise NotApplicable("no reference contexts: recall is undefined")
        grid = await _similarities(self, reference_contexts, retrieved_contexts)
        best = [_best(row) for row in grid]
        recalled = [int(score >= self.threshold) for score, _ in best]
        return MetricResult(
            sum(recalled) / len(recalled),
            reason=f"{sum(recalled)} of {len(recalled)} reference contexts were retrieved "
            f"(similarity >= {self.threshold})",
            details={
                "recalled": recalled,
                "best_similarity": [score for score, _ in best],
                "best_retrieved_index": [index for _, index in best],
            },
        )
