"""Context precision and recall judged by string similarity to reference contexts, no model.

A retrieved context is relevant when its best similarity to any reference context reaches
`threshold`; a reference context is recalled when some retrieved context reaches it.
`distance_measure` is a `DistanceMeasure` (default Levenshtein) or any model-free metric
taking `response` and `reference` whose value is a similarity (e.g. `RougeScore()`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.errors import NotApplicable, UsageError
from assay.metrics.base import Metric
from assay.metrics.classic.string_similarity import (
    DistanceMeasure,
    as_distance_measure,
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


async def _similarity(measure: DistanceMeasure | Metric, reference: str, response: str) -> float:
    if isinstance(measure, Metric):
        return float((await measure.ascore(response=response, reference=reference)).value)
    return string_similarity(measure, reference, response)


async def _similarities(
    measure: DistanceMeasure | Metric, references: list[str], retrieved: list[str]
) -> list[list[float]]:
    """Row i, column j: similarity of retrieved context j (as response) to reference context i."""
    return [[await _similarity(measure, ref, ret) for ret in retrieved] for ref in references]


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
    required_fields = ("retrieved_contexts", "reference_contexts")

    def __post_init__(self) -> None:
        super().__post_init__()
        self.distance_measure = _check_measure(type(self).__name__, self.distance_measure)
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, (int, float)):
            raise UsageError(f"threshold must be a number, got {self.threshold!r}")

    def params(self) -> dict[str, Any]:
        values = super().params()
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
        grid = await _similarities(self.distance_measure, reference_contexts, retrieved_contexts)
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
        grid = await _similarities(self.distance_measure, reference_contexts, retrieved_contexts)
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
