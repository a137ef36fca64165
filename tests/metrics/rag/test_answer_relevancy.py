"""Answer relevancy, method="questions": cosine between the question and generated questions; 0 when noncommittal."""

from __future__ import annotations

import json

import pytest

from assay.metrics.rag.answer_relevancy import AnswerRelevancy, answer_relevancy_score
from tests.metrics.rag.scripted import embedder, judge

VECTORS = {
    "Where is the Eiffel Tower?": [1.0, 0.0],
    "Where is the Eiffel Tower located?": [1.0, 0.0],
    "In which city is the Eiffel Tower?": [0.6, 0.8],
    "What is in Paris?": [0.0, 1.0],
}


def questions(noncommittal: int = 0) -> str:
    return json.dumps(
        {
            "questions": [
                "Where is the Eiffel Tower located?",
                "In which city is the Eiffel Tower?",
                "What is in Paris?",
            ],
            "noncommittal": noncommittal,
        }
    )


def test_mean_cosine_of_generated_questions():
    llm, _ = judge(questions())
    result = AnswerRelevancy(llm=llm, embeddings=embedder(VECTORS), method="questions").score(
        user_input="Where is the Eiffel Tower?", response="It is in Paris."
    )
    assert result.value == pytest.approx((1.0 + 0.6 + 0.0) / 3)
    assert result.details["generated_questions"][0] == "Where is the Eiffel Tower located?"


def test_noncommittal_scores_zero():
    llm, _ = judge(questions(noncommittal=1))
    result = AnswerRelevancy(llm=llm, embeddings=embedder(VECTORS), method="questions").score(
        user_input="Where is the Eiffel Tower?", response="I am not sure."
    )
    assert result.value == 0.0 and result.reason == "the response is noncommittal"


def test_the_questions_method_keeps_ragas_range_a_cosine_can_be_negative():
    """Issue #15, 6: Ragas' answer relevancy is a mean cosine, so it can be below 0; it is not clipped."""
    score, raw = answer_relevancy_score([1.0, 0.0], [[-1.0, 0.0]], noncommittal=False)
    assert score == -1.0 and raw == -1.0
    score, _ = answer_relevancy_score([1.0, 0.0], [[-1.0, 0.0], [0.0, 1.0]], noncommittal=False)
    assert score == pytest.approx(-0.5)
    assert answer_relevancy_score([1.0, 0.0], [[-1.0, 0.0]], noncommittal=True)[0] == 0.0


def test_strictness_bounds():
    with pytest.raises(ValueError):
        AnswerRelevancy(strictness=0)


def test_the_default_is_the_graded_method_without_embeddings():
    metric = AnswerRelevancy()
    assert metric.method == "graded" and not metric.needs_embeddings
    assert metric.prompt_ids == ("rating_answer_completeness",)
    assert AnswerRelevancy(method="verdict").prompt_ids == ("answers_question",)
    assert AnswerRelevancy(method="questions").needs_embeddings
