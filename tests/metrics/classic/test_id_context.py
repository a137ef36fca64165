"""IDBasedContextPrecision and IDBasedContextRecall."""

from __future__ import annotations

import pytest

from assay import NotApplicable, SingleTurnSample
from assay.metrics.classic import IDBasedContextPrecision, IDBasedContextRecall


def test_precision_doc_vector():
    result = IDBasedContextPrecision().score(
        retrieved_context_ids=["doc_1", "doc_2", "doc_3", "doc_4"],
        reference_context_ids=["doc_1", "doc_4", "doc_5", "doc_6"],
    )
    assert result.value == 0.5
    assert result.details["matched_ids"] == ["doc_1", "doc_4"]
    assert result.details["unexpected_ids"] == ["doc_2", "doc_3"]
    assert "2 of 4" in result.reason


def test_recall_doc_vector():
    result = IDBasedContextRecall().score(
        retrieved_context_ids=["doc_1", "doc_2", "doc_3"],
        reference_context_ids=["doc_1", "doc_4", "doc_5", "doc_6"],
    )
    assert result.value == 0.25
    assert result.details["missing_ids"] == ["doc_4", "doc_5", "doc_6"]
    assert "1 of 4" in result.reason


def test_int_and_str_ids_are_the_same_document():
    precision = IDBasedContextPrecision().score(
        retrieved_context_ids=[1, 2, 3], reference_context_ids=["1", "3"]
    )
    recall = IDBasedContextRecall().score(
        retrieved_context_ids=[1, 2, 3], reference_context_ids=["1", "3"]
    )
    assert precision.value == pytest.approx(2 / 3, abs=1e-12)
    assert recall.value == 1.0


def test_duplicate_ids_count_once():
    result = IDBasedContextPrecision().score(
        retrieved_context_ids=["a", "a", "a", "b"], reference_context_ids=["a"]
    )
    assert result.value == 0.5


def test_empty_retrieved_ids_make_precision_not_applicable_but_recall_zero():
    with pytest.raises(NotApplicable, match="retrieved"):
        IDBasedContextPrecision().score(retrieved_context_ids=[], reference_context_ids=["a"])
    assert (
        IDBasedContextRecall().score(retrieved_context_ids=[], reference_context_ids=["a"]).value
        == 0.0
    )


def test_empty_reference_ids_make_recall_not_applicable_but_precision_zero():
    with pytest.raises(NotApplicable, match="reference"):
        IDBasedContextRecall().score(retrieved_context_ids=["a"], reference_context_ids=[])
    assert (
        IDBasedContextPrecision().score(retrieved_context_ids=["a"], reference_context_ids=[]).value
        == 0.0
    )


@pytest.mark.anyio
async def test_scores_a_sample():
    sample = SingleTurnSample(
        retrieved_context_ids=["doc_1", "doc_2", "doc_3", "doc_4"],
        reference_context_ids=["doc_1", "doc_4", "doc_5", "doc_6"],
    )
    assert (await IDBasedContextPrecision().ascore_sample(sample)).value == 0.5
    assert (await IDBasedContextRecall().ascore_sample(sample)).value == 0.5
