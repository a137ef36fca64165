"""Sources longer than one judge window are read piece by piece, never cut: each piece reaches the
judge, and the pieces' answers are merged the way each metric defines."""

from __future__ import annotations

import json

import pytest

from assay.metrics.answer.summary_score import SummaryScore
from assay.metrics.rag.claims import MAX_SOURCE_CHARS, chunk_text
from assay.metrics.rag.context_entity_recall import ContextEntityRecall
from assay.metrics.rag.context_precision import ContextPrecision
from assay.metrics.rag.context_recall import LLMContextRecall
from assay.metrics.rag.dual_judge import AnswerAccuracy, ContextRelevance, ResponseGroundedness
from assay.metrics.rag.factual_correctness import FactualCorrectness
from assay.metrics.rag.faithfulness import Faithfulness
from assay.metrics.rag.noise_sensitivity import NoiseSensitivity
from assay.models.types import ModelRequest
from assay.schema.samples import SingleTurnSample
from tests.metrics.rag.scripted import judge

# Filler sentences make a context longer than one window; a marker sentence sits in the second half.
FILLER = "The committee met on a Tuesday and discussed the weather at some length. "
FIRST_HALF = FILLER * (MAX_SOURCE_CHARS // len(FILLER))
SECOND_HALF = "The Zephyr bridge was opened by Mayor Ilsa Brandt in 1931. " + FILLER * 10
LONG_CONTEXT = FIRST_HALF + SECOND_HALF


def user_text(request: ModelRequest) -> str:
    return str(request.messages[-1].content)


def test_the_long_context_really_needs_two_pieces():
    pieces = chunk_text(LONG_CONTEXT)
    assert len(pieces) == 2
    assert all(len(piece) <= MAX_SOURCE_CHARS for piece in pieces)
    assert "Zephyr" in pieces[1] and "Zephyr" not in pieces[0]


def test_entity_recall_pools_the_entities_of_every_piece():
    def answer(request: ModelRequest) -> str:
        text = user_text(request)
        if "Tuesday" not in text:  # the reference
            return json.dumps({"entities": ["Zephyr bridge", "Ilsa Brandt", "1931"]})
        if "Zephyr" in text:  # the piece holding the marker
            return json.dumps({"entities": ["Zephyr Bridge", "Ilsa Brandt", "1931"]})
        return json.dumps({"entities": ["committee"]})

    llm, provider = judge(answer, repeat_last=True)
    metric = ContextEntityRecall(llm=llm)
    sample = {
        "reference": "Mayor Ilsa Brandt opened the Zephyr bridge in 1931.",
        "retrieved_contexts": [LONG_CONTEXT],
    }
    result = metric.score(**sample)
    # 3 reference entities, all found in the second piece (case folded): 3 / (3 + 1e-8).
    assert result.value == 3 / (3 + 1e-8)
    assert len(provider.requests) == 3  # the reference, then two context pieces
    assert all(len(user_text(r)) < MAX_SOURCE_CHARS + 2000 for r in provider.requests)
    assert sorted(result.details["context_entities"]) == [
        "1931",
        "Ilsa Brandt",
        "Zephyr Bridge",
        "committee",
    ]
    assert metric.estimate(SingleTurnSample(**sample)).requests == 3


def test_context_relevance_takes_each_judges_best_piece():
    def answer(request: ModelRequest) -> str:
        return "2" if "Zephyr" in user_text(request) else "0"

    llm, provider = judge(answer, repeat_last=True)
    result = ContextRelevance(llm=llm).score(
        user_input="Who opened the Zephyr bridge?", retrieved_contexts=[LONG_CONTEXT]
    )
    # Both judges rate piece 1 "0" and piece 2 "2"; each keeps its best (2/2 = 1.0); mean 1.0.
    assert result.value == 1.0
    assert len(provider.requests) == 4  # two prompts x two pieces
    assert result.details["ratings"] == ["2", "2"]


def test_groundedness_on_a_long_context_still_falls_back_per_judge():
    def answer(request: ModelRequest) -> str:
        system = str(request.messages[0].content)
        first_prompt = (
            ResponseGroundedness(llm=None)
            .judge_prompt("rating_groundedness")
            .instruction.split("\n")[0]
        )
        if first_prompt in system:
            return "1" if "Zephyr" in user_text(request) else "0"
        return "not a rating"

    llm, provider = judge(answer, repeat_last=True)
    result = ResponseGroundedness(llm=llm).score(
        response="Ilsa Brandt opened the bridge.", retrieved_contexts=[LONG_CONTEXT]
    )
    # The first judge's best piece rates 1 of 2 (0.5); the second judge never rates: 0.5 alone.
    assert result.value == 0.5
    assert result.details["ratings"] == ["1", "invalid"]
    assert len(provider.requests) == 4


def test_answer_accuracy_has_no_context_to_split():
    llm, provider = judge("4", "2")
    result = AnswerAccuracy(llm=llm).score(user_input="q", response="a " * 4000, reference="b")
    assert len(provider.requests) == 2
    assert result.value == (1.0 + 0.5) / 2


def test_summary_score_asks_for_key_questions_piece_by_piece():
    def answer(request: ModelRequest) -> str:
        text = user_text(request)
        if request.output is not None:  # key questions for one piece
            if "Zephyr" in text:
                return json.dumps(
                    {
                        "keyphrases": ["Zephyr bridge"],
                        "questions": ["Was the Zephyr bridge opened in 1931?"],
                    }
                )
            return json.dumps(
                {"keyphrases": ["committee"], "questions": ["Did the committee meet on a Tuesday?"]}
            )
        return "1. yes\n2. no"

    llm, provider = judge(answer, repeat_last=True)
    summary = "The committee met; the Zephyr bridge opened."
    result = SummaryScore(llm=llm).score(reference_contexts=[LONG_CONTEXT], response=summary)
    assert len(provider.requests) == 3  # two question calls, one answer call
    assert result.details["questions"] == [
        "Did the committee meet on a Tuesday?",
        "Was the Zephyr bridge opened in 1931?",
    ]
    # qa = 1/2; conciseness = 1 - len(summary)/len(source); score = mean of the two (coeff 0.5).
    source_chars = len(LONG_CONTEXT.strip())
    assert result.value == 0.5 * 0.5 + (1 - len(summary) / (source_chars + 1e-10)) * 0.5


@pytest.mark.parametrize(
    "metric_class",
    [
        ContextPrecision,
        LLMContextRecall,
        ContextRelevance,
        ResponseGroundedness,
        AnswerAccuracy,
        Faithfulness,
        FactualCorrectness,
    ],
)
def test_a_misspelt_scoring_mode_is_refused(metric_class):
    with pytest.raises(
        ValueError, match="scoring must be one of 'probability', 'binary', got 'Binary'"
    ):
        metric_class(scoring="Binary")


LONG_SAMPLE = {
    "user_input": "Who opened the Zephyr bridge?",
    "response": "Ilsa Brandt opened it. It was 1931.",
    "reference": "Mayor Ilsa Brandt opened the Zephyr bridge in 1931.",
    "retrieved_contexts": [LONG_CONTEXT, "A short passage."],
}


@pytest.mark.parametrize(
    ("metric", "requests"),
    [
        (
            Faithfulness(statements="claims"),
            3,
        ),  # a split, then one verdict call per piece of the joined contexts
        (Faithfulness(statements="sentences"), 2),
        (LLMContextRecall(), 2),
        (NoiseSensitivity(), 2 + 1 + 3),  # two splits, the reference check, 2 + 1 context pieces
    ],
)
def test_estimates_count_the_pieces_of_long_contexts(metric, requests):
    assert metric.estimate(SingleTurnSample(**LONG_SAMPLE)).requests == requests
