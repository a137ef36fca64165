"""Context precision / utilization: average precision over usefulness verdicts (spec vectors)."""

from __future__ import annotations

import pytest

from assay.metrics.rag.context_precision import (
    ContextPrecision,
    ContextUtilization,
    average_precision,
)
from assay.schema.samples import SingleTurnSample
from tests.metrics.rag.scripted import judge, verdict_lines

FIELDS = {
    "user_input": "Where is the Eiffel Tower located?",
    "reference": "The Eiffel Tower is located in Paris.",
    "retrieved_contexts": [
        "The Eiffel Tower is located in Paris.",
        "The Brandenburg Gate is located in Berlin.",
    ],
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


def test_passages_beyond_the_window_are_batched_and_long_ones_judged_in_pieces():
    long_a, long_b = "a " * 2500, "b " * 2500  # 5,000 characters each
    huge = "c " * 3000 + "The answer is here. " + "d " * 1000  # about 8,000: two pieces

    def answer(request):
        items = str(request.messages[-1].content).split("<items>")[1]
        return "1. yes" if "a a" in items or "answer is here" in items else "1. no"

    llm, provider = judge(answer, repeat_last=True)
    metric = ContextPrecision(llm=llm)
    sample = {**FIELDS, "retrieved_contexts": [long_a, long_b, huge]}
    result = metric.score(**sample)
    # no two of them fit together in one call, and the huge passage takes two
    assert len(provider.requests) == 4
    assert metric.estimate(SingleTurnSample(**sample)).requests == 4
    assert all(len(str(r.messages[-1].content)) < 6000 + 1500 for r in provider.requests)
    # the second piece of passage 3 is useful, so passage 3 is: relevance [1, 0, 1] -> (1 + 2/3) / 2
    assert result.value == pytest.approx(5 / 6)
    assert result.details["split_ranks"] == [3]
    assert "ranks [3] were longer than 6,000 characters and judged in pieces" in result.reason
