"""NonLLMStringSimilarity and DistanceMeasure."""

from __future__ import annotations

import json

import pytest

from assay import SingleTurnSample, UsageError
from assay.metrics.classic import DistanceMeasure, NonLLMStringSimilarity

PARIS = "The Eiffel Tower is located in Paris."
INDIA = "The Eiffel Tower is located in India."


def test_levenshtein_doc_vector():
    # 37 characters each; "Paris" -> "India" takes 4 substitutions (the "i" lines up).
    value = NonLLMStringSimilarity().score(response=INDIA, reference=PARIS).value
    assert value == 0.8918918918918919
    assert value == pytest.approx(1 - 4 / 37, abs=1e-12)
    assert isinstance(value, float)


def test_levenshtein_is_the_default():
    assert NonLLMStringSimilarity().distance_measure is DistanceMeasure.LEVENSHTEIN


def test_hamming_counts_positional_mismatches():
    metric = NonLLMStringSimilarity(distance_measure=DistanceMeasure.HAMMING)
    # karolin / kathrin differ at positions 2, 3 and 4: 3 of 7.
    assert metric.score(response="kathrin", reference="karolin").value == pytest.approx(
        4 / 7, abs=1e-12
    )


def test_hamming_accepts_unequal_lengths_counting_the_overhang_as_mismatches():
    metric = NonLLMStringSimilarity(distance_measure=DistanceMeasure.HAMMING)
    assert metric.score(response="abcd", reference="abc").value == pytest.approx(
        1 - 1 / 4, abs=1e-12
    )
    assert metric.score(response="", reference="abc").value == 0.0


def test_jaro_and_jaro_winkler_textbook_values():
    # MARTHA / MARHTA: 6 matches, 1 transposition -> Jaro = (1 + 1 + 5/6) / 3 = 17/18;
    # Winkler adds 3 common-prefix chars * 0.1 * (1 - 17/18).
    jaro = NonLLMStringSimilarity(distance_measure=DistanceMeasure.JARO)
    winkler = NonLLMStringSimilarity(distance_measure=DistanceMeasure.JARO_WINKLER)
    assert jaro.score(response="MARHTA", reference="MARTHA").value == pytest.approx(
        17 / 18, abs=1e-12
    )
    expected = 17 / 18 + 3 * 0.1 * (1 - 17 / 18)
    assert winkler.score(response="MARHTA", reference="MARTHA").value == pytest.approx(
        expected, abs=1e-12
    )


@pytest.mark.parametrize("measure", list(DistanceMeasure))
def test_identical_and_empty_strings(measure):
    metric = NonLLMStringSimilarity(distance_measure=measure)
    assert metric.score(response=PARIS, reference=PARIS).value == 1.0
    # Two empty strings are identical; an empty response shares nothing with a text.
    assert metric.score(response="", reference="").value == 1.0
    assert metric.score(response="", reference=PARIS).value == 0.0


def test_measure_given_as_string_is_normalised_and_spec_is_json():
    metric = NonLLMStringSimilarity(distance_measure="JARO_WINKLER")
    assert metric.distance_measure is DistanceMeasure.JARO_WINKLER
    assert (
        NonLLMStringSimilarity(distance_measure="jaro-winkler").distance_measure
        is DistanceMeasure.JARO_WINKLER
    )
    assert json.loads(json.dumps(metric.spec()))["params"] == {"distance_measure": "jaro_winkler"}


def test_unknown_measure_is_a_usage_error():
    with pytest.raises(UsageError, match="cosine"):
        NonLLMStringSimilarity(distance_measure="cosine")


def test_details_describe_the_comparison():
    result = NonLLMStringSimilarity().score(response="abc", reference="abcdef")
    assert result.details == {
        "distance_measure": "levenshtein",
        "response_length": 3,
        "reference_length": 6,
    }
    assert result.value == pytest.approx(0.5, abs=1e-12)


@pytest.mark.anyio
async def test_scores_a_sample():
    sample = SingleTurnSample(response=INDIA, reference=PARIS)
    assert (await NonLLMStringSimilarity().ascore_sample(sample)).value == pytest.approx(
        1 - 4 / 37, abs=1e-12
    )
