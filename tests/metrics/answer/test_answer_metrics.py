"""Semantic similarity, answer correctness and summary score, with scripted judges and vectors."""

from __future__ import annotations

import json
import math

import pytest

from assay.metrics.answer.answer_correctness import (
    AnswerCorrectness,
    answer_correctness_score,
    factuality,
)
from assay.metrics.answer.semantic_similarity import SemanticSimilarity
from assay.metrics.answer.summary_score import SummaryScore, summary_score
from assay.metrics.judge import Verdict
from assay.models.types import ModelRequest
from tests.metrics.rag.scripted import embedder, judge

RESPONSE = "The first superbowl was held on Jan 15, 1967"
REFERENCE = "The first superbowl was held on January 15, 1967"
# Two unit vectors with cosine exactly 0.8.
VECTORS = {RESPONSE: [1.0, 0.0], REFERENCE: [0.8, 0.6]}


def test_semantic_similarity_is_the_cosine():
    metric = SemanticSimilarity(embeddings=embedder(VECTORS))
    assert metric.score(response=RESPONSE, reference=REFERENCE).value == pytest.approx(0.8)
    passed = SemanticSimilarity(embeddings=embedder(VECTORS), threshold=0.9)
    assert passed.score(response=RESPONSE, reference=REFERENCE).value == 0.0


def superbowl(request: ModelRequest) -> str:
    text = request.messages[-1].content
    if "<text>" in text:
        return json.dumps({"claims": ["The first Super Bowl was held on 15 January 1967."]})
    return "1. yes"


@pytest.mark.parametrize(("statements", "requests"), [("claims", 4), ("sentences", 2)])
def test_answer_correctness_point_95_pattern(statements, requests):
    llm, provider = judge(superbowl, repeat_last=True)
    result = AnswerCorrectness(llm=llm, embeddings=embedder(VECTORS), statements=statements).score(
        user_input="When was the first super bowl?", response=RESPONSE, reference=REFERENCE
    )
    assert len(provider.requests) == requests  # two splits (claims only) and two support checks
    # factuality 1.0 (one statement each way, both supported), similarity 0.8: 0.75 * 1 + 0.25 * 0.8
    assert result.value == pytest.approx(0.95)
    assert result.details["factuality"] == 1.0
    expected = (
        "The first Super Bowl was held on 15 January 1967." if statements == "claims" else RESPONSE
    )
    assert result.details["response_claims"][0]["claim"] == expected


def test_answer_correctness_passes_statements_per_call_to_both_checks():
    two_sentences = REFERENCE + ". It was played in Los Angeles."
    seen: list[str] = []

    def one_at_a_time(request: ModelRequest) -> str:
        items = request.messages[-1].content.split("<items>")[1]
        seen.append(items)
        return "1. no" if "Los Angeles" in items else "1. yes"

    llm, provider = judge(one_at_a_time, repeat_last=True)
    metric = AnswerCorrectness(
        llm=llm, embeddings=embedder(VECTORS), weights=[1.0, 0.0], statements_per_call=1
    )
    result = metric.score(
        user_input="When was the first super bowl?", response=RESPONSE, reference=two_sentences
    )
    # response: 1 statement (1 call); reference: 2 statements asked one per call (2 calls)
    assert len(provider.requests) == 3 and all("\n2. " not in items for items in seen)
    # TP 1, FP 0, FN 1: factuality = F1 = 2/3
    assert result.details["factuality"] == pytest.approx(2 / 3, abs=0.01)
    with pytest.raises(ValueError, match="statements_per_call"):
        AnswerCorrectness(statements_per_call=0)


def test_answer_correctness_maths():
    yes, no = Verdict("yes", 1.0), Verdict("no", 0.0)
    # Einstein: TP [1879], FP [Spain], FN [Germany] -> 1 / (1 + 0.5 * 2) = 0.5
    assert factuality([yes, no], [yes, no]) == 0.5
    assert factuality([], []) == 1.0
    assert answer_correctness_score(0.5, 1.0, (0.75, 0.25)) == 0.625
    with pytest.raises(ValueError):
        AnswerCorrectness(weights=[0.0, 0.0])


def test_summary_score_vector():
    source = "s" * 310
    summary = "m" * 183
    questions = json.dumps(
        {"keyphrases": ["k"] * 8, "questions": [f"Question {i}?" for i in range(8)]}
    )
    llm, _ = judge(questions, "\n".join(f"{i}. {'no' if i == 8 else 'yes'}" for i in range(1, 9)))
    result = SummaryScore(llm=llm).score(reference_contexts=[source], response=summary)
    assert result.value == 0.6423387096775146
    assert summary_score(7, 8, 183, 310) == 0.6423387096775146
    assert summary_score(7, 8, 183, 310, length_penalty=False) == 7 / 8
    assert math.isclose(summary_score(8, 8, 0, 310), 1.0)


def test_summary_score_names_questions_the_judge_left_unanswered():
    questions = json.dumps({"keyphrases": ["k"], "questions": ["Q one?", "Q two?", "Q three?"]})
    llm, _ = judge(questions, "1. yes\n2. yes")
    result = SummaryScore(llm=llm, length_penalty=False).score(
        reference_contexts=["s" * 100], response="m"
    )
    assert result.value == 2 / 3
    assert (
        "answers 2 of 3 key questions (1 left unanswered by the judge, counted as no)"
        in result.reason
    )
    assert result.details["answers"] == ["yes", "yes", None]
