"""Summary score: does a summary keep the source's key facts, and is it short?

One call picks key phrases of the source and writes yes/no questions answered "yes" by it (one
call per piece when the source is longer than a judge window); a second call answers them from
the summary alone. qa = questions answered yes / questions;
conciseness = 1 - min(len(summary), len(source)) / (len(source) + 1e-10) (characters);
score = qa * (1 - coeff) + conciseness * coeff, coeff 0.5 (set `length_penalty=False` for qa only).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from assay.errors import NotApplicable
from assay.metrics.base import CallEstimate, single_turn
from assay.metrics.judge import ask_json, ask_verdicts
from assay.metrics.llm_metric import LLMMetric
from assay.metrics.rag.claims import chunk_text, join_contexts, over_pieces
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample


class KeyQuestions(BaseModel):
    keyphrases: list[str] = Field(default_factory=list)
    questions: list[str] = Field(default_factory=list)


def summary_score(
    answered_yes: int,
    questions: int,
    summary_chars: int,
    source_chars: int,
    *,
    coeff: float = 0.5,
    length_penalty: bool = True,
) -> float:
    """Pure scoring."""
    qa = answered_yes / questions
    if not length_penalty:
        return qa
    conciseness = 1 - min(summary_chars, source_chars) / (source_chars + 1e-10)
    return qa * (1 - coeff) + conciseness * coeff


@dataclass(kw_only=True)
class SummaryScore(LLMMetric):
    name: str = "summary_score"
    coeff: float = 0.5
    length_penalty: bool = True

    default_prompt_ids = ("summary_questions", "summary_answers")

    async def _ascore(self, *, reference_contexts: list[str], response: str) -> MetricResult:
        source = join_contexts(reference_contexts)
        if not source or not response.strip():
            raise NotApplicable("the source text or the summary is empty")

        async def key_questions(piece: str) -> KeyQuestions:
            return await ask_json(
                self.llm, self.judge_prompt("summary_questions"), {"text": piece}, KeyQuestions
            )

        # A source longer than one judge window gives key questions piece by piece, pooled.
        keys = await over_pieces(source, key_questions)
        keyphrases = [phrase for key in keys for phrase in key.keyphrases]
        questions = list(
            dict.fromkeys(q.strip() for key in keys for q in key.questions if q and q.strip())
        )
        if not questions:
            raise NotApplicable("no key questions could be drawn from the source text")
        verdicts = await ask_verdicts(
            self.llm, self.judge_prompt("summary_answers"), {"summary": response}, questions
        )
        yes = sum(1 for v in verdicts if v is not None and v.passed)
        score = summary_score(
            yes,
            len(questions),
            len(response),
            len(source),
            coeff=self.coeff,
            length_penalty=self.length_penalty,
        )
        unanswered = sum(1 for v in verdicts if v is None)
        note = f" ({unanswered} left unanswered by the judge, counted as no)" if unanswered else ""
        return MetricResult(
            score,
            reason=f"the summary answers {yes} of {len(questions)} key questions{note}; "
            f"{len(response)} of {len(source)} characters",
            details={
                "keyphrases": keyphrases,
                "questions": questions,
                "answers": [v.label if v else None for v in verdicts],
            },
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        sample = single_turn(sample)  # the kind it accepts
        text = sum(len(c) for c in sample.reference_contexts or []) // 4
        pieces = len(chunk_text(join_contexts(sample.reference_contexts or [])))
        return CallEstimate(
            requests=1 + pieces,
            input_tokens=350 * (1 + pieces) + text + len(sample.response or "") // 4,
            output_tokens=200 * pieces,
        )


SummarizationScore = SummaryScore

__all__ = ["SummarizationScore", "SummaryScore", "summary_score"]
