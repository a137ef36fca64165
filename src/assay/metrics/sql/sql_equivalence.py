"""SQL semantic equivalence: do the generated and reference queries return the same result on
the given schema? The judge explains both queries, then decides; the reason is its explanation."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from assay.metrics.base import CallEstimate, single_turn
from assay.metrics.judge import ask_json
from assay.metrics.llm_metric import LLMMetric
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample


class EquivalenceJudgement(BaseModel):
    reference_explanation: str
    candidate_explanation: str
    equivalent: bool


@dataclass(kw_only=True)
class SQLSemanticEquivalence(LLMMetric):
    name: str = "sql_semantic_equivalence"

    default_prompt_ids = ("sql_equivalence",)

    async def _ascore(
        self, *, response: str, reference: str, reference_contexts: list[str] | None = None
    ) -> MetricResult:
        schema = "\n".join(reference_contexts or []) or "(no schema given)"
        judgement = await ask_json(
            self.llm,
            self.judge_prompt("sql_equivalence"),
            {"schema": schema, "reference_query": reference, "candidate_query": response},
            EquivalenceJudgement,
        )
        reason = (
            f"Reference: {judgement.reference_explanation} Candidate: {judgement.candidate_explanation} "
            f"{'Equivalent.' if judgement.equivalent else 'Not equivalent.'}"
        )
        return MetricResult(
            float(judgement.equivalent), reason=reason, details=judgement.model_dump()
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        sample = single_turn(sample)  # the kind it accepts
        text = (
            len(sample.response or "")
            + len(sample.reference or "")
            + sum(map(len, sample.reference_contexts or []))
        ) // 4
        return CallEstimate(requests=1, input_tokens=450 + text, output_tokens=120)


LLMSQLEquivalence = SQLSemanticEquivalence

__all__ = ["LLMSQLEquivalence", "SQLSemanticEquivalence"]
