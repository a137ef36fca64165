"""ExactMatch and StringPresence against the Ragas documentation examples."""

from __future__ import annotations

import pytest

from assay import SingleTurnSample
from assay.metrics.classic import ExactMatch, StringPresence


def test_exact_match_doc_example_paris_vs_india_is_zero():
    assert ExactMatch().score(response="India", reference="Paris").value == 0.0


def test_exact_match_is_one_only_for_identical_strings():
    assert ExactMatch().score(response="Paris", reference="Paris").value == 1.0
    # Case and surrounding whitespace count: this is an exact comparison.
    assert ExactMatch().score(response="paris", reference="Paris").value == 0.0
    assert ExactMatch().score(response="Paris ", reference="Paris").value == 0.0


def test_string_presence_doc_example_is_one():
    result = StringPresence().score(
        response="The Eiffel Tower is located in India.", reference="Eiffel Tower"
    )
    assert result.value == 1.0


def test_string_presence_is_zero_when_reference_is_absent():
    assert (
        StringPresence().score(response="The tower is in India.", reference="Eiffel").value == 0.0
    )


@pytest.mark.anyio
async def test_exact_match_scores_a_sample():
    sample = SingleTurnSample(response="Paris", reference="Paris")
    assert (await ExactMatch().ascore_sample(sample)).value == 1.0
