"""RougeScore (rouge-score library)."""

from __future__ import annotations

import pytest

from assay import SingleTurnSample, UsageError
from assay.metrics.classic import RougeScore

PARIS = "The Eiffel Tower is located in Paris."
INDIA = "The Eiffel Tower is located in India."


def test_doc_vector_rouge_l_fmeasure():
    # 7 tokens each, 6 in common in order: P = R = F = 6/7.
    value = RougeScore().score(response=INDIA, reference=PARIS).value
    assert value == 0.8571428571428571
    assert value == pytest.approx(6 / 7, abs=1e-12)


def test_rouge1_on_the_doc_pair():
    assert RougeScore(rouge_type="rouge1").score(
        response=INDIA, reference=PARIS
    ).value == pytest.approx(6 / 7, abs=1e-12)


def test_precision_and_recall_modes_use_response_and_reference_lengths():
    shorter = "The Eiffel Tower is in Paris."  # 6 tokens, all in the 7-token reference, in order
    precision = RougeScore(mode="precision").score(response=shorter, reference=PARIS)
    recall = RougeScore(mode="recall").score(response=shorter, reference=PARIS)
    fmeasure = RougeScore(mode="fmeasure").score(response=shorter, reference=PARIS)
    assert precision.value == pytest.approx(1.0, abs=1e-12)
    assert recall.value == pytest.approx(6 / 7, abs=1e-12)
    assert fmeasure.value == pytest.approx(2 * 1 * (6 / 7) / (1 + 6 / 7), abs=1e-12)
    assert precision.details["recall"] == pytest.approx(6 / 7, abs=1e-12)


def test_rouge_l_respects_order_but_rouge1_does_not():
    shuffled = "Paris in located is Tower Eiffel The."
    rouge1 = RougeScore(rouge_type="rouge1").score(response=shuffled, reference=PARIS).value
    rouge_l = RougeScore(rouge_type="rougeL").score(response=shuffled, reference=PARIS).value
    assert rouge1 == pytest.approx(1.0, abs=1e-12)
    assert rouge_l < 0.5


def test_empty_response_scores_zero():
    assert RougeScore().score(response="", reference=PARIS).value == 0.0


@pytest.mark.parametrize(("field", "value"), [("rouge_type", "rougeX"), ("mode", "f1")])
def test_invalid_parameters_are_usage_errors(field, value):
    with pytest.raises(UsageError, match=field):
        RougeScore(**{field: value})


@pytest.mark.anyio
async def test_scores_a_sample():
    sample = SingleTurnSample(response=INDIA, reference=PARIS)
    assert (await RougeScore().ascore_sample(sample)).value == pytest.approx(6 / 7, abs=1e-12)
