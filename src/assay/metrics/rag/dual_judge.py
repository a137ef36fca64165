"""The dual-judge trio (after NVIDIA's metrics): two differently worded rating prompts per
sample, each normalised to [0, 1]; the score is their mean, or the one valid rating if the other
judge answered outside the scale. Contexts longer than one judge window are rated piece by piece
and each judge's best piece counts. With token probabilities a rating is the expected value over
the scale, not just the chosen grade.

- AnswerAccuracy: response vs reference, ratings 0/2/4 (the second prompt swaps their roles).
- ContextRelevance: question vs retrieved contexts, ratings 0/1/2.
- ResponseGroundedness: response vs retrieved contexts, ratings 0/1/2.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import anyio

from assay.errors import NotApplicable, OutputParseError
from assay.metrics.base import CallEstimate
from assay.metrics.judge import Rating, ask_rating
from assay.metrics.llm_metric import LLMMetric
from assay.metrics.rag.claims import MAX_SOURCE_CHARS, chunk_text, join_contexts, over_pieces
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample


def combine_ratings(ratings: list[float | None]) -> float:
    """Pure: mean of the valid normalised ratings; none valid is an error."""
    valid = [r for r in ratings if r is not None]
    if not valid:
        raise OutputParseError("neither judge gave a rating on the scale")
    return sum(valid) / len(valid)


@dataclass(kw_only=True)
class _DualJudge(LLMMetric):
    scoring: str = "probability"
    scale: ClassVar[Mapping[str, float]] = {}
    calls_per_sample = f"2 (concurrent); x pieces of {MAX_SOURCE_CHARS:,} characters for long contexts"

    @abc.abstractmethod
    def _inputs(self, fields: dict[str, Any]) -> dict[str, Any]:
        """Map the sample's fields to the prompts' inputs (raise NotApplicable if unusable)."""

    async def _ascore(self, **fields: Any) -> MetricResult:
        values = self._inputs(fields)
        top = max(self.scale.values())

        def normalised(rating: Rating) -> float:
            return (rating.expected(self.scale) if self.scoring == "probability" else self.scale[rating.label]) / top

        async def rate(prompt_id: str) -> tuple[str, float] | None:
            # A context longer than one window is rated piece by piece; the best piece counts, as
            # relevant or supporting text anywhere in the contexts is what the judge looks for.
            async def rate_piece(piece: str | None) -> Rating | None:
                inputs = values if piece is None else {**values, "context": piece}
                try:
                    return await ask_rating(self.llm, self.judge_prompt(prompt_id), inputs)
                except OutputParseError:
                    return None  # the other judge's rating stands alone

            pieces = await over_pieces(values["context"], rate_piece) if "context" in values else [await rate_piece(None)]
            valid = [rating for rating in pieces if rating is not None]
            if not valid:
                return None
            best = max(valid, key=normalised)
            return best.label, normalised(best)

        ratings: list[tuple[str, float] | None] = [None, None]

        async def run(index: int, prompt_id: str) -> None:
            ratings[index] = await rate(prompt_id)

        async with anyio.create_task_group() as group:
            for index, prompt_id in enumerate(self.prompt_ids):
                group.start_soon(run, index, prompt_id)
        scores = [None if r is None else r[1] for r in ratings]
        score = combine_ratings(scores)
        labels = [r[0] if r else "invalid" for r in ratings]
        return MetricResult(score, reason=f"ratings {labels[0]} and {labels[1]} on a 0–{int(top)} scale",
                            details={"ratings": labels, "normalised": scores})

    def estimate(self, sample: Sample) -> CallEstimate:
        text = sum(len(str(getattr(sample, f, "") or "")) for f in self.required_fields) // 4
        pieces = len(chunk_text(join_contexts(sample.retrieved_contexts or []))) if "retrieved_contexts" in self.required_fields else 1
        return CallEstimate(requests=2 * pieces, input_tokens=2 * (250 * pieces + text), output_tokens=4 * pieces)


@dataclass(kw_only=True)
class AnswerAccuracy(_DualJudge):
    name: str = "nv_accuracy"
    calls_per_sample = "2 (concurrent)"
    required_fields = ("user_input", "response", "reference")
    prompt_ids = ("rating_answer_accuracy", "rating_answer_accuracy_swapped")
    scale: ClassVar[Mapping[str, float]] = {"0": 0.0, "2": 2.0, "4": 4.0}

    def _inputs(self, fields: dict[str, Any]) -> dict[str, Any]:
        if not fields["response"].strip():
            raise NotApplicable("the response is empty")
        return {"question": fields["user_input"], "answer": fields["response"], "reference": fields["reference"]}


@dataclass(kw_only=True)
class ContextRelevance(_DualJudge):
    name: str = "nv_context_relevance"
    required_fields = ("user_input", "retrieved_contexts")
    prompt_ids = ("rating_context_relevance", "rating_context_relevance_alt")
    scale: ClassVar[Mapping[str, float]] = {"0": 0.0, "1": 1.0, "2": 2.0}

    def _inputs(self, fields: dict[str, Any]) -> dict[str, Any]:
        context = join_contexts(fields["retrieved_contexts"])
        if not context:
            raise NotApplicable("there are no retrieved contexts")
        return {"question": fields["user_input"], "context": context}


@dataclass(kw_only=True)
class ResponseGroundedness(_DualJudge):
    name: str = "nv_response_groundedness"
    required_fields = ("response", "retrieved_contexts")
    prompt_ids = ("rating_groundedness", "rating_groundedness_alt")
    scale: ClassVar[Mapping[str, float]] = {"0": 0.0, "1": 1.0, "2": 2.0}

    def _inputs(self, fields: dict[str, Any]) -> dict[str, Any]:
        context = join_contexts(fields["retrieved_contexts"])
        if not context or not fields["response"].strip():
            raise NotApplicable("the response or the contexts are empty")
        return {"answer": fields["response"], "context": context}


__all__ = ["AnswerAccuracy", "ContextRelevance", "ResponseGroundedness", "combine_ratings"]
