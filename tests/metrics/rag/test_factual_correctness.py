"""Factual correctness: TP/FP/FN from two decompositions (claims or sentences) and two support checks
(spec vectors)."""

from __future__ import annotations

import json

import pytest

from assay.metrics.judge import Verdict
from assay.metrics.rag.factual_correctness import FactualCorrectness, factual_correctness_score
from assay.models.types import ModelRequest
from tests.metrics.rag.scripted import judge

RESPONSE = "The Eiffel Tower is located in Paris."
REFERENCE = "The Eiffel Tower is located in Paris. It has a height of 1000ft."


def answer(request: ModelRequest) -> str:
    """Route by content, since the four calls run concurrently in any order."""
    text = request.messages[-1].content
    if "<text>" in text:
        if "1000ft" in text:
            return json.dumps(
                {"claims": ["The Eiffel Tower is in Paris.", "The Eiffel Tower is 1000ft tall."]}
            )
        return json.dumps({"claims": ["The Eiffel Tower is in Paris."]})
    if "1000ft" in text.split("<items>")[0]:  # source is the reference: check response claims
        return "1. yes"
    return "1. yes\n2. no"  # source is the response: check reference claims


def test_f1_is_0_67_and_precision_1_with_claims():
    llm, provider = judge(answer, answer, answer, answer)
    result = FactualCorrectness(llm=llm, statements="claims").score(
        response=RESPONSE, reference=REFERENCE
    )
    assert result.value == 0.67
    assert len(provider.requests) == 4
    assert (
        "main claims" in provider.requests[0].messages[0].content
    )  # low atomicity: the coarse prompt
    llm, provider = judge(answer, answer)
    metric = FactualCorrectness(llm=llm, mode="precision", statements="claims")
    assert metric.score(response=RESPONSE, reference=REFERENCE).value == 1.0
    assert (
        len(provider.requests) == 2
    )  # precision needs neither the reference split nor the reverse check


def test_by_default_sentences_are_the_statements_and_only_the_checks_are_calls():
    llm, provider = judge(answer, answer)
    result = FactualCorrectness(llm=llm).score(response=RESPONSE, reference=REFERENCE)
    # response: 1 sentence backed by the reference; reference: 2 sentences, the second missing -> f1 0.67
    assert result.value == 0.67
    assert len(provider.requests) == 2
    assert all(request.output is None for request in provider.requests)  # no claim split
    assert [c["claim"] for c in result.details["reference_claims"]] == [
        "The Eiffel Tower is located in Paris.",
        "It has a height of 1000ft.",
    ]
    assert "sentences" in result.reason
    llm, provider = judge(answer)
    assert (
        FactualCorrectness(llm=llm, mode="precision")
        .score(response=RESPONSE, reference=REFERENCE)
        .value
        == 1.0
    )
    assert len(provider.requests) == 1


def test_a_high_setting_with_sentences_is_a_contradiction():
    with pytest.raises(ValueError, match="need statements='claims'"):
        FactualCorrectness(atomicity="high", statements="sentences")
    assert FactualCorrectness(coverage="high").uses_claims
    assert not FactualCorrectness().uses_claims


def test_recall_and_atomicity_choose_prompts():
    llm, provider = judge(answer, answer, answer, answer)
    assert (
        FactualCorrectness(llm=llm, mode="recall", atomicity="high")
        .score(response=RESPONSE, reference=REFERENCE)
        .value
        == 0.5
    )
    assert "one fact" in provider.requests[0].messages[0].content  # the fine-grained claims prompt


def test_pure_scoring():
    yes, no = Verdict("yes", 1.0), Verdict("no", 0.0)
    assert factual_correctness_score([yes], [yes, no]) == 0.67
    assert factual_correctness_score([yes, no], [yes], mode="precision") == 0.5
    assert factual_correctness_score([no], [no]) == 0.0


def test_bad_mode_is_rejected():
    with pytest.raises(ValueError, match="mode must be one of"):
        FactualCorrectness(mode="accuracy")


def test_the_fine_response_split_is_made_once_for_faithfulness_and_factual_correctness():
    from assay import evaluate
    from assay.metrics.rag.faithfulness import Faithfulness

    def reply(request: ModelRequest) -> str:
        text = request.messages[-1].content
        if "<text>" in text:
            return answer(request)
        return "\n".join(f"{i}. yes" for i in range(1, text.split("<items>")[1].count("\n")))

    llm, provider = judge(reply, repeat_last=True)
    sample = {
        "user_input": "Where is the Eiffel Tower?",
        "response": RESPONSE,
        "reference": REFERENCE,
        "retrieved_contexts": ["The Eiffel Tower stands in Paris."],
    }
    metrics = [
        Faithfulness(llm=llm, statements="claims"),
        FactualCorrectness(llm=llm, atomicity="high"),
    ]
    result = evaluate([sample], metrics, show_progress=False)
    assert result.outcome(0, "faithfulness").status == "ok"
    assert result.outcome(0, "factual_correctness").status == "ok"
    splits = [r for r in provider.requests if r.output is not None]
    response_splits = [
        r for r in splits if f"<text>\n{RESPONSE}\n</text>" in r.messages[-1].content
    ]
    assert len(response_splits) == 1  # asked once, answered for both metrics
    assert len(splits) == 2  # plus the reference split


def one_item_verdict(request: ModelRequest) -> str:
    """A single-statement list: yes unless it is the height, which the response does not give."""
    items = request.messages[-1].content.split("<items>")[1]
    assert items.count("\n1. ") == 1 and "\n2. " not in items  # one statement per call
    return "1. no" if "1000ft" in items else "1. yes"


def test_statements_per_call_splits_each_sides_verdict_list():
    llm, provider = judge(one_item_verdict, one_item_verdict, one_item_verdict)
    metric = FactualCorrectness(llm=llm, statements_per_call=1)
    result = metric.score(response=RESPONSE, reference=REFERENCE)
    # the same F1 as one list per side (1 TP, 0 FP, 1 FN), from three calls instead of two
    assert result.value == 0.67 and len(provider.requests) == 3
    assert [c["verdict"] for c in result.details["reference_claims"]] == ["yes", "no"]
    assert FactualCorrectness().statements_per_call is None  # one list per side by default


@pytest.mark.parametrize("value", [0, -2, 1.5, True, "3"])
def test_statements_per_call_must_be_a_whole_number_of_at_least_one(value):
    with pytest.raises(ValueError, match="statements_per_call must be at least 1"):
        FactualCorrectness(statements_per_call=value)
