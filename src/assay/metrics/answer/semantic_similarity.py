"""Semantic similarity: cosine of the response and reference embeddings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.errors import NotApplicable
from assay.metrics.base import CallEstimate, Metric, single_turn
from assay.metrics.rag.answer_relevancy import cosine
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample


@dataclass(kw_only=True)
class SemanticSimilarity(Metric):
    """`threshold` turns the cosine into a 1.0/0.0 pass mark when given."""

    name: str = "semantic_similarity"
    embeddings: Any = None
    threshold: float | None = None

    needs_embeddings = True

    async def _ascore(self, *, response: str, reference: str) -> MetricResult:
        if not response.strip() or not reference.strip():
            raise NotApplicable("the response or the reference is empty")
        first, second = await self.embeddings.aembed_texts([response, reference])
        similarity = cosine(first, second)
        if self.threshold is not None:
            return MetricResult(
                float(similarity >= self.threshold),
                reason=f"cosine {similarity:.4f} vs threshold {self.threshold}",
            )
        return MetricResult(similarity, reason=f"cosine similarity {similarity:.4f}")

    def estimate(self, sample: Sample) -> CallEstimate:
        sample = single_turn(sample)  # the kind it accepts
        return CallEstimate(
            embedding_tokens=(len(sample.response or "") + len(sample.reference or "")) // 4
        )


AnswerSimilarity = SemanticSimilarity

__all__ = ["AnswerSimilarity", "SemanticSimilarity"]
