"""Context recall: reference sentences supported by the contexts."""

from __future__ import annotations

from assay.metrics.rag.context_recall import LLMContextRecall
from tests.metrics.rag.scripted import judge, verdict_lines


def test_half_of_the_reference_is_found():
    llm, provider = judge(verdict_lines("yes", "no"))
    result = LLMContextRecall(llm=llm).score(
        reference="Dr. Smith founded the lab in 1998. It moved to Boston in 2004.",
        retrieved_contexts=["The lab was founded by Dr. Smith in 1998."],
    )
    assert result.value == 0.5
    items = provider.requests[0].messages[-1].content
    assert (
        "1. Dr. Smith founded the lab in 1998." in items
        and "2. It moved to Boston in 2004." in items
    )


def test_chinese_reference_is_split_into_sentences():
    llm, provider = judge(verdict_lines("yes", "yes", "no"))
    result = LLMContextRecall(llm=llm).score(
        reference="爱因斯坦出生于德国。他是一位物理学家！他获得了诺贝尔奖。",
        retrieved_contexts=["爱因斯坦是出生于德国的物理学家。"],
    )
    assert result.value == 2 / 3
    assert "3. 他获得了诺贝尔奖。" in provider.requests[0].messages[-1].content
