"""Noise sensitivity (after RAGChecker): how often the response states something wrong that it
took from the retrieved contexts. Lower is better.

Claims are drawn from the reference and the response. A context is *relevant* when it supports
at least one reference claim. A response claim is *incorrect* when the reference does not support
it. mode="relevant": share of response claims that are incorrect yet supported by a relevant
context; mode="irrelevant": incorrect and supported only by irrelevant contexts.
Calls: 2 claim splits (shared with other metrics) + 1 per context (reference and response claims
judged together) + 1 (response claims against the reference).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import anyio

from assay.errors import NotApplicable, OutputParseError
from assay.metrics.base import CallEstimate, single_turn
from assay.metrics.judge import Verdict
from assay.metrics.llm_metric import LLMMetric
from assay.metrics.rag.claims import check_support, chunk_text, extract_claims, skipped_note
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample


def noise_sensitivity_score(
    reference_in_context: list[list[bool]],
    response_in_context: list[list[bool]],
    response_in_reference: list[bool],
    mode: str = "relevant",
) -> float:
    """Pure scoring. Matrices are [context][claim]: does context j support claim i?"""
    n_claims = len(response_in_reference)
    if n_claims == 0:
        raise NotApplicable("the response makes no claims")
    relevant = [any(row) for row in reference_in_context]
    incorrect = [not supported for supported in response_in_reference]
    from_relevant = [
        any(response_in_context[j][i] for j in range(len(relevant)) if relevant[j])
        for i in range(n_claims)
    ]
    from_irrelevant = [
        any(response_in_context[j][i] for j in range(len(relevant)) if not relevant[j])
        for i in range(n_claims)
    ]
    if mode == "relevant":
        flagged = [incorrect[i] and from_relevant[i] for i in range(n_claims)]
    else:
        flagged = [
            incorrect[i] and from_irrelevant[i] and not from_relevant[i] for i in range(n_claims)
        ]
    return sum(flagged) / n_claims


@dataclass(kw_only=True)
class NoiseSensitivity(LLMMetric):
    name: str = "noise_sensitivity"
    mode: Literal["relevant", "irrelevant"] = "relevant"

    default_prompt_ids = ("claims", "supported")
    better = "lower"

    async def _ascore(
        self, *, user_input: str, response: str, reference: str, retrieved_contexts: list[str]
    ) -> MetricResult:
        contexts = [c for c in retrieved_contexts if c and c.strip()]
        if not contexts:
            raise NotApplicable("there are no retrieved contexts")
        claims_prompt, supported = self.judge_prompt("claims"), self.judge_prompt("supported")
        split: dict[str, list[str]] = {}

        async def extract(key: str, text: str) -> None:
            split[key] = await extract_claims(self.llm, claims_prompt, text, user_input)

        async with anyio.create_task_group() as group:
            group.start_soon(extract, "reference", reference)
            group.start_soon(extract, "response", response)
        ref_claims, resp_claims = split["reference"], split["response"]
        if not resp_claims:
            raise NotApplicable("the response makes no claims")
        per_context: list[list[Verdict | None]] = [[] for _ in contexts]
        against_reference: list[Verdict | None] = []

        async def judge_context(j: int) -> None:
            per_context[j] = await check_support(
                self.llm, supported, contexts[j], [*ref_claims, *resp_claims]
            )

        async def judge_reference() -> None:
            against_reference.extend(
                await check_support(self.llm, supported, reference, resp_claims)
            )

        async with anyio.create_task_group() as group:
            for j in range(len(contexts)):
                group.start_soon(judge_context, j)
            group.start_soon(judge_reference)
        # A response claim the judge skipped against the reference cannot be called correct or
        # incorrect: it is left out of the score and reported. A skipped context verdict counts as
        # "this context does not say it" (it can only lower the flagged share) and is reported too.
        k = len(ref_claims)
        kept = [i for i, verdict in enumerate(against_reference) if verdict is not None]
        unjudged = [
            resp_claims[i] for i, verdict in enumerate(against_reference) if verdict is None
        ]
        if not kept:
            raise OutputParseError(
                "the judge gave no verdict on any response claim against the reference"
            )
        missing_context_verdicts = sum(verdict is None for row in per_context for verdict in row)
        reference_in_context = [[bool(v and v.passed) for v in row[:k]] for row in per_context]
        response_in_context = [
            [bool((v := row[k + i]) and v.passed) for i in kept] for row in per_context
        ]
        correct = [bool((v := against_reference[i]) and v.passed) for i in kept]
        score = noise_sensitivity_score(
            reference_in_context, response_in_context, correct, self.mode
        )
        claims = [resp_claims[i] for i in kept]
        note = skipped_note(unjudged)
        if missing_context_verdicts:
            note += f"; {missing_context_verdicts} claim-in-context verdict(s) missing, read as not supported"
        return MetricResult(
            score,
            reason=f"{round(score * len(claims))} of {len(claims)} response claims are "
            f"unsupported by the reference but taken from {self.mode} contexts{note}",
            details={
                "response_claims": claims,
                "reference_claims": ref_claims,
                "relevant_contexts": [any(row) for row in reference_in_context],
                "incorrect": [not c for c in correct],
                "unjudged": unjudged,
            },
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        sample = single_turn(sample)  # the kind it accepts
        contexts = [c for c in sample.retrieved_contexts or [] if c and c.strip()]
        n = sum(len(chunk_text(c)) for c in contexts)
        text = sum(len(c) for c in contexts) // 4
        return CallEstimate(
            requests=2 + len(chunk_text(sample.reference or "")) + n,
            input_tokens=1500 + 400 * n + text,
            output_tokens=150 + 20 * n,
        )


__all__ = ["NoiseSensitivity", "noise_sensitivity_score"]
