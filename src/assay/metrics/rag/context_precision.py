"""Context precision: are the useful retrieved passages ranked first?

Each passage gets a usefulness verdict (all passages in one call): useful for reaching the
reference answer (`ContextPrecision`, Ragas' "with reference") or the given response
(`ContextUtilization`). The score is average precision:

    sum_k (precision@k * v_k) / (sum_k v_k + 1e-10)

so it is 0 when nothing is useful and rewards useful passages at the top. With probability
scoring, v_k is P(useful) and precision@k the mean of v_1..v_k.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from assay.errors import NotApplicable
from assay.metrics.base import CallEstimate
from assay.metrics.judge import Verdict, ask_verdicts
from assay.metrics.llm_metric import LLMMetric
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample


def average_precision(relevance: Sequence[float]) -> float:
    """Pure scoring over per-passage relevance in retrieval order (1e-10 keeps the spec's vectors)."""
    total, hits = 0.0, 0.0
    for k, value in enumerate(relevance, start=1):
        hits += value
        total += (hits / k) * value
    return total / (sum(relevance) + 1e-10)


@dataclass(kw_only=True)
class ContextPrecision(LLMMetric):
    """Average precision of the retrieved passages, judged against the reference answer."""

    name: str = "context_precision"
    scoring: Literal["probability", "binary"] = "probability"

    calls_per_sample = "1 (all passages in one call)"
    required_fields = ("user_input", "reference", "retrieved_contexts")
    prompt_ids = ("context_usefulness",)
    answer_field = "reference"

    async def _ascore(self, **fields: object) -> MetricResult:
        contexts = [c for c in fields["retrieved_contexts"] if c and c.strip()]  # type: ignore[union-attr]
        if not contexts:
            raise NotApplicable("there are no retrieved contexts to rank")
        raw = await ask_verdicts(
            self.llm,
            self.judge_prompt("context_usefulness"),
            {"question": fields["user_input"], "answer": fields[self.answer_field]},
            contexts,
        )
        # A passage left unjudged counts as not useful, and the reason says so.
        verdicts = [v if v is not None else Verdict("no", 0.0) for v in raw]
        relevance = [v.probability if self.scoring == "probability" else float(v.passed) for v in verdicts]
        score = average_precision(relevance)
        useful = [i + 1 for i, v in enumerate(verdicts) if v.passed]
        unjudged = [i + 1 for i, v in enumerate(raw) if v is None]
        reason = f"useful passages at ranks {useful or 'none'} of {len(contexts)}"
        if unjudged:
            reason += f"; no verdict for ranks {unjudged} (counted as not useful)"
        details = {"passages": [{"rank": i + 1, "verdict": v.label, "probability": round(v.probability, 4)}
                                for i, v in enumerate(verdicts)]}
        return MetricResult(score, reason=reason, details=details)

    def estimate(self, sample: Sample) -> CallEstimate:
        text = sum(len(c) for c in sample.retrieved_contexts or []) + len(getattr(sample, self.answer_field) or "")
        return CallEstimate(requests=1, input_tokens=350 + text // 4, output_tokens=4 * len(sample.retrieved_contexts or []))


@dataclass(kw_only=True)
class ContextUtilization(ContextPrecision):
    """Context precision judged against the system's own response (no reference needed)."""

    name: str = "context_utilization"
    required_fields = ("user_input", "response", "retrieved_contexts")
    answer_field = "response"


# Ragas' names for the same two metrics.
LLMContextPrecisionWithReference = ContextPrecision
LLMContextPrecisionWithoutReference = ContextUtilization

__all__ = [
    "ContextPrecision",
    "ContextUtilization",
    "LLMContextPrecisionWithReference",
    "LLMContextPrecisionWithoutReference",
    "average_precision",
]
