"""Answer correctness: factual overlap with the reference, blended with semantic similarity.

factuality = TP / (TP + 0.5 * (FP + FN)) over claims (response claims backed by the reference are
TP, unbacked ones FP; reference claims missing from the response FN), then
score = w0 * factuality + w1 * cosine(response, reference), weights [0.75, 0.25] by default.
`threshold` turns the score into 1.0/0.0. Statements are sentences by default (two support checks,
no split call); `statements="claims"` has the judge split both texts into main claims first, the
same requests factual correctness makes with `statements="claims"`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from assay.errors import NotApplicable
from assay.metrics.base import CallEstimate, single_turn
from assay.metrics.judge import Verdict
from assay.metrics.llm_metric import LLMMetric
from assay.metrics.rag.answer_relevancy import cosine
from assay.metrics.rag.claims import (
    CrossCheck,
    checked_per_call,
    claim_details,
    cross_check,
    skipped_note,
)
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample


def factuality(response_verdicts: list[Verdict], reference_verdicts: list[Verdict]) -> float:
    """Pure: F1 over claims; with no claims on either side there is nothing wrong: 1.0."""
    tp = sum(v.passed for v in response_verdicts)
    fp = len(response_verdicts) - tp
    fn = sum(not v.passed for v in reference_verdicts)
    if tp + fp + fn == 0:
        return 1.0
    return tp / (tp + 0.5 * (fp + fn))


def answer_correctness_score(fact: float, similarity: float, weights: tuple[float, float]) -> float:
    return (weights[0] * fact + weights[1] * similarity) / (weights[0] + weights[1])


@dataclass(kw_only=True)
class AnswerCorrectness(LLMMetric):
    name: str = "answer_correctness"
    embeddings: Any = None
    weights: list[float] = field(default_factory=lambda: [0.75, 0.25])
    threshold: float | None = None
    statements: Literal["claims", "sentences"] = "sentences"
    statements_per_call: int | None = None  # as in FactualCorrectness; None: one list per side

    needs_embeddings = True

    @property
    def prompt_ids(self) -> tuple[str, ...]:
        return ("claims.coarse", "supported") if self.statements == "claims" else ("supported",)

    def __post_init__(self) -> None:
        super().__post_init__()
        checked_per_call(self.statements_per_call)
        if len(self.weights) != 2 or any(w < 0 for w in self.weights) or sum(self.weights) == 0:
            raise ValueError("weights must be two non-negative numbers, not both zero")

    async def _ascore(self, *, user_input: str, response: str, reference: str) -> MetricResult:
        if not response.strip():
            raise NotApplicable("the response is empty")
        claims_prompt = self.judge_prompt("claims.coarse") if self.statements == "claims" else None
        found: dict[str, Any] = {}

        async def facts() -> None:
            found["checked"] = await cross_check(
                self.llm,
                claims_prompt,
                self.judge_prompt("supported"),
                response,
                reference,
                user_input,
                per_call=self.statements_per_call,
            )

        async def similarity() -> None:
            if self.weights[1] > 0:
                first, second = await self.embeddings.aembed_texts([response, reference])
                found["similarity"] = cosine(first, second)
            else:
                found["similarity"] = 0.0

        async with anyio.create_task_group() as group:
            group.start_soon(facts)
            group.start_soon(similarity)
        checked: CrossCheck = found["checked"]
        response_claims, response_verdicts = checked.response_claims, checked.response_verdicts
        reference_claims, reference_verdicts = checked.reference_claims, checked.reference_verdicts
        unjudged = checked.unjudged
        fact = factuality(response_verdicts, reference_verdicts)
        score = answer_correctness_score(
            fact, found["similarity"], (self.weights[0], self.weights[1])
        )
        if self.threshold is not None:
            score = float(score >= self.threshold)
        return MetricResult(
            score,
            reason=f"factuality {fact:.2f}, similarity {found['similarity']:.2f}"
            f"{skipped_note(unjudged)}",
            details={
                "factuality": fact,
                "similarity": found["similarity"],
                "response_claims": claim_details(response_claims, response_verdicts),
                "reference_claims": claim_details(reference_claims, reference_verdicts),
                "unjudged": unjudged,
            },
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        sample = single_turn(sample)  # the kind it accepts
        text = (len(sample.response or "") + len(sample.reference or "")) // 4
        if self.statements == "sentences":
            return CallEstimate(
                requests=2,
                input_tokens=700 + text,
                output_tokens=text // 4 + 10,
                embedding_tokens=text,
            )
        return CallEstimate(
            requests=4,
            input_tokens=1600 + 3 * text,
            output_tokens=2 * text + 20,
            embedding_tokens=text,
        )


__all__ = ["AnswerCorrectness", "answer_correctness_score", "factuality"]
