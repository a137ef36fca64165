"""BleuScore (sacrebleu corpus BLEU / 100)."""

from __future__ import annotations

import pytest

from assay import SingleTurnSample, UsageError
from assay.metrics.classic import BleuScore

PARIS = "The Eiffel Tower is located in Paris."
INDIA = "The Eiffel Tower is located in India."


def test_doc_vector():
    result = BleuScore().score(response=INDIA, reference=PARIS)
    assert result.value == 0.7071067811865478
    # 8 tokens each (the final "." is a token); one wrong word leaves n-gram precisions
    # 7/8, 5/7, 4/6, 3/5 and no brevity penalty: the geometric mean is 0.25 ** 0.25.
    assert result.value == pytest.approx((7 / 8 * 5 / 7 * 4 / 6 * 3 / 5) ** 0.25, abs=1e-12)
    assert result.details["precisions"] == pytest.approx([7 / 8, 5 / 7, 4 / 6, 3 / 5], abs=1e-12)
    assert result.details["brevity_penalty"] == 1.0
    assert isinstance(result.value, float)


def test_identical_texts_score_one_and_disjoint_texts_zero():
    assert BleuScore().score(response=PARIS, reference=PARIS).value == pytest.approx(1.0, abs=1e-12)
    assert (
        BleuScore().score(response="completely different words here", reference=PARIS).value == 0.0
    )


def test_empty_response_scores_zero():
    assert BleuScore().score(response="", reference=PARIS).value == 0.0


def test_kwargs_reach_sacrebleu():
    # A short hypothesis with no 4-gram match scores 0 unsmoothed but > 0 with add-one smoothing.
    plain = BleuScore().score(response="The Eiffel Tower", reference=PARIS).value
    smoothed = BleuScore(kwargs={"smooth_method": "add-k", "smooth_value": 1}).score(
        response="The Eiffel Tower", reference=PARIS
    )
    assert smoothed.value != plain
    lowercased = BleuScore(kwargs={"lowercase": True}).score(
        response=PARIS.upper(), reference=PARIS
    )
    assert lowercased.value == pytest.approx(1.0, abs=1e-12)


def test_bad_kwargs_are_usage_errors():
    with pytest.raises(UsageError, match="kwargs"):
        BleuScore(kwargs=["smooth_method"])
    with pytest.raises(UsageError, match="corpus_bleu"):
        BleuScore(kwargs={"no_such_option": 1}).score(response=INDIA, reference=PARIS)


@pytest.mark.anyio
async def test_scores_a_sample():
    sample = SingleTurnSample(response=INDIA, reference=PARIS)
    assert (await BleuScore().ascore_sample(sample)).value == pytest.approx(2**-0.5, abs=1e-12)
