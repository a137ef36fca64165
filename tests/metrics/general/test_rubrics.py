"""Rubric scoring: rubric parsing, the flat-earth example, per-row rubrics, scores outside the rubric,
and SimpleCriteriaScore."""

from __future__ import annotations

import json

import pytest

from assay import evaluate
from assay.errors import OutputParseError, UsageError
from assay.metrics.general import (
    DomainSpecificRubrics,
    InstanceRubrics,
    InstanceSpecificRubrics,
    RubricsScore,
    RubricsScoreWithoutReference,
    RubricsScoreWithReference,
    SimpleCriteriaScore,
)
from assay.metrics.general.rubrics import (
    DEFAULT_RUBRIC_WITH_REFERENCE,
    DEFAULT_RUBRIC_WITHOUT_REFERENCE,
    rubric_scores,
)
from assay.models.types import ModelRequest
from assay.schema import EvaluationDataset
from tests.metrics.rag.scripted import judge

FLAT_EARTH = "The Earth is flat and does not orbit the Sun."
CONSENSUS = (
    "Scientific consensus, supported by centuries of evidence, confirms that the Earth is a spherical "
    "planet that orbits the Sun. This has been demonstrated through astronomy, physics, and satellite imagery."
)
SPEC_RUBRIC = {
    "score1_description": "The response is entirely incorrect and fails to address any aspect of the reference.",
    "score2_description": "The response contains partial accuracy but includes major errors or significant omissions "
    "that affect its relevance to the reference.",
    "score3_description": "The response is mostly accurate but lacks clarity, thoroughness, or minor details needed to "
    "fully address the reference.",
    "score4_description": "The response is accurate and clear, with only minor omissions or slight inaccuracies in "
    "addressing the reference.",
    "score5_description": "The response is completely accurate, clear, and thoroughly addresses the reference without "
    "any errors or omissions.",
}
BINARY_RUBRIC = {
    "score0_description": "The response does not answer the question or is wrong.",
    "score1_description": "The response answers the question correctly.",
}


def rubric_answer(score, feedback: str = "feedback") -> str:
    return json.dumps({"feedback": feedback, "score": score})


def test_rubric_parsing():
    assert rubric_scores(SPEC_RUBRIC) == [1, 2, 3, 4, 5]
    assert rubric_scores(BINARY_RUBRIC) == [0, 1]
    assert rubric_scores({"Score 10": "a", "score-1_description": "b", "score3": "c"}) == [
        -1,
        3,
        10,
    ]
    assert rubric_scores(DEFAULT_RUBRIC_WITHOUT_REFERENCE) == [1, 2, 3, 4, 5]
    assert rubric_scores(DEFAULT_RUBRIC_WITH_REFERENCE) == [1, 2, 3, 4, 5]
    with pytest.raises(UsageError, match="excellent"):
        rubric_scores({"excellent": "The response is perfect."})
    with pytest.raises(UsageError):  # checked when the metric is built, not at the first row
        RubricsScore(rubrics={"good": "fine", "score1_description": "bad"})


def test_flat_earth_scores_one():
    llm, provider = judge(
        rubric_answer(1, "It contradicts the reference: the Earth is spherical and orbits the Sun.")
    )
    result = RubricsScore(rubrics=SPEC_RUBRIC, llm=llm).score(
        response=FLAT_EARTH, reference=CONSENSUS
    )
    assert result.value == 1
    assert result.reason.startswith("It contradicts the reference")
    body = provider.requests[0].messages[-1].content
    assert "score5_description: The response is completely accurate" in body.split("</rubric>")[0]
    assert f"<response>\n{FLAT_EARTH}\n</response>" in body
    assert f"<reference>\n{CONSENSUS}\n</reference>" in body
    assert "<question>\n(not provided)\n</question>" in body


@pytest.mark.parametrize("score", [0, 6, 7, -1])
def test_a_score_outside_the_rubric_is_an_error_not_clamped(score):
    llm, provider = judge(rubric_answer(score))
    with pytest.raises(OutputParseError) as caught:
        RubricsScore(rubrics=SPEC_RUBRIC, llm=llm).score(response=FLAT_EARTH, reference=CONSENSUS)
    assert f'"score":{score}' in caught.value.raw.replace(" ", "")
    assert len(provider.requests) == 1
    llm, _ = judge(rubric_answer(score))
    result = evaluate(
        [{"response": FLAT_EARTH, "reference": CONSENSUS}],
        [RubricsScore(rubrics=SPEC_RUBRIC)],
        llm=llm,
        show_progress=False,
    )
    outcome = result.outcome(0, "domain_specific_rubrics")
    assert outcome.status == "error" and outcome.error_type == "OutputParseError"
    assert result["domain_specific_rubrics"] == [None]
    assert result.summary("domain_specific_rubrics").mean is None


