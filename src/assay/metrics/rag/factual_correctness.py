"""Factual correctness: statements of the response vs statements of the reference.

Response statements supported by the reference are true positives, unsupported ones false
positives; reference statements not supported by the response are false negatives.
precision = TP/(TP+FP), recall = TP/(TP+FN), F-beta from both; rounded to 2 decimals as Ragas
does.

What counts as a statement: with `statements="sentences"` (the default while atomicity and
coverage are "low") each sentence of a text, so the metric needs only the two support checks, run
concurrently; with `statements="claims"` the judge first splits both texts into claims, coarse
main claims for "low", fine and complete ones when `atomicity` or `coverage` is "high" (asking for
"high" implies claims). The fine split of the response is the same request faithfulness and noise
sensitivity make, so a run with several of them splits each response once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from assay.errors import NotApplicable
from assay.metrics.base import CallEstimate, single_turn
from assay.metrics.judge import Verdict
from assay.metrics.llm_metric import LLMMetric
from assay.metrics.rag.claims import checked_per_call, claim_details, cross_check, skipped_note
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample


def fbeta(tp: float, fp: float, fn: float, beta: float = 1.0) -> float:
    precision = tp / (tp + fp + 1e-10)
    recall = tp / (tp + fn + 1e-10)
    if precision + recall == 0:
        return 0.0
    return (1 + beta**2) * precision * recall / (beta**2 * precision + recall + 1e-10)


def factual_correctness_score(
    response_verdicts: list[Verdict],
    reference_verdicts: list[Verdict],
    *,
    mode: str = "f1",
    beta: float = 1.0,
    scoring: str = "binary",
) -> float:
    """Pure scoring. `response_verdicts`: each response claim supported by the reference?
    `reference_verdicts`: each reference claim supported by the response? (unused for precision)."""

    def value(v: Verdict) -> float:
        return v.probability if scoring == "probability" else float(v.passed)

    tp = sum(value(v) for v in response_verdicts)
    fp = sum(1 - value(v) for v in response_verdicts)
    fn = sum(1 - value(v) for v in reference_verdicts)
    if mode == "precision":
        score = tp / (tp + fp + 1e-10)
    elif mode == "recall":
        score = tp / (tp + fn + 1e-10)
    else:
        score = fbeta(tp, fp, fn, beta)
    return round(score, 2)


@dataclass(kw_only=True)
class FactualCorrectness(LLMMetric):
    name: str = "factual_correctness"
    mode: Literal["f1", "precision", "recall"] = "f1"
    beta: float = 1.0
    atomicity: Literal["low", "high"] = "low"
    coverage: Literal["low", "high"] = "low"
    scoring: Literal["probability", "binary"] = "binary"
    statements: Literal["claims", "sentences"] | None = (
        None  # None: claims if any "high", else sentences
    )
    # Statements per verdict list; None asks each side's statements in one list (see
    # check_support on herding; unlike faithfulness, not yet measured on this metric)
    statements_per_call: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        checked_per_call(self.statements_per_call)
        if self.statements == "sentences" and "high" in (self.atomicity, self.coverage):
            raise ValueError(
                "atomicity/coverage 'high' shape how the judge splits claims; "
                "they need statements='claims', not 'sentences'"
            )

    @property
    def prompt_ids(self) -> tuple[str, ...]:
        return (self._claims_prompt_id, "supported") if self.uses_claims else ("supported",)

    @property
    def uses_claims(self) -> bool:
        return self.statements == "claims" or (
            self.statements is None and "high" in (self.atomicity, self.coverage)
        )

    @property
    def _claims_prompt_id(self) -> str:
        return "claims" if "high" in (self.atomicity, self.coverage) else "claims.coarse"

    async def _ascore(
        self, *, response: str, reference: str, user_input: str | None = None
    ) -> MetricResult:
        if not response.strip():
            raise NotApplicable("the response is empty")
        claims_prompt = self.judge_prompt(self._claims_prompt_id) if self.uses_claims else None
        need_reference = self.mode != "precision"
        # Statements the judge skipped are left out of TP/FP/FN and named in the reason.
        checked = await cross_check(
            self.llm,
            claims_prompt,
            self.judge_prompt("supported"),
            response,
            reference,
            user_input or "",
            both_ways=need_reference,
            empty_response="the response makes no factual statements to check",
            per_call=self.statements_per_call,
        )
        response_claims, response_verdicts = checked.response_claims, checked.response_verdicts
        reference_claims, reference_verdicts = checked.reference_claims, checked.reference_verdicts
        score = factual_correctness_score(
            response_verdicts,
            reference_verdicts,
            mode=self.mode,
            beta=self.beta,
            scoring=self.scoring,
        )
        tp = sum(v.passed for v in response_verdicts)
        unit = "claims" if self.uses_claims else "sentences"
        reason = f"{tp} of {len(response_claims)} response {unit} are backed by the reference"
        if need_reference:
            missed = sum(not v.passed for v in reference_verdicts)
            reason += f"; {missed} of {len(reference_claims)} reference {unit} are missing from the response"
        return MetricResult(
            score,
            reason=reason + skipped_note(checked.unjudged),
            details={
                "response_claims": claim_details(response_claims, response_verdicts),
                "reference_claims": claim_details(reference_claims, reference_verdicts),
                "unjudged": checked.unjudged,
            },
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        sample = single_turn(sample)  # the kind it accepts
        text = (len(sample.response or "") + len(sample.reference or "")) // 4
        checks = 1 if self.mode == "precision" else 2
        if not self.uses_claims:
            return CallEstimate(
                requests=checks, input_tokens=checks * 350 + text, output_tokens=text // 4 + 10
            )
        calls = 2 * checks
        return CallEstimate(
            requests=calls, input_tokens=calls * 400 + 3 * text, output_tokens=2 * text + 20
        )


__all__ = ["FactualCorrectness", "factual_correctness_score", "fbeta"]
