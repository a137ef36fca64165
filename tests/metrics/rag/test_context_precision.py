"""Context precision / utilization: average precision over usefulness verdicts (spec vectors)."""

from __future__ import annotations

import pytest

from assay.metrics.rag.context_precision import (
    ContextPrecision,
    ContextUtilization,
    average_precision,
)
from tests.metrics.rag.scripted import judge, verdict_lines

FIELDS = {
    "user_input": "Where is the Eiffel Tower located?",
    "reference": "The Eiffel Tower is located in Paris.",
    "retrieved_contexts": ["The Eiffel Tower is located in Paris.", "The Brandenburg Gate is located in Berlin."],
}


def test_useful_first_gives_0_9999999999():
    llm, provider = judge(verdict_lines("yes", "no"))
    assert ContextPrecision(llm=llm).score(**FIELDS).value == 0.9999999999
    assert len(provider.requests) == 1  # all passages judged in one call


def test_useful_second_gives_0_49999999995():
    llm, _ = judge(verdict_lines("no", "yes"))
    reversed_fields = {**FIELDS, "retrieved_contexts": FIELDS["retrieved_contexts"][::-1]}
    assert ContextPrecision(llm=llm).score(**reversed_fields).value == 0.49999999995


def test_nothing_useful_is_zero_and_pure_formula():
    assert average_precision([0.0, 0.0]) == 0.0
    assert average_precision([1.0, 0.0, 1.0]) == pytest.approx((1 + 2 / 3) / 2, abs=1e-9)


def test_unjudged_passage_counts_as_not_useful_and_is_reported():
    llm, _ = judge("1. yes")
    result = ContextPrecision(llm=llm).score(**FIELDS)
    assert result.value == 0.9999999999
    assert "no verdict for ranks [2]" in result.reason


def test_context_utilization_judges_against_the_response():
    llm, provider = judge(verdict_lines("yes", "no"))
    fields = {**FIELDS, "response": "It is in Paris."}
    del fields["reference"]
    assert ContextUtilization(llm=llm).score(**fields).value == 0.9999999999
    assert "It is in Paris." in provider.requests[0].messages[-1].content


def test_passages_beyond_the_window_are_batched_and_long_ones_reported():
    long_a, long_b, huge = "a " * 2500, "b " * 2500, "c " * 4000  # 5,000 / 5,000 / 8,000 characters
    llm, provider = judge("1. yes", "1. no", "1. no")
    result = ContextPrecision(llm=llm).score(**{**FIELDS, "retrieved_contexts": [long_a, long_b, huge]})
    assert len(provider.requests) == 3  # no two of them fit together in one call
    assert result.details["clipped_ranks"] == [3]
    assert "ranks [3] were longer than" in result.reason