def test_default_rubrics_with_and_without_reference():
    llm, provider = judge(rubric_answer(4), rubric_answer(5))
    assert RubricsScoreWithoutReference(llm=llm).score(user_input="q", response="r").value == 4
    assert (
        RubricsScoreWithReference(llm=llm)
        .score(user_input="q", response="r", reference="ref")
        .value
        == 5
    )
    without, with_ref = (r.messages[-1].content for r in provider.requests)
    assert DEFAULT_RUBRIC_WITHOUT_REFERENCE["score1_description"] in without
    assert DEFAULT_RUBRIC_WITH_REFERENCE["score1_description"] in with_ref
    assert DEFAULT_RUBRIC_WITH_REFERENCE["score1_description"] not in without
    with pytest.raises(UsageError):  # the reference rubric needs a reference
        RubricsScoreWithReference(llm=llm).score(user_input="q", response="r")
    assert DomainSpecificRubrics is RubricsScore
    assert DomainSpecificRubrics(with_reference=True).rubrics == DEFAULT_RUBRIC_WITH_REFERENCE
    assert RubricsScoreWithReference().name == "rubrics_score_with_reference"
    assert RubricsScoreWithoutReference().name == "rubrics_score_without_reference"


def test_instance_rubrics_read_each_rows_rubric():
    llm, provider = judge(rubric_answer(0, "wrong city"))
    result = InstanceSpecificRubrics(llm=llm).score(
        user_input="What is the capital of France?",
        response="The capital of France is Lyon.",
        rubrics=BINARY_RUBRIC,
    )
    assert result.value == 0 and result.reason == "wrong city"
    assert (
        "score0_description: The response does not answer"
        in provider.requests[0].messages[-1].content
    )
    assert InstanceRubrics is InstanceSpecificRubrics
    llm, _ = judge(rubric_answer(3))
    with pytest.raises(OutputParseError):  # 3 is a score of no rubric here
        InstanceSpecificRubrics(llm=llm).score(response="r", rubrics=BINARY_RUBRIC)


def test_legacy_evaluate_with_per_row_rubrics_averages_half():
    rows = [
        {
            "user_query": "What is the capital of France?",
            "response": "The capital of France is Paris.",
            "rubrics": BINARY_RUBRIC,
        },
        {
            "user_query": "What is the capital of Italy?",
            "response": "The capital of Italy is Milan.",
            "rubric": {
                "score0_description": "Names the wrong city.",
                "score1_description": "Names Rome.",
            },
        },
    ]

    def answer(request: ModelRequest) -> str:
        body = request.messages[-1].content
        # each row's own rubric reaches the judge with its own response
        if "Paris" in body:
            assert "The response answers the question correctly." in body
            return rubric_answer(1)
        assert "Names Rome." in body and "Milan" in body
        return rubric_answer(0)

    llm, provider = judge(answer, answer)
    result = evaluate(
        EvaluationDataset.from_list(rows), [InstanceRubrics()], llm=llm, show_progress=False
    )
    summary = result.summary("instance_rubrics")
    assert summary.mean == 0.5
    assert (summary.n_ok, summary.n_rows, summary.coverage_text()) == (2, 2, "2/2")
    assert result["instance_rubrics"] == [1, 0]
    assert repr(result) == "{'instance_rubrics': 0.5000 (2/2 rows)}"
    assert len(provider.requests) == 2


def test_instance_rubrics_rows_without_rubric_are_skipped_and_bad_keys_are_errors():
    llm, _ = judge(rubric_answer(1))
    rows = [
        {"response": "a", "rubrics": BINARY_RUBRIC},
        {"response": "b"},
        {"response": "c", "rubrics": {"good": "x"}},
    ]
    result = evaluate(rows, [InstanceSpecificRubrics()], llm=llm, show_progress=False)
    assert result.outcome(0, "instance_rubrics").value == 1
    assert result.outcome(1, "instance_rubrics").status == "skipped"
    bad = result.outcome(2, "instance_rubrics")
    assert bad.status == "error" and bad.error_type == "UsageError"


def test_simple_criteria_score():
    llm, provider = judge(json.dumps({"reason": "Clear and well ordered.", "score": 8}))
    metric = SimpleCriteriaScore(
        name="clarity",
        definition="Rate the clarity of the response from 0 to 10.",
        llm=llm,
        score_range=(0, 10),
    )
    result = metric.score(
        user_input="Explain tides.", response="The Moon's gravity pulls the oceans."
    )
    assert result.value == 8 and result.reason == "Clear and well ordered."
    body = provider.requests[0].messages[-1].content
    assert "<criterion>\nRate the clarity of the response from 0 to 10.\n</criterion>" in body
    with pytest.raises(UsageError):
        SimpleCriteriaScore(name="clarity", definition="")
    llm, provider = judge("I like it", "still no JSON")
    with pytest.raises(OutputParseError):
        SimpleCriteriaScore(name="clarity", definition="0-10", llm=llm).score(response="r")
    assert len(provider.requests) == 2


def test_rubrics_without_reference_never_sends_the_reference():
    """Ragas' RubricsScoreWithoutReference reads no reference; a row's reference must not reach the judge."""
    llm, provider = judge(rubric_answer(4))
    result = evaluate(
        [{"user_input": "q", "response": "r", "reference": "SECRET REFERENCE"}],
        [RubricsScoreWithoutReference()],
        llm=llm,
        show_progress=False,
    )
    assert result["rubrics_score_without_reference"] == [4]
    body = provider.requests[0].messages[-1].content
    assert "SECRET REFERENCE" not in body and "<reference>\n(not provided)\n</reference>" in body
    with pytest.raises(UsageError, match="with_reference"):
        RubricsScoreWithoutReference(with_reference=True)
