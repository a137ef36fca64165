"""Answer metrics end to end: the real model path against the loopback fake OpenAI server.

As in `tests/metrics/rag/test_end_to_end.py`: models from `llm_factory` / `embedding_factory`
pointed at 127.0.0.1, every prompt answered by a scripted reply, vectors from a scripted table,
scores computed by hand, and the requests on the wire counted and read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from assay import evaluate
from assay.metrics.answer import (
    AnswerCorrectness,
    AnswerSimilarity,
    SemanticSimilarity,
    SummarizationScore,
    SummaryScore,
)
from assay.metrics.rag import FactualCorrectness
from assay.models import llm_factory
from assay.schema.outcome import Ok, Skipped
from tests.metrics.loopback import (
    FAST_RETRY,
    Loopback,
    by_input,
    check_calls,
    claims,
    fenced,
    loopback,
    numbered,
    schema_name,
    verdict_lines,
)


@pytest.fixture
def loop() -> Iterator[Loopback]:
    yield from loopback()


# -- Answer correctness -----------------------------------------------------------------------
AUSTEN_Q = "Who wrote Pride and Prejudice, and when was it published?"
AUSTEN_RESPONSE = (
    "Jane Austen wrote Pride and Prejudice. It was published in 1813. John Murray published it."
)
AUSTEN_REFERENCE = (
    "Pride and Prejudice was written by Jane Austen. It was published in 1813. "
    "Thomas Egerton published it."
)
RESPONSE_SENTENCES = [
    "Jane Austen wrote Pride and Prejudice.",
    "It was published in 1813.",
    "John Murray published it.",
]
REFERENCE_SENTENCES = [
    "Pride and Prejudice was written by Jane Austen.",
    "It was published in 1813.",
    "Thomas Egerton published it.",
]
RESPONSE_CLAIMS = [
    "Jane Austen wrote Pride and Prejudice.",
    "Pride and Prejudice was published in 1813.",
    "Pride and Prejudice was published by John Murray.",
]
REFERENCE_CLAIMS = [
    "Jane Austen wrote Pride and Prejudice.",
    "Pride and Prejudice was published in 1813.",
    "Pride and Prejudice was published by Thomas Egerton.",
]
AUSTEN_ROW = {"user_input": AUSTEN_Q, "response": AUSTEN_RESPONSE, "reference": AUSTEN_REFERENCE}
# cosine([3, 4, 0], [4, 3, 0]) = 24 / 25 = 0.96
AUSTEN_VECTORS = {AUSTEN_RESPONSE: [3.0, 4.0, 0.0], AUSTEN_REFERENCE: [4.0, 3.0, 0.0]}


def script_austen(loop: Loopback) -> None:
    # The same verdicts whether the statements are sentences or claims.
    loop.judge(
        {
            "claims.coarse": by_input(
                "text",
                {
                    AUSTEN_RESPONSE: claims(*RESPONSE_CLAIMS),
                    AUSTEN_REFERENCE: claims(*REFERENCE_CLAIMS),
                },
            ),
            "supported": by_input(
                "source",
                {
                    AUSTEN_REFERENCE: verdict_lines(
                        "yes", "yes", "no"
                    ),  # response side: TP 2, FP 1
                    AUSTEN_RESPONSE: verdict_lines("yes", "yes", "no"),  # reference side: FN 1
                },
            ),
        }
    )
    loop.vectors(AUSTEN_VECTORS)


@pytest.mark.parametrize(
    ("statements", "chat", "response_side", "reference_side"),
    [
        # the default: each sentence is a statement, two support checks and no split call
        ("sentences", 2, RESPONSE_SENTENCES, REFERENCE_SENTENCES),
        # the judge splits both texts into claims first
        ("claims", 4, RESPONSE_CLAIMS, REFERENCE_CLAIMS),
    ],
)
def test_answer_correctness_blends_statement_f1_with_embedding_similarity(
    loop, statements, chat, response_side, reference_side
):
    script_austen(loop)
    options = {} if statements == "sentences" else {"statements": statements}
    metric = AnswerCorrectness(llm=loop.llm(), embeddings=loop.embeddings(), **options)

    outcome, usage = loop.run(metric, AUSTEN_ROW)

    # factuality = TP / (TP + (FP + FN) / 2) = 2 / (2 + 1) = 2/3; similarity 0.96
    # score = 0.75 * 2/3 + 0.25 * 0.96 = 0.5 + 0.24 = 0.74
    assert isinstance(outcome, Ok)
    assert outcome.value == pytest.approx(0.74)
    assert outcome.reason == "factuality 0.67, similarity 0.96"
    assert outcome.details["factuality"] == pytest.approx(2 / 3)
    assert outcome.details["similarity"] == pytest.approx(0.96)
    assert [(c["claim"], c["verdict"]) for c in outcome.details["response_claims"]] == list(
        zip(response_side, ["yes", "yes", "no"], strict=True)
    )
    assert [(c["claim"], c["verdict"]) for c in outcome.details["reference_claims"]] == list(
        zip(reference_side, ["yes", "yes", "no"], strict=True)
    )
    check_calls(loop, usage, metric, AUSTEN_ROW, chat=chat, embeddings=1)
    if statements == "sentences":
        assert loop.prompt_counts() == {"supported": 2}
    else:
        assert loop.prompt_counts() == {"claims.coarse": 2, "supported": 2}
        assert {schema_name(r) for r in loop.sent("claims.coarse")} == {"ClaimList"}
        assert {fenced(r, "question") for r in loop.sent("claims.coarse")} == {AUSTEN_Q}
    items = {fenced(r, "source"): fenced(r, "items") for r in loop.sent("supported")}
    assert items == {
        AUSTEN_REFERENCE: numbered(response_side),
        AUSTEN_RESPONSE: numbered(reference_side),
    }
    assert loop.embedding_batches == [[AUSTEN_RESPONSE, AUSTEN_REFERENCE]]


@pytest.mark.parametrize(
    ("options", "expected", "embedding_batches"),
    [
        ({"threshold": 0.7}, 1.0, 1),  # 0.74 >= 0.7
        ({"threshold": 0.75}, 0.0, 1),  # 0.74 < 0.75
        ({"weights": [1.0, 0.0]}, 2 / 3, 0),  # factuality only: no embedding request at all
        ({"weights": [1.0, 1.0]}, (2 / 3 + 0.96) / 2, 1),  # weights are normalised
    ],
)
def test_answer_correctness_threshold_and_weights(loop, options, expected, embedding_batches):
    script_austen(loop)
    metric = AnswerCorrectness(llm=loop.llm(), embeddings=loop.embeddings(), **options)

    outcome, usage = loop.run(metric, AUSTEN_ROW)

    assert outcome.value == pytest.approx(expected)
    assert len(loop.chat) == 2
    assert len(loop.embedding_batches) == embedding_batches
    assert usage.requests == 2 + embedding_batches


def test_answer_correctness_with_claims_shares_its_requests_with_factual_correctness(
    loop, tmp_path
):
    script_austen(loop)
    llm = llm_factory(
        loop.server.model_string("judge"), cache=tmp_path / "cache.sqlite", retry=FAST_RETRY
    )
    metrics = [
        AnswerCorrectness(statements="claims", embeddings=loop.embeddings()),
        FactualCorrectness(statements="claims"),
    ]

    result = evaluate([AUSTEN_ROW], metrics, llm=llm, show_progress=False)

    assert result.outcome(0, "answer_correctness").value == pytest.approx(0.74)
    # P = 2/3, R = 2/3 -> F1 = 2/3 -> 0.67
    assert result.outcome(0, "factual_correctness").value == 0.67
    # both ask for the same two splits and the same two checks: 4 requests reach the judge
    assert loop.prompt_counts() == {"claims.coarse": 2, "supported": 2}
    assert result.usage().requests == 4 + 1 and result.usage().cached_requests == 4


def test_answer_correctness_leaves_out_a_statement_the_judge_skipped_and_says_so(loop):
    loop.judge(
        {
            "supported": by_input(
                "source",
                {
                    AUSTEN_REFERENCE: verdict_lines(
                        "yes", "yes"
                    ),  # the third response sentence is skipped
                    AUSTEN_RESPONSE: verdict_lines("yes", "yes", "no"),
                },
            )
        }
    )
    loop.vectors(AUSTEN_VECTORS)

    outcome, _ = loop.run(
        AnswerCorrectness(llm=loop.llm(), embeddings=loop.embeddings()), AUSTEN_ROW
    )

    # TP 2, FP 0, FN 1: factuality 2 / (2 + 0.5) = 0.8; score 0.75 * 0.8 + 0.25 * 0.96 = 0.84
    assert outcome.value == pytest.approx(0.84)
    assert outcome.details["unjudged"] == [RESPONSE_SENTENCES[2]]
    assert outcome.reason == (
        "factuality 0.80, similarity 0.96; the judge gave no verdict on 1 item(s), "
        "left out of the score"
    )


def test_answer_correctness_skips_a_blank_response_without_calling_a_model(loop):
    script_austen(loop)

    outcome, usage = loop.run(
        AnswerCorrectness(llm=loop.llm(), embeddings=loop.embeddings()),
        {**AUSTEN_ROW, "response": "  "},
    )

    assert outcome == Skipped(reason="the response is empty")
    assert loop.server.count == 0 and usage.requests == 0


# -- Semantic similarity ----------------------------------------------------------------------
def test_semantic_similarity_is_the_cosine_of_one_embedding_batch(loop):
    loop.vectors({"The cat sat.": [1.0, 2.0, 2.0], "A cat was sitting.": [2.0, 1.0, 2.0]})
    metric = SemanticSimilarity(embeddings=loop.embeddings())
    row = {"response": "The cat sat.", "reference": "A cat was sitting."}

    outcome, usage = loop.run(metric, row)

    # (1*2 + 2*1 + 2*2) / (3 * 3) = 8/9
    assert isinstance(outcome, Ok)
    assert outcome.value == pytest.approx(8 / 9)
    assert outcome.reason == "cosine similarity 0.8889"
    check_calls(loop, usage, metric, row, chat=0, embeddings=1)
    assert loop.embedding_batches == [["The cat sat.", "A cat was sitting."]]
    assert AnswerSimilarity is SemanticSimilarity


@pytest.mark.parametrize(("threshold", "expected"), [(0.85, 1.0), (0.9, 0.0)])
def test_semantic_similarity_threshold_gives_a_pass_mark(loop, threshold, expected):
    loop.vectors({"The cat sat.": [1.0, 2.0, 2.0], "A cat was sitting.": [2.0, 1.0, 2.0]})

    outcome, _ = loop.run(
        SemanticSimilarity(embeddings=loop.embeddings(), threshold=threshold),
        {"response": "The cat sat.", "reference": "A cat was sitting."},
    )

    assert outcome.value == expected  # 8/9 = 0.8889 against the threshold
    assert outcome.reason == f"cosine 0.8889 vs threshold {threshold}"


def test_semantic_similarity_skips_a_blank_reference_without_embedding(loop):
    loop.vectors({})

    outcome, _ = loop.run(
        SemanticSimilarity(embeddings=loop.embeddings()),
        {"response": "The cat sat.", "reference": " "},
    )

    assert outcome == Skipped(reason="the response or the reference is empty")
    assert loop.server.count == 0


# -- Summary score ----------------------------------------------------------------------------
SOURCE = [
    "Greenfield Library opened in 1962 in the centre of Millbrook and is run by the town "
    "council today.",
    "It lends about 40,000 books a year, runs free coding classes for teenagers and opens on "
    "Sundays too.",
]
SUMMARY = "Greenfield Library (1962) lends 40,000 books a year; it teaches teenagers coding"
KEYPHRASES = ["Greenfield Library", "1962", "40,000 books a year", "open on Sundays"]
QUESTIONS = [
    "Is the library called Greenfield Library?",
    "Did the library open in 1962?",
    "Is the library open on Sundays?",
    "Does the library lend about 40,000 books a year?",
]
SUMMARY_ROW = {"reference_contexts": SOURCE, "response": SUMMARY}


def script_summary(loop: Loopback, answers: str) -> None:
    loop.judge(
        {
            "summary_questions": json.dumps({"keyphrases": KEYPHRASES, "questions": QUESTIONS}),
            "summary_answers": answers,
        }
    )


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        # qa = 3/4; conciseness = 1 - 80/200 = 0.6; 0.5 * 0.75 + 0.5 * 0.6 = 0.675
        ({}, 0.675),
        # qa only
        ({"length_penalty": False}, 0.75),
        # 0.8 * 0.75 + 0.2 * 0.6 = 0.72
        ({"coeff": 0.2}, 0.72),
    ],
)
def test_summary_score_asks_key_questions_then_answers_them_from_the_summary(
    loop, options, expected
):
    assert len("\n\n".join(SOURCE)) == 200 and len(SUMMARY) == 80
    script_summary(loop, verdict_lines("yes", "yes", "no", "yes"))
    metric = SummaryScore(llm=loop.llm(), **options)

    outcome, usage = loop.run(metric, SUMMARY_ROW)

    assert isinstance(outcome, Ok)
    assert outcome.value == pytest.approx(expected)
    assert outcome.reason == "the summary answers 3 of 4 key questions; 80 of 200 characters"
    assert outcome.details == {
        "keyphrases": KEYPHRASES,
        "questions": QUESTIONS,
        "answers": ["yes", "yes", "no", "yes"],
    }
    check_calls(loop, usage, metric, SUMMARY_ROW, chat=2)
    assert loop.prompts_sent() == ["summary_questions", "summary_answers"]
    ask, answer = loop.chat
    assert schema_name(ask) == "KeyQuestions"
    assert fenced(ask, "text") == "\n\n".join(SOURCE)
    assert fenced(answer, "summary") == SUMMARY
    assert fenced(answer, "items") == numbered(QUESTIONS)
    assert "Greenfield Library opened" not in answer.last_user_text  # the source is not shown
    assert SummarizationScore is SummaryScore


def test_summary_score_counts_an_unanswered_question_as_not_answered_and_shows_it(loop):
    script_summary(loop, verdict_lines("yes", "yes", "no"))

    outcome, _ = loop.run(SummaryScore(llm=loop.llm(), length_penalty=False), SUMMARY_ROW)

    # the fourth question got no answer: 2 yes of 4 questions
    assert outcome.value == 0.5
    assert outcome.details["answers"] == ["yes", "yes", "no", None]


def test_summary_score_is_skipped_when_no_key_question_can_be_drawn(loop):
    loop.judge({"summary_questions": json.dumps({"keyphrases": [], "questions": []})})

    result = evaluate(
        [SUMMARY_ROW, {**SUMMARY_ROW, "response": " "}],
        [SummaryScore(llm=loop.llm())],
        show_progress=False,
    )

    assert result.outcome(0, "summary_score") == Skipped(
        reason="no key questions could be drawn from the source text"
    )
    assert result.outcome(1, "summary_score") == Skipped(
        reason="the source text or the summary is empty"
    )
    assert loop.prompts_sent() == ["summary_questions"]
