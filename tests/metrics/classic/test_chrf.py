"""CHRFScore / ChrfScore (sacrebleu corpus chrF / 100)."""

from __future__ import annotations

import pytest

from assay import SingleTurnSample, UsageError
from assay.metrics.classic import CHRFScore, ChrfScore

PARIS = "The Eiffel Tower is located in Paris."
INDIA = "The Eiffel Tower is located in India."


def test_doc_vector():
    value = CHRFScore().score(response=INDIA, reference=PARIS).value
    assert round(value, 4) == 0.8048
    assert value == pytest.approx(0.80484, abs=1e-5)


def test_legacy_alias_is_the_same_metric():
    assert ChrfScore is CHRFScore
    assert ChrfScore().name == "chrf_score"


def test_kwargs_reach_sacrebleu():
    default = CHRFScore().score(response=INDIA, reference=PARIS)
    chrf_pp = CHRFScore(kwargs={"char_order": 4, "word_order": 2}).score(
        response=INDIA, reference=PARIS
    )
    beta3 = CHRFScore(kwargs={"beta": 3}).score(response=INDIA, reference=PARIS)
    assert (default.details["char_order"], default.details["word_order"]) == (6, 0)
    assert (chrf_pp.details["char_order"], chrf_pp.details["word_order"]) == (4, 2)
    assert beta3.details["beta"] == 3.0
    assert chrf_pp.value != default.value
    assert 0.0 < chrf_pp.value < 1.0


def test_identical_and_empty():
    assert CHRFScore().score(response=PARIS, reference=PARIS).value == pytest.approx(1.0, abs=1e-12)
    assert CHRFScore().score(response="", reference=PARIS).value == 0.0


def test_unknown_option_is_a_usage_error():
    with pytest.raises(UsageError, match="corpus_chrf"):
        CHRFScore(kwargs={"ngram": 3}).score(response=INDIA, reference=PARIS)


@pytest.mark.anyio
async def test_scores_a_sample():
    sample = SingleTurnSample(response=INDIA, reference=PARIS)
    assert round((await CHRFScore().ascore_sample(sample)).value, 4) == 0.8048
