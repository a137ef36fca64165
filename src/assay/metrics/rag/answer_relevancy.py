"""Answer relevancy: does the response address the question that was asked?

`method="graded"` (the default): one call rating completeness on 2/1/0 (every part answered
directly / only in part / not answered); the score is the expected grade over the judge's
probabilities, over 2. It separates a partial answer from a complete one where a yes/no verdict
puts both near yes. One call, no embeddings.

`method="verdict"`: one yes/no question to the judge, "does this response answer every part of
the question, directly?", scored as P(yes) from the answer token's probabilities.

`method="questions"` (Ragas' algorithm): the judge writes `strictness` questions the response
would answer (one call) and says whether the response is noncommittal. Score = mean cosine
similarity between the user's question and the generated ones, set to 0 for a noncommittal
response. As in Ragas, the range is that of a cosine, [-1, 1]: a response whose questions point
away from the asked one scores below 0 (the mean is also kept in the details).

`strictness` is how many questions `method="questions"` generates (1 to 10, default 3). The verdict
and graded methods ask once and do not use it.

Why the default differs from Ragas: generated questions reward a partial answer that restates
the question as much as a complete one. With the embedded judge, questions rank WikiEval's good
over poor answers 0.46 of the time (chance) and reach ROC-AUC 0.66 on ARES; the verdict reaches
0.80 and 0.96. Why graded over the verdict: on the dev split of the constructed
`ragchecker-relevance` pairs it ranks a whole response above its first half 0.45 of the time
against the verdict's 0.25 (0.72 against 0.61 over all 138 pairs), equal on RAGChecker's dev
preferences; held out, WikiEval 0.82 against 0.80, at 2 s and one call per item
(benchmarks/results).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from assay.errors import NotApplicable
from assay.metrics.base import CallEstimate, single_turn
from assay.metrics.judge import ask_json, ask_rating, ask_yes_no
from assay.metrics.llm_metric import LLMMetric
from assay.prompts.render import render
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample


class GeneratedQuestions(BaseModel):
    # The bounds go to the judge's JSON schema (a local judge's grammar enforces them, so a looping
    # small model cannot write questions forever); parsing does not reject a longer list, it is cut.
    questions: list[str] = Field(default_factory=list, json_schema_extra={"maxItems": 10})
    noncommittal: int = Field(default=0, ge=0, le=1)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def answer_relevancy_score(
    question_vector: Sequence[float], generated_vectors: list[Sequence[float]], noncommittal: bool
) -> tuple[float, float]:
    """Pure scoring: (score, mean cosine). The score is the mean cosine, in [-1, 1] as in Ragas,
    or 0 for a noncommittal response."""
    raw = sum(cosine(question_vector, v) for v in generated_vectors) / len(generated_vectors)
    score = 0.0 if noncommittal else min(1.0, max(-1.0, raw))  # bounds only absorb rounding
    return score, raw


METHODS = ("questions", "verdict", "graded")
COMPLETENESS_GRADES = {"2": 2.0, "1": 1.0, "0": 0.0}


@dataclass(kw_only=True)
class AnswerRelevancy(LLMMetric):
    name: str = "answer_relevancy"
    embeddings: Any = None
    strictness: int = 3
    method: str = "graded"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if not 1 <= self.strictness <= 10:
            raise ValueError(f"strictness must be between 1 and 10, got {self.strictness}")

    @property
    def needs_embeddings(self) -> bool:  # type: ignore[override]  # follows `method`, per instance
        return self.method == "questions"

    @property
    def prompt_ids(self) -> tuple[str, ...]:
        return {
            "questions": ("answer_relevancy",),
            "verdict": ("answers_question",),
            "graded": ("rating_answer_completeness",),
        }[self.method]

    async def _ascore(self, *, user_input: str, response: str) -> MetricResult:
        if not response.strip():
            raise NotApplicable("the response is empty")
        if self.method == "verdict":
            return await self._verdict(user_input, response)
        if self.method == "graded":
            return await self._graded(user_input, response)
        generated = await ask_json(
            self.llm,
            self.judge_prompt("answer_relevancy"),
            {"count": self.strictness, "answer": response},
            GeneratedQuestions,
            max_tokens=64 * self.strictness + 48,
        )
        questions = [q.strip() for q in generated.questions if q and q.strip()][: self.strictness]
        if not questions:
            raise NotApplicable("the judge could not name any question this response answers")
        vectors = await self.embeddings.aembed_texts([user_input, *questions])
        score, raw = answer_relevancy_score(vectors[0], vectors[1:], bool(generated.noncommittal))
        reason = (
            "the response is noncommittal"
            if generated.noncommittal
            else f"the response answers questions like {questions[0]!r}"
        )
        return MetricResult(
            score,
            reason=reason,
            details={
                "generated_questions": questions,
                "noncommittal": bool(generated.noncommittal),
                "mean_cosine": raw,
            },
        )

    async def _verdict(self, question: str, response: str) -> MetricResult:
        messages = render(
            self.judge_prompt("answers_question"), {"question": question, "response": response}
        )
        verdict = await ask_yes_no(self.llm, messages)
        reason = (
            "the response answers the question"
            if verdict.passed
            else "the response does not fully answer the question"
        )
        return MetricResult(verdict.probability, reason=reason, details={"label": verdict.label})

    async def _graded(self, question: str, response: str) -> MetricResult:
        rating = await ask_rating(
            self.llm,
            self.judge_prompt("rating_answer_completeness"),
            {"question": question, "response": response},
        )
        reason = {
            "2": "the response answers every part of the question",
            "1": "the response answers the question only in part",
            "0": "the response does not answer the question",
        }[rating.label]
        return MetricResult(
            rating.expected(COMPLETENESS_GRADES) / 2,
            reason=reason,
            details={"grade": int(rating.label), "distribution": rating.distribution},
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        sample = single_turn(sample)  # the kind it accepts
        response = len(sample.response or "") // 4
        if self.method != "questions":
            return CallEstimate(
                requests=1,
                input_tokens=350 + response + len(sample.user_input or "") // 4,
                output_tokens=2,
            )
        return CallEstimate(
            requests=1,
            input_tokens=450 + response,
            output_tokens=25 * self.strictness,
            embedding_tokens=(len(sample.user_input or "") // 4) + 20 * self.strictness,
        )


ResponseRelevancy = AnswerRelevancy

__all__ = ["AnswerRelevancy", "ResponseRelevancy", "answer_relevancy_score", "cosine"]
