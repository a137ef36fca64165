"""The dual-judge trio (after NVIDIA's metrics): two differently worded rating prompts per
sample, each normalised to [0, 1]; the score is their mean, or the one valid rating if the other
judge answered outside the scale. Contexts longer than one judge window are rated piece by piece
and each judge's best piece counts. With token probabilities a rating is the expected value over
the scale, not just the chosen grade.

- AnswerAccuracy: response vs reference, ratings 0/2/4 (the second prompt swaps their roles).
- ContextRelevance: question vs retrieved contexts, ratings 0/1/2. With
  `granularity="passage"` each passage of the contexts is rated on its own and the score is the
  length-weighted mean: the share of the retrieved text that is relevant (the Ragas paper's
  definition), so padding a good context with off-topic text lowers it; the default rates the
  contexts as a whole (NVIDIA's definition: does the context hold what is needed).
- ResponseGroundedness: response vs retrieved contexts, ratings 0/1/2.
"""

from __future__ import annotations

import abc
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import anyio

from assay.errors import NotApplicable, OutputParseError
from assay.metrics.base import CallEstimate, single_turn
from assay.metrics.judge import Rating, ask_rating, consecutive_calls
from assay.metrics.llm_metric import LLMMetric
from assay.metrics.rag.claims import chunk_text, join_contexts, over_pieces
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
    scoring: Literal["probability", "binary"] = "probability"
    scale: ClassVar[Mapping[str, float]] = {}

    @abc.abstractmethod
    def _inputs(self, fields: dict[str, Any]) -> dict[str, Any]:
        """Map the sample's fields to the prompts' inputs (raise NotApplicable if unusable)."""

    def _normalised(self, rating: Rating) -> float:
        value = (
            rating.expected(self.scale)
            if self.scoring == "probability"
            else self.scale[rating.label]
        )
        return value / max(self.scale.values())

    async def _rate_piece(self, prompt_id: str, values: dict[str, Any]) -> Rating | None:
        try:
            return await ask_rating(self.llm, self.judge_prompt(prompt_id), values)
        except OutputParseError:
            return None  # the other judge's rating stands alone

    async def _best_rating(self, prompt_id: str, values: dict[str, Any]) -> Rating | None:
        """One judge's rating. A context longer than one window is rated piece by piece and the
        best piece counts, as relevant or supporting text anywhere is what the judge looks for."""
        if "context" in values:
            ratings = await over_pieces(
                values["context"],
                lambda piece: self._rate_piece(prompt_id, {**values, "context": piece}),
            )
        else:
            ratings = [await self._rate_piece(prompt_id, values)]
        valid = [rating for rating in ratings if rating is not None]
        return max(valid, key=self._normalised) if valid else None

    async def _ascore(self, **fields: Any) -> MetricResult:
        values = self._inputs(fields)
        ratings: list[Rating | None] = [None] * len(self.prompt_ids)

        async def run(index: int, prompt_id: str) -> None:
            ratings[index] = await self._best_rating(prompt_id, values)

        async with anyio.create_task_group() as group:
            for index, prompt_id in enumerate(self.prompt_ids):
                group.start_soon(run, index, prompt_id)
        scores = [None if r is None else self._normalised(r) for r in ratings]
        score = combine_ratings(scores)
        labels = [r.label if r else "invalid" for r in ratings]
        top = int(max(self.scale.values()))
        return MetricResult(
            score,
            reason=f"{'ratings ' + ' and '.join(labels) if len(labels) > 1 else 'rating ' + labels[0]} on a 0–{top} scale",
            details={"ratings": labels, "normalised": scores},
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        sample = single_turn(sample)  # the kind it accepts
        text = sum(len(str(getattr(sample, f, "") or "")) for f in self.required_fields) // 4
        pieces = (
            len(chunk_text(join_contexts(sample.retrieved_contexts or [])))
            if "retrieved_contexts" in self.required_fields
            else 1
        )
        judges = len(self.prompt_ids)
        return CallEstimate(
            requests=judges * pieces,
            input_tokens=judges * (250 * pieces + text),
            output_tokens=4 * judges * pieces,
        )


@dataclass(kw_only=True)
class AnswerAccuracy(_DualJudge):
    name: str = "nv_accuracy"
    required_fields = ("user_input", "response", "reference")
    default_prompt_ids = ("rating_answer_accuracy", "rating_answer_accuracy_swapped")
    scale: ClassVar[Mapping[str, float]] = {"0": 0.0, "2": 2.0, "4": 4.0}

    def _inputs(self, fields: dict[str, Any]) -> dict[str, Any]:
        if not fields["response"].strip():
            raise NotApplicable("the response is empty")
        return {
            "question": fields["user_input"],
            "answer": fields["response"],
            "reference": fields["reference"],
        }


# Passages for granularity="passage": paragraphs, with short ones (a heading, a list item)
# merged into their neighbours so that no call rates a fragment too small to judge.
MIN_PASSAGE_CHARS = 150
MAX_PASSAGE_CHARS = 1200


def split_passages(contexts: list[str]) -> list[str]:
    """Pure: the passages of the retrieved contexts, in order. A passage never spans two
    contexts; paragraphs (split at line breaks) shorter than MIN_PASSAGE_CHARS join the next
    one, a paragraph longer than MAX_PASSAGE_CHARS is cut between sentences, and a short tail
    joins the passage before it when they fit together."""
    passages: list[str] = []
    for context in contexts:
        own: list[str] = []
        pending = ""
        for paragraph in re.split(r"\n\s*", context.strip()):
            pending = f"{pending}\n{paragraph}".strip()
            if len(pending) >= MIN_PASSAGE_CHARS:
                own.extend(chunk_text(pending, MAX_PASSAGE_CHARS))
                pending = ""
        if pending and own and len(own[-1]) + 1 + len(pending) <= MAX_PASSAGE_CHARS:
            own[-1] = f"{own[-1]}\n{pending}"
        elif pending:
            own.append(pending)
        passages.extend(own)
    return passages


def weighted_mean(scores: list[float | None], weights: list[int]) -> tuple[float, int]:
    """Pure: the weight-averaged valid scores and how many were valid; none valid is an error.
    Weights are passage lengths, so never zero."""
    valid = [(s, w) for s, w in zip(scores, weights, strict=True) if s is not None]
    if not valid:
        raise OutputParseError("no passage got a rating on the scale from either judge")
    return sum(s * w for s, w in valid) / sum(w for _, w in valid), len(valid)


@dataclass(kw_only=True)
class ContextRelevance(_DualJudge):
    name: str = "nv_context_relevance"
    granularity: Literal["context", "passage"] = "context"
    # 1: only the first judge (question before context, so per passage its whole prompt up to the
    # passage is a prefix llama.cpp keeps): half the calls, without the second opinion.
    judges: Literal[1, 2] = 2
    required_fields = ("user_input", "retrieved_contexts")
    scale: ClassVar[Mapping[str, float]] = {"0": 0.0, "1": 1.0, "2": 2.0}

    @property
    def prompt_ids(self) -> tuple[str, ...]:
        """The prompts this setting sends (so records and translations name only those)."""
        return ("rating_context_relevance", "rating_context_relevance_alt")[: self.judges]

    def _inputs(self, fields: dict[str, Any]) -> dict[str, Any]:
        context = join_contexts(fields["retrieved_contexts"])
        if not context:
            raise NotApplicable("there are no retrieved contexts")
        return {"question": fields["user_input"], "context": context}

    def _passage_score(self, ratings: list[Rating | None]) -> float | None:
        """`combine_ratings` of one passage's judges, None (left out) when neither rated it."""
        if all(r is None for r in ratings):
            return None
        return combine_ratings([None if r is None else self._normalised(r) for r in ratings])

    async def _ascore(self, **fields: Any) -> MetricResult:
        if self.granularity == "context":
            return await super()._ascore(**fields)
        values = self._inputs(fields)  # refuses a sample with no context
        passages = split_passages(fields["retrieved_contexts"])  # empty contexts yield none
        ratings: list[list[Rating | None]] = [[None] * len(self.prompt_ids) for _ in passages]

        async def run(judge: int) -> None:
            # A judge's passages one after another on one held slot: a llama.cpp server keeps
            # the shared prefix (instruction, example, and the question where it comes first)
            # and reads only the new passage. The two judges run side by side.
            async with consecutive_calls(self.llm):
                for index, passage in enumerate(passages):
                    piece = {**values, "context": passage}
                    ratings[index][judge] = await self._rate_piece(self.prompt_ids[judge], piece)

        async with anyio.create_task_group() as group:
            for judge in range(len(self.prompt_ids)):
                group.start_soon(run, judge)
        per_passage = [self._passage_score(pair) for pair in ratings]
        score, rated = weighted_mean(per_passage, [len(p) for p in passages])
        return MetricResult(
            score,
            reason=f"{rated} of {len(passages)} passages rated; length-weighted mean relevance",
            details={
                "passages": [
                    {
                        "chars": len(passage),
                        "ratings": [r.label if r else "invalid" for r in pair],
                        "normalised": None if value is None else round(value, 4),
                    }
                    for passage, pair, value in zip(passages, ratings, per_passage, strict=True)
                ]
            },
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        sample = single_turn(sample)  # the kind it accepts
        if self.granularity == "context":
            return super().estimate(sample)
        passages = split_passages(list(sample.retrieved_contexts or []))
        question = len(str(sample.user_input or "")) // 4
        text = sum(len(p) for p in passages) // 4
        judges = len(self.prompt_ids)
        return CallEstimate(
            requests=judges * len(passages),
            input_tokens=judges * (250 * len(passages) + question * len(passages) + text),
            output_tokens=4 * judges * len(passages),
        )


@dataclass(kw_only=True)
class ResponseGroundedness(_DualJudge):
    name: str = "nv_response_groundedness"
    required_fields = ("response", "retrieved_contexts")
    default_prompt_ids = ("rating_groundedness", "rating_groundedness_alt")
    scale: ClassVar[Mapping[str, float]] = {"0": 0.0, "1": 1.0, "2": 2.0}

    def _inputs(self, fields: dict[str, Any]) -> dict[str, Any]:
        context = join_contexts(fields["retrieved_contexts"])
        if not context or not fields["response"].strip():
            raise NotApplicable("the response or the contexts are empty")
        return {"answer": fields["response"], "context": context}


__all__ = [
    "AnswerAccuracy",
    "ContextRelevance",
    "ResponseGroundedness",
    "combine_ratings",
    "split_passages",
    "weighted_mean",
]
