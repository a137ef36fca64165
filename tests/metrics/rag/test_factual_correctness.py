"""Factual correctness: TP/FP/FN from two decompositions and two support checks (spec vectors)."""

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
            return json.dumps({"claims": ["The Eiffel Tower is in Paris.", "The Eiffel Tower is 1000ft tall."]})
        return json.dumps({"claims": ["The Eiffel Tower is in Paris."]})
    if "1000ft" in text.split("<items>")[0]:  # source is the reference: check response claims
        return "1. yes"
    return "1. yes\n2. no"  # source is the response: check reference claims


def test_f1_is_0_67_and_precision_1():
    llm, provider = judge(answer, answer, answer, answer)
    result = FactualCorrectness(llm=llm).score(response=RESPONSE, reference=REFERENCE)
    assert result.value == 0.67
    assert len(provider.requests) == 4
    llm, provider = judge(answer, answer)
    assert FactualCorrectness(llm=llm, mode="precision").score(response=RESPONSE, reference=REFERENCE).value == 1.0
    assert len(provider.requests) == 2  # precision needs neither the reference split nor the reverse check


def test_recall_and_atomicity_choose_prompts():
    llm, provider = judge(answer, answer, answer, answer)
    assert FactualCorrectness(llm=llm, mode="recall", atomicity="high").score(
        response=RESPONSE, reference=REFERENCE).value == 0.5
    assert "one fact" in provider.requests[0].messages[0].content  # the fine-grained claims prompt


def test_pure_scoring():
    yes, no = Verdict("yes", 1.0), Verdict("no", 0.0)
    assert factual_correctness_score([yes], [yes, no]) == 0.67
    assert factual_correctness_score([yes, no], [yes], mode="precision") == 0.5
    assert factual_correctness_score([no], [no]) == 0.0


def test_bad_mode_is_rejected():
    with pytest.raises(ValueError, match="mode must be one of"):
        FactualCorrectness(mode="accuracy")
