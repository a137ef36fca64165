"""RAG metrics end to end: the real model path against the loopback fake OpenAI server.

Each metric gets an LLM from `llm_factory("vllm/judge@http://127.0.0.1:<port>/v1")` (and
embeddings from `embedding_factory`), and is run through `evaluate`. The server answers every
metric prompt with a fixed reply scripted here (`tests/metrics/loopback.py`), so each score is
computed by hand from those replies. Every test also pins what went over the wire: which prompts,
how many requests (against the engine's usage meter and `metric.estimate()`), and the inputs the
judge saw.

Unless a test scripts token probabilities itself, the fake server's log-probabilities put all of
a verdict's mass on the word written, so P(yes) is exactly 1.0 or 0.0 and "probability" scoring
equals "binary" scoring.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import pytest

from assay import evaluate
from assay.metrics.rag import (
    AnswerAccuracy,
    AnswerRelevancy,
    ContextEntityRecall,
    ContextPrecision,
    ContextRecall,
    ContextRelevance,
    ContextUtilization,
    FactualCorrectness,
    Faithfulness,
    LLMContextPrecisionWithoutReference,
    LLMContextPrecisionWithReference,
    LLMContextRecall,
    MultiModalFaithfulness,
    MultiModalRelevance,
    NoiseSensitivity,
    ResponseGroundedness,
    ResponseRelevancy,
)
from assay.metrics.rag.claims import MAX_SOURCE_CHARS
from assay.metrics.registry import create_metric
from assay.models import llm_factory
from assay.schema.outcome import Error, Ok, Skipped
from tests.metrics.loopback import (
    FAST_RETRY,
    Loopback,
    WithLogprobs,
    by_input,
    check_calls,
    claims,
    entities,
    fenced,
    loopback,
    numbered,
    rating_with_probabilities,
    schema_name,
    verdict_lines,
    verdicts_with_probabilities,
)


@pytest.fixture
def loop() -> Iterator[Loopback]:
    yield from loopback()


# -- Faithfulness -----------------------------------------------------------------------------
CURIE_Q = "What is Marie Curie known for?"
CURIE_RESPONSE = (
    "Marie Curie won two Nobel Prizes. She was born in Warsaw in 1867. "
    "She discovered radium in 1910."
)
CURIE_CONTEXTS = [
    "Marie Curie, born in Warsaw in 1867, won the Nobel Prize in Physics in 1903 and the Nobel "
    "Prize in Chemistry in 1911.",
    "Together with Pierre Curie she discovered polonium and radium in 1898.",
]
CURIE_CLAIMS = [
    "Marie Curie won two Nobel Prizes.",
    "Marie Curie was born in Warsaw.",
    "Marie Curie was born in 1867.",
    "Marie Curie discovered radium in 1910.",
]
CURIE_ROW = {
    "user_input": CURIE_Q,
    "response": CURIE_RESPONSE,
    "retrieved_contexts": CURIE_CONTEXTS,
}


def test_faithfulness_claims_splits_then_checks_all_claims_in_one_call(loop):
    loop.judge(
        {"claims": claims(*CURIE_CLAIMS), "supported": verdict_lines("yes", "yes", "yes", "no")}
    )
    metric = Faithfulness(llm=loop.llm(), statements="claims", statements_per_call=None)

    outcome, usage = loop.run(metric, CURIE_ROW)

    # supported: 1, 1, 1, 0 -> (1 + 1 + 1 + 0) / 4 = 0.75
    assert isinstance(outcome, Ok)
    assert outcome.value == 0.75
    assert outcome.reason == "3 of 4 claims are supported by the contexts"
    assert outcome.details == {
        "claims": [
            {"claim": claim, "verdict": label, "probability": p}
            for claim, label, p in zip(
                CURIE_CLAIMS, ["yes", "yes", "yes", "no"], [1.0, 1.0, 1.0, 0.0], strict=True
            )
        ],
        "unjudged": [],
    }
    # Two calls, in order: split, then one verdict call for all claims.
    assert loop.prompts_sent() == ["claims", "supported"]
    check_calls(loop, usage, metric, CURIE_ROW, chat=2)
    split, check = loop.chat
    assert schema_name(split) == "ClaimList"
    assert split.response_format_type == "json_schema"
    assert fenced(split, "question") == CURIE_Q
    assert fenced(split, "text") == CURIE_RESPONSE
    assert split.body["temperature"] == 0.0
    assert fenced(check, "source") == "\n\n".join(CURIE_CONTEXTS)
    assert fenced(check, "items") == numbered(CURIE_CLAIMS)
    assert check.body["logprobs"] is True and check.body["top_logprobs"] == 10
    assert check.body["max_tokens"] == 8 * 4 + 16
    assert "response_format" not in check.body


def test_faithfulness_sentences_checks_the_response_sentences_in_one_call(loop):
    loop.judge({"supported": verdict_lines("yes", "no", "yes")})
    metric = Faithfulness(llm=loop.llm())  # sentences are the default

    outcome, usage = loop.run(metric, CURIE_ROW)

    # three sentences, supported 1, 0, 1 -> 2 / 3
    assert isinstance(outcome, Ok)
    assert outcome.value == pytest.approx(2 / 3)
    assert outcome.reason == "2 of 3 sentences are supported by the contexts"
    assert [c["verdict"] for c in outcome.details["claims"]] == ["yes", "no", "yes"]
    assert loop.prompts_sent() == ["supported"]
    check_calls(loop, usage, metric, CURIE_ROW, chat=1)
    assert fenced(loop.chat[0], "items") == numbered(
        [
            "Marie Curie won two Nobel Prizes.",
            "She was born in Warsaw in 1867.",
            "She discovered radium in 1910.",
        ]
    )


@pytest.mark.parametrize(
    ("scoring", "expected"),
    [
        # mean P(yes) = (0.9 + 0.8 + 0.3 + 0.6) / 4 = 0.65
        ("probability", 0.65),
        # P >= 0.5 passes: 1 + 1 + 0 + 1 -> 3 / 4
        ("binary", 0.75),
    ],
)
def test_faithfulness_probability_scoring_reads_the_judges_token_probabilities(
    loop, scoring, expected
):
    loop.judge(
        {
            "claims": claims(*CURIE_CLAIMS),
            "supported": verdicts_with_probabilities(0.9, 0.8, 0.3, 0.6),
        }
    )
    metric = Faithfulness(
        llm=loop.llm(), scoring=scoring, statements="claims", statements_per_call=None
    )

    outcome, usage = loop.run(metric, CURIE_ROW)

    assert outcome.value == pytest.approx(expected)
    assert outcome.reason == "3 of 4 claims are supported by the contexts"
    assert [(c["verdict"], c["probability"]) for c in outcome.details["claims"]] == [
        ("yes", 0.9),
        ("yes", 0.8),
        ("no", 0.3),
        ("yes", 0.6),
    ]
    check_calls(loop, usage, metric, CURIE_ROW, chat=2)


def test_faithfulness_reports_claims_the_judge_gave_no_verdict_on(loop):
    loop.judge({"claims": claims(*CURIE_CLAIMS), "supported": verdict_lines("yes", "no", "yes")})
    metric = Faithfulness(llm=loop.llm(), statements="claims", statements_per_call=None)

    outcome, usage = loop.run(metric, CURIE_ROW)

    # the fourth claim has no verdict: scored over the three judged, 1 + 0 + 1 -> 2 / 3
    assert isinstance(outcome, Ok)
    assert outcome.value == pytest.approx(2 / 3)
    assert outcome.reason == (
        "2 of 3 claims are supported by the contexts; the judge gave no "
        "verdict on 1 item(s), left out of the score"
    )
    assert outcome.details["unjudged"] == [CURIE_CLAIMS[3]]
    assert [c["claim"] for c in outcome.details["claims"]] == CURIE_CLAIMS[:3]
    check_calls(loop, usage, metric, CURIE_ROW, chat=2)


def test_faithfulness_verdicts_without_any_usable_line_are_a_typed_error_with_the_raw_text(loop):
    loop.judge({"claims": claims(*CURIE_CLAIMS), "supported": "I cannot judge these statements."})

    outcome, _ = loop.run(
        Faithfulness(llm=loop.llm(), statements="claims", statements_per_call=None), CURIE_ROW
    )

    assert isinstance(outcome, Error)
    assert outcome.error_type == "OutputParseError"
    assert outcome.raw == "I cannot judge these statements."
    assert loop.prompts_sent() == ["claims", "supported"]  # no retry of a parse failure


def test_faithfulness_skips_a_blank_response_and_a_response_without_claims(loop):
    loop.judge({"claims": claims()})
    metric = Faithfulness(llm=loop.llm(), statements="claims", statements_per_call=None)

    result = evaluate(
        [{**CURIE_ROW, "response": "   "}, {**CURIE_ROW, "response": "Hello!"}],
        [metric],
        show_progress=False,
    )

    blank, chatter = result.outcome(0, "faithfulness"), result.outcome(1, "faithfulness")
    assert blank == Skipped(reason="the response is empty")
    assert chatter == Skipped(reason="the response makes no factual claims to check")
    # only the claim split of "Hello!" was sent
    assert loop.prompts_sent() == ["claims"]
    assert fenced(loop.chat[0], "text") == "Hello!"


def test_faithfulness_judges_long_contexts_in_pieces_and_a_claim_counts_if_any_piece_supports_it(
    loop,
):
    warsaw = "Marie Curie was born in Warsaw in 1867. " * 100  # 4,000 characters
    radium = "She discovered radium in 1898. " * 130  # 4,030 characters
    row = {**CURIE_ROW, "retrieved_contexts": [warsaw, radium]}
    first_piece = verdict_lines("no", "yes", "yes", "no")  # the piece with the Warsaw sentences
    second_piece = verdict_lines("no", "no", "no", "no")
    loop.judge(
        {
            "claims": claims(*CURIE_CLAIMS),
            "supported": lambda r: first_piece if "Warsaw" in fenced(r, "source") else second_piece,
        }
    )

    outcome, usage = loop.run(
        Faithfulness(llm=loop.llm(), statements="claims", statements_per_call=None), row
    )

    # merged over pieces: [no|no, yes|no, yes|no, no|no] = [0, 1, 1, 0] -> 2 / 4
    assert outcome.value == 0.5
    assert [c["verdict"] for c in outcome.details["claims"]] == ["no", "yes", "yes", "no"]
    checks = loop.sent("supported")
    assert len(checks) == 2 and len(loop.chat) == 3 and usage.requests == 3
    sources = [fenced(r, "source") for r in checks]
    assert all(len(source) <= MAX_SOURCE_CHARS for source in sources)
    assert sum(len(source) for source in sources) >= len(warsaw.strip()) + len(radium.strip())


# -- Answer relevancy -------------------------------------------------------------------------
EIFFEL_Q = "Where is the Eiffel Tower?"
EIFFEL_RESPONSE = "The Eiffel Tower stands on the Champ de Mars in Paris."
GENERATED = [
    "Where is the Eiffel Tower located?",
    "In which city is the Eiffel Tower?",
    "What is the Eiffel Tower?",
    "Who built the Eiffel Tower?",  # beyond strictness=3: must not be embedded
]
VECTORS = {
    EIFFEL_Q: [1.0, 0.0, 0.0],
    GENERATED[0]: [2.0, 0.0, 0.0],  # cosine 1
    GENERATED[1]: [3.0, 4.0, 0.0],  # cosine 3/5 = 0.6
    GENERATED[2]: [0.0, 0.0, 5.0],  # cosine 0
}


def generated(questions, noncommittal=0):
    return json.dumps({"questions": questions, "noncommittal": noncommittal})


def test_answer_relevancy_generates_questions_then_embeds_them_with_the_user_input(loop):
    loop.judge({"answer_relevancy": generated(GENERATED)})
    loop.vectors(VECTORS)
    metric = create_metric(
        "answer_relevancy", method="questions", llm=loop.llm(), embeddings=loop.embeddings()
    )
    row = {"user_input": EIFFEL_Q, "response": EIFFEL_RESPONSE}

    outcome, usage = loop.run(metric, row)

    # mean cosine of the question with the first 3 generated: (1 + 0.6 + 0) / 3 = 0.5333...
    assert isinstance(outcome, Ok)
    assert outcome.value == pytest.approx(1.6 / 3)
    assert outcome.reason == f"the response answers questions like {GENERATED[0]!r}"
    assert outcome.details["generated_questions"] == GENERATED[:3]
    assert outcome.details["noncommittal"] is False
    assert outcome.details["mean_cosine"] == pytest.approx(1.6 / 3)
    check_calls(loop, usage, metric, row, chat=1, embeddings=1)
    [ask] = loop.chat
    assert schema_name(ask) == "GeneratedQuestions"
    assert fenced(ask, "count") == "3" and fenced(ask, "answer") == EIFFEL_RESPONSE
    assert loop.embedding_batches == [[EIFFEL_Q, *GENERATED[:3]]]
    assert ResponseRelevancy is AnswerRelevancy


def test_answer_relevancy_noncommittal_scores_zero_and_negative_cosines_stay_negative(loop):
    loop.judge(
        {
            "answer_relevancy": by_input(
                "answer",
                {
                    "I'm not sure.": generated(GENERATED[:3], noncommittal=1),
                    "Nowhere.": generated(["Where is it not?"]),
                },
            )
        }
    )
    loop.vectors({**VECTORS, "Where is it not?": [-2.0, 0.0, 0.0]})
    metric = AnswerRelevancy(llm=loop.llm(), embeddings=loop.embeddings(), method="questions")

    result = evaluate(
        [
            {"user_input": EIFFEL_Q, "response": "I'm not sure."},
            {"user_input": EIFFEL_Q, "response": "Nowhere."},
        ],
        [metric],
        show_progress=False,
    )

    evasive, opposite = result.outcome(0, metric.name), result.outcome(1, metric.name)
    # noncommittal: 0 whatever the cosines (still (1 + 0.6 + 0) / 3 in the details)
    assert evasive.value == 0.0
    assert evasive.reason == "the response is noncommittal"
    assert evasive.details["mean_cosine"] == pytest.approx(1.6 / 3)
    # cosine([1,0,0], [-2,0,0]) = -1: Ragas' range, not clipped
    assert opposite.value == pytest.approx(-1.0)
    assert opposite.details["mean_cosine"] == pytest.approx(-1.0)
    assert len(loop.chat) == 2 and len(loop.embedding_batches) == 2


def test_answer_relevancy_without_generated_questions_is_skipped_before_embedding(loop):
    loop.judge({"answer_relevancy": generated([])})
    loop.vectors({})

    outcome, usage = loop.run(
        AnswerRelevancy(llm=loop.llm(), embeddings=loop.embeddings(), method="questions"),
        {"user_input": EIFFEL_Q, "response": EIFFEL_RESPONSE},
    )

    assert outcome == Skipped(reason="the judge could not name any question this response answers")
    assert len(loop.chat) == 1 and loop.embedding_batches == [] and usage.requests == 1


def test_answer_relevancy_verdict_is_the_judges_probability_that_the_response_answers(loop):
    loop.judge(
        {
            "answers_question": by_input(
                "response",
                {
                    EIFFEL_RESPONSE: WithLogprobs("yes", [("yes", {"yes": 0.8, "no": 0.2})]),
                    "Paris has many monuments.": WithLogprobs(
                        "no", [("no", {"yes": 0.1, "no": 0.9})]
                    ),
                },
            )
        }
    )
    metric = create_metric("answer_relevancy", llm=loop.llm(), method="verdict")
    assert not metric.needs_embeddings and metric.prompt_ids == ("answers_question",)
    row = {"user_input": EIFFEL_Q, "response": EIFFEL_RESPONSE}

    outcome, usage = loop.run(metric, row)

    assert isinstance(outcome, Ok) and outcome.value == pytest.approx(0.8)
    assert outcome.reason == "the response answers the question" and outcome.details == {
        "label": "yes"
    }
    check_calls(loop, usage, metric, row, chat=1, embeddings=0)
    [ask] = loop.chat
    assert fenced(ask, "question") == EIFFEL_Q and fenced(ask, "response") == EIFFEL_RESPONSE
    assert ask.body["max_tokens"] == 2 and ask.body["logprobs"] is True
    evasive, _ = loop.run(metric, {"user_input": EIFFEL_Q, "response": "Paris has many monuments."})
    assert evasive.value == pytest.approx(0.1)
    assert evasive.reason == "the response does not fully answer the question"


def test_answer_relevancy_graded_is_the_expected_completeness_grade_over_two(loop):
    partial = "Barcelona hosted them."
    question = "Which city hosted the 1992 Summer Olympics, and who topped the medal table?"
    complete = "Barcelona hosted them, and the Unified Team topped the medal table."
    loop.judge(
        {
            "rating_answer_completeness": by_input(
                "response",
                {
                    complete: rating_with_probabilities("2", {"2": 0.7, "1": 0.2, "0": 0.1}),
                    partial: rating_with_probabilities("1", {"2": 0.3, "1": 0.6, "0": 0.1}),
                },
            )
        }
    )
    metric = create_metric("answer_relevancy", llm=loop.llm(), method="graded")
    assert not metric.needs_embeddings and metric.prompt_ids == ("rating_answer_completeness",)

    whole, usage = loop.run(metric, {"user_input": question, "response": complete})
    check_calls(
        loop, usage, metric, {"user_input": question, "response": complete}, chat=1, embeddings=0
    )
    part, _ = loop.run(metric, {"user_input": question, "response": partial})

    # (2 * 0.7 + 1 * 0.2) / 2 and (2 * 0.3 + 1 * 0.6) / 2: a yes/no verdict would put both near yes
    assert isinstance(whole, Ok) and whole.value == pytest.approx(0.8)
    assert isinstance(part, Ok) and part.value == pytest.approx(0.6)
    assert part.reason == "the response answers the question only in part"
    assert whole.details["grade"] == 2 and part.details["distribution"]["1"] == pytest.approx(0.6)
    assert fenced(loop.chat[0], "question") == question and len(loop.chat) == 2


def test_answer_relevancy_graded_answer_off_the_scale_is_a_parse_failure(loop):
    loop.judge({"rating_answer_completeness": "maybe"})
    metric = create_metric("answer_relevancy", llm=loop.llm(), method="graded")

    outcome, _ = loop.run(metric, {"user_input": EIFFEL_Q, "response": EIFFEL_RESPONSE})

    assert isinstance(outcome, Error) and outcome.error_type == "OutputParseError"
    assert "outside" in outcome.message and outcome.raw == "maybe"


def test_answer_relevancy_method_typo_is_refused():
    with pytest.raises(ValueError, match="method must be one of questions, verdict"):
        AnswerRelevancy(method="verdicts")


# -- Context precision / utilization -----------------------------------------------------------
TOWER_Q = "When was the Eiffel Tower completed?"
TOWER_REFERENCE = "The Eiffel Tower was completed in March 1889 for the World's Fair."
TOWER_RESPONSE = "It was completed in 1889."
PASSAGES = [
    "The Eiffel Tower was finished in 1889.",
    "Paris has many museums.",
    "It was built for the 1889 Exposition Universelle (a World's Fair).",
    "Construction ended in March 1889 after two years.",
]
TOWER_ROW = {"user_input": TOWER_Q, "reference": TOWER_REFERENCE, "retrieved_contexts": PASSAGES}


def test_context_precision_is_average_precision_of_the_useful_passages(loop):
    loop.judge({"context_usefulness": verdict_lines("yes", "no", "yes", "yes")})
    metric = ContextPrecision(llm=loop.llm())

    outcome, usage = loop.run(metric, TOWER_ROW)

    # relevance [1, 0, 1, 1]: (1/1 + 2/3 + 3/4) / 3 = 29/36
    assert isinstance(outcome, Ok)
    assert outcome.value == pytest.approx(29 / 36)
    assert outcome.reason == "useful passages at ranks [1, 3, 4] of 4"
    assert outcome.details == {
        "passages": [
            {"rank": 1, "verdict": "yes", "probability": 1.0},
            {"rank": 2, "verdict": "no", "probability": 0.0},
            {"rank": 3, "verdict": "yes", "probability": 1.0},
            {"rank": 4, "verdict": "yes", "probability": 1.0},
        ]
    }
    check_calls(loop, usage, metric, TOWER_ROW, chat=1)
    [ask] = loop.chat
    assert fenced(ask, "question") == TOWER_Q
    assert fenced(ask, "answer") == TOWER_REFERENCE
    assert fenced(ask, "items") == numbered(PASSAGES)
    assert LLMContextPrecisionWithReference is ContextPrecision


@pytest.mark.parametrize(
    ("scoring", "expected"),
    [
        # v = [0.8, 0.2, 0.9, 0.6]; running sums 0.8, 1.0, 1.9, 2.5
        # (0.8/1*0.8 + 1.0/2*0.2 + 1.9/3*0.9 + 2.5/4*0.6) / 2.5
        # = (0.64 + 0.1 + 0.57 + 0.375) / 2.5 = 1.685 / 2.5 = 0.674
        ("probability", 0.674),
        # passed [1, 0, 1, 1] -> 29/36
        ("binary", 29 / 36),
    ],
)
def test_context_precision_probability_scoring(loop, scoring, expected):
    loop.judge({"context_usefulness": verdicts_with_probabilities(0.8, 0.2, 0.9, 0.6)})

    outcome, _ = loop.run(ContextPrecision(llm=loop.llm(), scoring=scoring), TOWER_ROW)

    assert outcome.value == pytest.approx(expected)
    assert [p["probability"] for p in outcome.details["passages"]] == [0.8, 0.2, 0.9, 0.6]


def test_context_precision_counts_an_unjudged_passage_as_not_useful_and_says_so(loop):
    loop.judge({"context_usefulness": verdict_lines("yes", "no", "yes")})

    outcome, _ = loop.run(ContextPrecision(llm=loop.llm()), TOWER_ROW)

    # relevance [1, 0, 1, 0]: (1/1 + 2/3) / 2 = 5/6
    assert outcome.value == pytest.approx(5 / 6)
    assert outcome.reason == (
        "useful passages at ranks [1, 3] of 4; no verdict for ranks [4] (counted as not useful)"
    )
    assert outcome.details["passages"][3] == {"rank": 4, "verdict": "no", "probability": 0.0}


def test_context_precision_judges_passages_beyond_the_window_in_batches(loop):
    passages = [f"Passage {name}. " + "The tower is made of iron. " * 92 for name in "ABC"]
    assert all(2400 < len(p) < 2600 for p in passages)  # two fit in 6,000 characters, not three
    loop.judge(
        {
            "context_usefulness": lambda r: (
                verdict_lines("yes", "no")
                if fenced(r, "items").startswith("1. Passage A")
                else verdict_lines("yes")
            )
        }
    )
    row = {**TOWER_ROW, "retrieved_contexts": passages}

    outcome, usage = loop.run(ContextPrecision(llm=loop.llm()), row)

    # batch [A, B] -> yes, no; batch [C] -> yes: relevance [1, 0, 1] -> (1 + 2/3) / 2 = 5/6
    assert outcome.value == pytest.approx(5 / 6)
    assert outcome.reason == "useful passages at ranks [1, 3] of 3"
    assert len(loop.chat) == 2 and usage.requests == 2
    assert sorted(fenced(r, "items") for r in loop.chat) == [
        numbered(passages[:2]),
        numbered(passages[2:]),
    ]


def test_context_utilization_judges_the_passages_against_the_response(loop):
    loop.judge({"context_usefulness": verdict_lines("no", "yes", "yes")})
    metric = ContextUtilization(llm=loop.llm())
    row = {
        "user_input": TOWER_Q,
        "response": TOWER_RESPONSE,
        "reference": TOWER_REFERENCE,
        "retrieved_contexts": PASSAGES[1:],
    }

    outcome, usage = loop.run(metric, row)

    # relevance [0, 1, 1]: (1/2 + 2/3) / 2 = 7/12
    assert outcome.value == pytest.approx(7 / 12)
    assert outcome.reason == "useful passages at ranks [2, 3] of 3"
    check_calls(loop, usage, metric, row, chat=1)
    [ask] = loop.chat
    assert fenced(ask, "answer") == TOWER_RESPONSE  # not the reference, though the row has one
    assert fenced(ask, "items") == numbered(PASSAGES[1:])
    assert LLMContextPrecisionWithoutReference is ContextUtilization


# -- Context recall ---------------------------------------------------------------------------
PARIS_REFERENCE = (
    "Paris is the capital of France. It has about 2.1 million inhabitants. "
    "The Seine flows through it."
)
PARIS_SENTENCES = [
    "Paris is the capital of France.",
    "It has about 2.1 million inhabitants.",
    "The Seine flows through it.",
]
PARIS_CONTEXTS = ["Paris, the capital of France, lies on the Seine.", "It is known for art."]
PARIS_ROW = {
    "user_input": "Tell me about Paris.",
    "reference": PARIS_REFERENCE,
    "retrieved_contexts": PARIS_CONTEXTS,
}


def test_context_recall_checks_every_reference_sentence_against_the_contexts(loop):
    loop.judge({"supported": verdict_lines("yes", "no", "yes")})
    metric = LLMContextRecall(llm=loop.llm())

    outcome, usage = loop.run(metric, PARIS_ROW)

    # sentences supported 1, 0, 1 -> 2 / 3
    assert isinstance(outcome, Ok)
    assert outcome.value == pytest.approx(2 / 3)
    assert outcome.reason == "2 of 3 reference sentences are supported by the contexts"
    assert [(s["claim"], s["verdict"]) for s in outcome.details["sentences"]] == list(
        zip(PARIS_SENTENCES, ["yes", "no", "yes"], strict=True)
    )
    check_calls(loop, usage, metric, PARIS_ROW, chat=1)
    [ask] = loop.chat
    assert fenced(ask, "source") == "\n\n".join(PARIS_CONTEXTS)
    assert fenced(ask, "items") == numbered(PARIS_SENTENCES)  # "2.1" did not end a sentence
    assert ContextRecall is LLMContextRecall


def test_context_recall_reports_sentences_the_judge_skipped(loop):
    loop.judge({"supported": verdict_lines("no", "yes")})

    outcome, _ = loop.run(LLMContextRecall(llm=loop.llm()), PARIS_ROW)

    # scored over the two judged sentences: (0 + 1) / 2
    assert outcome.value == 0.5
    assert outcome.reason == (
        "1 of 2 reference sentences are supported by the contexts; the judge "
        "gave no verdict on 1 item(s), left out of the score"
    )
    assert outcome.details["unjudged"] == [PARIS_SENTENCES[2]]


# -- Context entity recall --------------------------------------------------------------------
TAJ_REFERENCE = "The Taj Mahal in Agra was begun in 1631 by Shah Jahan."
TAJ_CONTEXTS = ["The Taj Mahal is a UNESCO site.", "It stands in Agra."]


def test_context_entity_recall_extracts_entities_from_both_sides_and_compares_them_folded(loop):
    loop.judge(
        {
            "entities": by_input(
                "text",
                {
                    TAJ_REFERENCE: entities("Taj Mahal", "Agra", "Shah Jahan", "1631"),
                    "\n\n".join(TAJ_CONTEXTS): entities("taj  mahal", "Agra", "UNESCO"),
                },
            )
        }
    )
    metric = ContextEntityRecall(llm=loop.llm())
    row = {"reference": TAJ_REFERENCE, "retrieved_contexts": TAJ_CONTEXTS}

    outcome, usage = loop.run(metric, row)

    # folded reference {taj mahal, agra, shah jahan, 1631}; found {taj mahal, agra}: 2 / 4
    assert isinstance(outcome, Ok)
    assert outcome.value == pytest.approx(0.5)
    assert outcome.reason == "2 of 4 reference entities appear in the contexts"
    assert outcome.details["missing"] == ["1631", "shah jahan"]
    assert outcome.details["context_entities"] == ["taj  mahal", "Agra", "UNESCO"]
    check_calls(loop, usage, metric, row, chat=2)
    assert {schema_name(r) for r in loop.chat} == {"EntityList"}


def test_context_entity_recall_is_skipped_when_the_reference_names_no_entity(loop):
    loop.judge({"entities": entities()})

    outcome, usage = loop.run(
        ContextEntityRecall(llm=loop.llm()),
        {"reference": "It was big.", "retrieved_contexts": TAJ_CONTEXTS},
    )

    assert outcome == Skipped(reason="the reference names no entities")
    assert usage.requests == 2


# -- Noise sensitivity ------------------------------------------------------------------------
LIC_Q = "What is LIC known for?"
LIC_REFERENCE = "LIC is the largest insurer in India. It was founded in 1956."
LIC_RESPONSE = (
    "LIC is the largest insurer in India. It was founded in 1965. "
    "It is based in Delhi. It has 50 million policies."
)
LIC_REFERENCE_CLAIMS = ["LIC is the largest insurer in India.", "LIC was founded in 1956."]
LIC_RESPONSE_CLAIMS = [
    "LIC is the largest insurer in India.",
    "LIC was founded in 1965.",
    "LIC is based in Delhi.",
    "LIC has 50 million policies.",
]
LIC_CONTEXTS = [
    "LIC, the largest insurer in India, was set up in 1965.",
    "Some say LIC was founded in 1965; its head office is in Delhi.",
    "LIC has 50 million policies.",
]
LIC_ROW = {
    "user_input": LIC_Q,
    "response": LIC_RESPONSE,
    "reference": LIC_REFERENCE,
    "retrieved_contexts": LIC_CONTEXTS,
}
# Verdicts over [reference claims..., response claims...] per context, and over the response
# claims against the reference:
#                          R1     R2    A1     A2     A3     A4
LIC_SUPPORT = {
    LIC_CONTEXTS[0]: ("yes", "no", "yes", "yes", "no", "no"),  # relevant (supports R1)
    LIC_CONTEXTS[1]: ("no", "no", "no", "yes", "yes", "no"),  # irrelevant
    LIC_CONTEXTS[2]: ("no", "no", "no", "no", "no", "yes"),  # irrelevant
    LIC_REFERENCE: ("yes", "no", "no", "no"),  # A2, A3, A4 are incorrect
}


@pytest.mark.parametrize(
    ("mode", "expected", "flagged"),
    [
        # incorrect and supported by a relevant context: A2 (context 1) -> 1 / 4
        ("relevant", 0.25, 1),
        # incorrect, supported only by irrelevant contexts: A3 (context 2), A4 (context 3);
        # A2 is excluded, a relevant context supports it -> 2 / 4
        ("irrelevant", 0.5, 2),
    ],
)
def test_noise_sensitivity_flags_incorrect_claims_by_where_they_came_from(
    loop, mode, expected, flagged
):
    loop.judge(
        {
            "claims": by_input(
                "text",
                {
                    LIC_REFERENCE: claims(*LIC_REFERENCE_CLAIMS),
                    LIC_RESPONSE: claims(*LIC_RESPONSE_CLAIMS),
                },
            ),
            "supported": by_input(
                "source", {source: verdict_lines(*labels) for source, labels in LIC_SUPPORT.items()}
            ),
        }
    )
    metric = NoiseSensitivity(llm=loop.llm(), mode=mode)

    outcome, usage = loop.run(metric, LIC_ROW)

    assert isinstance(outcome, Ok)
    assert outcome.value == expected
    assert outcome.reason == (
        f"{flagged} of 4 response claims are unsupported by the reference "
        f"but taken from {mode} contexts"
    )
    assert outcome.details == {
        "response_claims": LIC_RESPONSE_CLAIMS,
        "reference_claims": LIC_REFERENCE_CLAIMS,
        "relevant_contexts": [True, False, False],
        "incorrect": [False, True, True, True],
        "unjudged": [],
    }
    # 2 claim splits + 1 per context + 1 against the reference = 3 + 3
    check_calls(loop, usage, metric, LIC_ROW, chat=6)
    assert loop.prompt_counts() == {"claims": 2, "supported": 4}
    assert {fenced(r, "question") for r in loop.sent("claims")} == {LIC_Q}
    for request in loop.sent("supported"):
        expected_items = (
            LIC_RESPONSE_CLAIMS
            if fenced(request, "source") == LIC_REFERENCE
            else LIC_REFERENCE_CLAIMS + LIC_RESPONSE_CLAIMS
        )
        assert fenced(request, "items") == numbered(expected_items)
    assert NoiseSensitivity.better == "lower"


def test_noise_sensitivity_leaves_out_a_claim_the_judge_skipped_and_says_so(loop):
    # The reference check answers for 3 of the 4 response claims; A4 gets no verdict. It must not
    # count as incorrect: irrelevant mode scores A3 alone of the 3 judged claims -> 1/3.
    support = {**LIC_SUPPORT, LIC_REFERENCE: ("yes", "no", "no")}
    loop.judge(
        {
            "claims": by_input(
                "text",
                {
                    LIC_REFERENCE: claims(*LIC_REFERENCE_CLAIMS),
                    LIC_RESPONSE: claims(*LIC_RESPONSE_CLAIMS),
                },
            ),
            "supported": by_input(
                "source", {source: verdict_lines(*labels) for source, labels in support.items()}
            ),
        }
    )
    outcome, _ = loop.run(NoiseSensitivity(llm=loop.llm(), mode="irrelevant"), LIC_ROW)

    assert isinstance(outcome, Ok)
    assert outcome.value == 1 / 3
    assert outcome.details["unjudged"] == [LIC_RESPONSE_CLAIMS[3]]
    assert outcome.details["incorrect"] == [False, True, True]
    assert "no verdict on 1 item" in outcome.reason


def test_noise_sensitivity_is_skipped_when_the_response_makes_no_claims(loop):
    loop.judge(
        {
            "claims": by_input(
                "text", {LIC_REFERENCE: claims(*LIC_REFERENCE_CLAIMS), "Hi!": claims()}
            )
        }
    )

    outcome, usage = loop.run(NoiseSensitivity(llm=loop.llm()), {**LIC_ROW, "response": "Hi!"})

    assert outcome == Skipped(reason="the response makes no claims")
    assert loop.prompt_counts() == {"claims": 2} and usage.requests == 2


# -- Factual correctness ----------------------------------------------------------------------
EINSTEIN_Q = "Where and when was Einstein born, and when did he win the Nobel Prize?"
EINSTEIN_RESPONSE = (
    "Einstein was born in Germany. He was born in 1879. He won the Nobel Prize in 1925."
)
EINSTEIN_REFERENCE = (
    "Albert Einstein was born in Ulm. He was born in Germany. His birth year was "
    "1879. He received the 1921 Nobel Prize in Physics."
)
RESPONSE_SENTENCES = [
    "Einstein was born in Germany.",
    "He was born in 1879.",
    "He won the Nobel Prize in 1925.",
]
REFERENCE_SENTENCES = [
    "Albert Einstein was born in Ulm.",
    "He was born in Germany.",
    "His birth year was 1879.",
    "He received the 1921 Nobel Prize in Physics.",
]
RESPONSE_CLAIMS = [
    "Einstein was born in Germany.",
    "Einstein was born in 1879.",
    "Einstein won the Nobel Prize in 1925.",
]
REFERENCE_CLAIMS = [
    "Albert Einstein was born in Ulm.",
    "Albert Einstein was born in Germany.",
    "Albert Einstein was born in 1879.",
    "Albert Einstein received the 1921 Nobel Prize in Physics.",
]
EINSTEIN_ROW = {
    "user_input": EINSTEIN_Q,
    "response": EINSTEIN_RESPONSE,
    "reference": EINSTEIN_REFERENCE,
}


def script_factual(loop: Loopback, claims_prompt: str = "claims.coarse") -> None:
    # The same verdicts whether the statements are sentences or claims.
    loop.judge(
        {
            claims_prompt: by_input(
                "text",
                {
                    EINSTEIN_RESPONSE: claims(*RESPONSE_CLAIMS),
                    EINSTEIN_REFERENCE: claims(*REFERENCE_CLAIMS),
                },
            ),
            "supported": by_input(
                "source",
                {
                    EINSTEIN_REFERENCE: verdict_lines(
                        "yes", "yes", "no"
                    ),  # response side: TP 2, FP 1
                    EINSTEIN_RESPONSE: verdict_lines(
                        "no", "yes", "yes", "no"
                    ),  # reference side: FN 2
                },
            ),
        }
    )


@pytest.mark.parametrize(("statements", "full"), [("sentences", 2), ("claims", 4)])
@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        # P = 2/3, R = 2/4; F1 = 2PR/(P+R) = (2/3)/(7/6) = 4/7 = 0.5714 -> 0.57
        ("f1", 0.57),
        # TP/(TP+FP) = 2/3 -> 0.67; the reference is neither split nor checked
        ("precision", 0.67),
        # TP/(TP+FN) = 2/4 -> 0.5
        ("recall", 0.5),
    ],
)
def test_factual_correctness_modes(loop, mode, expected, statements, full):
    script_factual(loop)
    metric = FactualCorrectness(llm=loop.llm(), mode=mode, statements=statements)

    outcome, usage = loop.run(metric, EINSTEIN_ROW)

    assert isinstance(outcome, Ok)
    assert outcome.value == expected
    # sentences: one support check per side; claims: a split and a check per side. Precision
    # needs only the response side.
    requests = full // 2 if mode == "precision" else full
    check_calls(loop, usage, metric, EINSTEIN_ROW, chat=requests)
    splits, checks = (requests // 2, requests // 2) if statements == "claims" else (0, requests)
    assert loop.prompt_counts() == {
        k: n for k, n in (("claims.coarse", splits), ("supported", checks)) if n
    }
    response_side, reference_side = (
        (RESPONSE_CLAIMS, REFERENCE_CLAIMS)
        if statements == "claims"
        else (RESPONSE_SENTENCES, REFERENCE_SENTENCES)
    )
    assert [(c["claim"], c["verdict"]) for c in outcome.details["response_claims"]] == list(
        zip(response_side, ["yes", "yes", "no"], strict=True)
    )
    items = {fenced(r, "source"): fenced(r, "items") for r in loop.sent("supported")}
    if mode == "precision":
        assert outcome.reason == f"2 of 3 response {statements} are backed by the reference"
        assert outcome.details["reference_claims"] == []
        assert items == {EINSTEIN_REFERENCE: numbered(response_side)}
    else:
        assert outcome.reason == (
            f"2 of 3 response {statements} are backed by the reference; "
            f"2 of 4 reference {statements} are missing from the response"
        )
        assert [c["verdict"] for c in outcome.details["reference_claims"]] == [
            "no",
            "yes",
            "yes",
            "no",
        ]
        assert items == {
            EINSTEIN_REFERENCE: numbered(response_side),
            EINSTEIN_RESPONSE: numbered(reference_side),
        }
    for split in loop.sent("claims.coarse"):
        assert fenced(split, "question") == EINSTEIN_Q


def test_factual_correctness_leaves_out_a_statement_the_judge_skipped_and_says_so(loop):
    loop.judge(
        {
            "supported": by_input(
                "source",
                {
                    EINSTEIN_REFERENCE: verdict_lines(
                        "yes", "yes"
                    ),  # the third response sentence is skipped
                    EINSTEIN_RESPONSE: verdict_lines("no", "yes", "yes", "no"),
                },
            )
        }
    )

    outcome, _ = loop.run(FactualCorrectness(llm=loop.llm()), EINSTEIN_ROW)

    # TP 2, FP 0 (the skipped sentence is neither), FN 2: P = 1, R = 1/2, F1 = 2/3 -> 0.67
    assert outcome.value == 0.67
    assert outcome.details["unjudged"] == [RESPONSE_SENTENCES[2]]
    assert outcome.reason.endswith(
        "; the judge gave no verdict on 1 item(s), left out of the score"
    )


def test_factual_correctness_high_atomicity_splits_with_the_fine_claims_prompt(loop):
    script_factual(loop, claims_prompt="claims")
    metric = FactualCorrectness(llm=loop.llm(), atomicity="high")

    outcome, usage = loop.run(metric, EINSTEIN_ROW)

    assert outcome.value == 0.57  # the same verdicts as the f1 case above
    assert loop.prompt_counts() == {"claims": 2, "supported": 2}
    check_calls(loop, usage, metric, EINSTEIN_ROW, chat=4)


def test_factual_correctness_is_skipped_when_the_response_makes_no_claims(loop):
    loop.judge(
        {
            "claims.coarse": by_input(
                "text", {"Hello!": claims(), EINSTEIN_REFERENCE: claims(*REFERENCE_CLAIMS)}
            )
        }
    )

    outcome, usage = loop.run(
        FactualCorrectness(llm=loop.llm(), statements="claims"),
        {**EINSTEIN_ROW, "response": "Hello!"},
    )

    assert outcome == Skipped(reason="the response makes no factual statements to check")
    assert loop.prompt_counts() == {"claims.coarse": 2} and usage.requests == 2


def test_the_fine_response_split_is_one_request_for_faithfulness_noise_and_factual(loop, tmp_path):
    reference = "Marie Curie was born in Warsaw. She won two Nobel Prizes."

    def all_yes(request):
        return verdict_lines(*["yes"] * len(fenced(request, "items").splitlines()))

    loop.judge(
        {
            "claims": by_input(
                "text",
                {
                    CURIE_RESPONSE: claims(*CURIE_CLAIMS),
                    reference: claims(
                        "Marie Curie was born in Warsaw.", "Marie Curie won two Nobel Prizes."
                    ),
                },
            ),
            "supported": all_yes,
        }
    )
    llm = llm_factory(
        loop.server.model_string("judge"), cache=tmp_path / "cache.sqlite", retry=FAST_RETRY
    )
    metrics = [
        Faithfulness(statements="claims", statements_per_call=None),
        NoiseSensitivity(),
        FactualCorrectness(atomicity="high"),
    ]

    result = evaluate(
        [{**CURIE_ROW, "reference": reference}], metrics, llm=llm, show_progress=False
    )

    assert [result.outcome(0, m.name).status for m in metrics] == ["ok", "ok", "ok"]
    # Unique requests: the response split (shared by all three) and the reference split (noise,
    # factual); faithfulness' check against the joined contexts; noise's check per context (2);
    # response claims against the reference (noise, factual); reference claims against the
    # response (factual). 2 + 1 + 2 + 1 + 1 = 7 of the 2 + 5 + 4 = 11 asked for.
    assert [fenced(r, "text") for r in loop.sent("claims")].count(CURIE_RESPONSE) == 1
    assert len(loop.chat) == 7
    assert result.usage().requests == 7 and result.usage().cached_requests == 4


# -- The dual-judge trio ----------------------------------------------------------------------
DUAL_ROW = {
    "user_input": TOWER_Q,
    "response": TOWER_RESPONSE,
    "reference": TOWER_REFERENCE,
    "retrieved_contexts": PASSAGES[:2],
}


@pytest.mark.parametrize(
    ("metric_class", "answers", "expected", "labels", "inputs"),
    [
        # 4/4 and 2/4 -> (1 + 0.5) / 2 = 0.75
        (
            AnswerAccuracy,
            {"rating_answer_accuracy": "4", "rating_answer_accuracy_swapped": "2"},
            0.75,
            ["4", "2"],
            {"question": TOWER_Q, "answer": TOWER_RESPONSE, "reference": TOWER_REFERENCE},
        ),
        # 2/2 and 0/2 -> (1 + 0) / 2 = 0.5
        (
            ContextRelevance,
            {"rating_context_relevance": "2", "rating_context_relevance_alt": "0"},
            0.5,
            ["2", "0"],
            {"question": TOWER_Q, "context": "\n\n".join(PASSAGES[:2])},
        ),
        # 1/2 and 0/2 -> (0.5 + 0) / 2 = 0.25
        (
            ResponseGroundedness,
            {"rating_groundedness": "1", "rating_groundedness_alt": "0"},
            0.25,
            ["1", "0"],
            {"answer": TOWER_RESPONSE, "context": "\n\n".join(PASSAGES[:2])},
        ),
    ],
)
def test_dual_judge_averages_the_two_normalised_ratings(
    loop, metric_class, answers, expected, labels, inputs
):
    loop.judge(answers)
    metric = metric_class(llm=loop.llm())
    row = {field: DUAL_ROW[field] for field in metric.required_fields}

    outcome, usage = loop.run(metric, row)

    assert isinstance(outcome, Ok)
    assert outcome.value == pytest.approx(expected)
    top = max(metric.scale.values())
    assert outcome.reason == f"ratings {labels[0]} and {labels[1]} on a 0–{int(top)} scale"
    assert outcome.details == {
        "ratings": labels,
        "normalised": [metric.scale[label] / top for label in labels],
    }
    check_calls(loop, usage, metric, row, chat=2)
    assert loop.prompt_counts() == {prompt_id: 1 for prompt_id in answers}
    for request in loop.chat:
        assert request.body["max_tokens"] == 4 and request.body["logprobs"] is True
        assert {name: fenced(request, name) for name in inputs} == inputs


@pytest.mark.parametrize(
    ("scoring", "expected"),
    [
        # first judge: E = 0.5*2 + 0.25*1 + 0.25*0 = 1.25 -> 1.25/2 = 0.625;
        # second judge "1" -> 0.5; mean (0.625 + 0.5) / 2 = 0.5625
        ("probability", 0.5625),
        # grades as written: (2/2 + 1/2) / 2 = 0.75
        ("binary", 0.75),
    ],
)
def test_dual_judge_probability_scoring_takes_the_expected_grade(loop, scoring, expected):
    loop.judge(
        {
            "rating_groundedness": rating_with_probabilities("2", {"2": 0.5, "1": 0.25, "0": 0.25}),
            "rating_groundedness_alt": "1",
        }
    )

    outcome, _ = loop.run(
        ResponseGroundedness(llm=loop.llm(), scoring=scoring),
        {"response": TOWER_RESPONSE, "retrieved_contexts": PASSAGES[:2]},
    )

    assert outcome.value == pytest.approx(expected)
    assert outcome.details["ratings"] == ["2", "1"]


def test_dual_judge_one_answer_off_the_scale_leaves_the_other_rating_alone(loop):
    loop.judge(
        {"rating_answer_accuracy": "It is excellent.", "rating_answer_accuracy_swapped": "2"}
    )

    outcome, usage = loop.run(
        AnswerAccuracy(llm=loop.llm()), {f: DUAL_ROW[f] for f in AnswerAccuracy.required_fields}
    )

    # only the swapped judge's 2/4 counts
    assert outcome.value == 0.5
    assert outcome.reason == "ratings invalid and 2 on a 0–4 scale"
    assert outcome.details == {"ratings": ["invalid", "2"], "normalised": [None, 0.5]}
    assert usage.requests == 2  # no retry for an answer off the scale


def test_dual_judge_both_answers_off_the_scale_is_a_typed_error(loop):
    loop.judge({"rating_context_relevance": "maybe", "rating_context_relevance_alt": "unsure"})

    outcome, _ = loop.run(
        ContextRelevance(llm=loop.llm()), {"user_input": TOWER_Q, "retrieved_contexts": PASSAGES}
    )

    assert isinstance(outcome, Error)
    assert outcome.error_type == "OutputParseError"
    assert "neither judge" in outcome.message
    assert len(loop.chat) == 2


def test_dual_judge_rates_a_long_context_piece_by_piece_and_keeps_each_judges_best_piece(loop):
    filler = "The committee met on a Tuesday and discussed the weather at some length. "
    contexts = [filler * 80, "The Zephyr bridge was opened in 1931. " + filler * 5]
    assert len("\n\n".join(contexts)) > MAX_SOURCE_CHARS
    loop.judge(
        {
            "rating_context_relevance": lambda r: "2" if "Zephyr" in fenced(r, "context") else "0",
            "rating_context_relevance_alt": lambda r: (
                "1" if "Zephyr" in fenced(r, "context") else "0"
            ),
        }
    )
    metric = ContextRelevance(llm=loop.llm())
    row = {"user_input": "Who opened the Zephyr bridge?", "retrieved_contexts": contexts}

    outcome, usage = loop.run(metric, row)

    # best piece per judge: 2/2 and 1/2 -> (1 + 0.5) / 2 = 0.75
    assert outcome.value == 0.75
    assert outcome.details == {"ratings": ["2", "1"], "normalised": [1.0, 0.5]}
    # two pieces, both judges on each
    check_calls(loop, usage, metric, row, chat=4)
    assert loop.prompt_counts() == {
        "rating_context_relevance": 2,
        "rating_context_relevance_alt": 2,
    }
    assert all(len(fenced(r, "context")) <= MAX_SOURCE_CHARS for r in loop.chat)
    assert sum("Zephyr" in fenced(r, "context") for r in loop.chat) == 2


# -- Multimodal -------------------------------------------------------------------------------
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)
DATA_URI = "data:image/gif;base64,R0lGODlhAQABAAAAACw="
CHART_RESPONSE = "Sales doubled from 2022 to 2023."
CHART_TEXT = "Sales were 10 in 2022 and 20 in 2023."


def multimodal_row(tmp_path, **extra):
    chart = tmp_path / "chart.png"
    chart.write_bytes(PNG)
    return {
        "response": CHART_RESPONSE,
        "retrieved_contexts": ["https://example.com/chart.png", str(chart), DATA_URI, CHART_TEXT],
        **extra,
    }


def test_multimodal_faithfulness_sends_images_as_image_parts_and_reads_one_yes(loop, tmp_path):
    loop.judge({"multimodal_faithfulness": "yes"})
    metric = MultiModalFaithfulness(llm=loop.llm())
    row = multimodal_row(tmp_path)

    outcome, usage = loop.run(metric, row)

    assert outcome == Ok(value=1.0, reason="the judge answered yes", details={"probability": 1.0})
    check_calls(loop, usage, metric, row, chat=1)
    [ask] = loop.chat
    assert ask.body["max_tokens"] == 2
    parts = ask.messages[-1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "image_url", "image_url", "text"]
    assert parts[0]["text"] == f"<response>\n{CHART_RESPONSE}\n</response>"
    assert parts[1]["image_url"]["url"] == "https://example.com/chart.png"
    assert parts[2]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert parts[3]["image_url"]["url"] == DATA_URI
    assert parts[4]["text"] == f"<context>\n{CHART_TEXT}\n</context>"


@pytest.mark.parametrize(
    ("p_yes", "label", "expected"),
    [(0.7, "yes", 1.0), (0.2, "no", 0.0)],
)
def test_multimodal_relevance_scores_the_verdict_and_keeps_its_probability(
    loop, tmp_path, p_yes, label, expected
):
    loop.judge(
        {"multimodal_relevance": WithLogprobs(label, [(label, {"yes": p_yes, "no": 1 - p_yes})])}
    )
    metric = MultiModalRelevance(llm=loop.llm())
    row = multimodal_row(tmp_path, user_input="How did sales change?")

    outcome, usage = loop.run(metric, row)

    assert outcome.value == expected
    assert outcome.reason == f"the judge answered {label}"
    assert outcome.details["probability"] == pytest.approx(p_yes)
    check_calls(loop, usage, metric, row, chat=1)
    text = loop.chat[0].messages[-1]["content"][0]["text"]
    assert text == (
        "<question>\nHow did sales change?\n</question>\n\n"
        f"<response>\n{CHART_RESPONSE}\n</response>"
    )


def test_multimodal_answer_other_than_yes_or_no_and_a_missing_image_are_typed_errors(
    loop, tmp_path
):
    loop.judge({"multimodal_faithfulness": "maybe"})
    metric = MultiModalFaithfulness(llm=loop.llm())

    result = evaluate(
        [
            {"response": CHART_RESPONSE, "retrieved_contexts": [CHART_TEXT]},
            {"response": CHART_RESPONSE, "retrieved_contexts": [str(tmp_path / "missing.png")]},
        ],
        [metric],
        show_progress=False,
    )

    unsure, missing = result.outcome(0, metric.name), result.outcome(1, metric.name)
    assert isinstance(unsure, Error) and unsure.error_type == "OutputParseError"
    assert unsure.raw == "maybe"
    assert isinstance(missing, Error) and missing.error_type == "UsageError"
    assert "missing.png" in missing.message
    assert len(loop.chat) == 1  # the missing image failed before any request
