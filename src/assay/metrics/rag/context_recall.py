"""Context recall: how much of the reference answer the retrieved contexts support.

The reference is split into sentences (no model needed; pysbd handles abbreviations and
Chinese), and every sentence is checked against the contexts in one verdict call.
Score = supported sentences / sentences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from assay.errors import NotApplicable
from assay.metrics.base import CallEstimate, single_turn
from assay.metrics.llm_metric import LLMMetric
from assay.metrics.rag.claims import (
    check_support,
    chunk_text,
    claim_details,
    join_contexts,
    judged,
    skipped_note,
)
from assay.metrics.text import asplit_sentences
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample


@dataclass(kw_only=True)
class LLMContextRecall(LLMMetric):
    name: str = "context_recall"
    scoring: Literal["probability", "binary"] = "probability"

    default_prompt_ids = ("supported",)

    async def _ascore(
        self, *, reference: str, retrieved_contexts: list[str], user_input: str | None = None
    ) -> MetricResult:
        sentences = await asplit_sentences(reference)
        if not sentences:
            raise NotApplicable("the reference has no sentences to look for")
        source = join_contexts(retrieved_contexts)
        if not source:
            raise NotApplicable("there are no retrieved contexts")
        raw = await check_support(self.llm, self.judge_prompt("supported"), source, sentences)
        sentences, verdicts, unjudged = judged(sentences, raw)
        values = [
            v.probability if self.scoring == "probability" else float(v.passed) for v in verdicts
        ]
        score = sum(values) / len(values)
        found = sum(v.passed for v in verdicts)
        return MetricResult(
            score,
            reason=f"{found} of {len(sentences)} reference sentences are supported by the contexts{skipped_note(unjudged)}",
            details={"sentences": claim_details(sentences, verdicts), "unjudged": unjudged},
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        sample = single_turn(sample)  # the kind it accepts
        text = len(sample.reference or "") + sum(len(c) for c in sample.retrieved_contexts or [])
        pieces = len(chunk_text(join_contexts(sample.retrieved_contexts or [])))
        return CallEstimate(
            requests=pieces,
            input_tokens=350 * pieces + text // 4,
            output_tokens=4 * pieces * max(1, len(sample.reference or "") // 80),
        )


ContextRecall = LLMContextRecall

__all__ = ["ContextRecall", "LLMContextRecall"]
