"""The constructed answer-relevance suite: pure construction rules, then the loader on the real
RAGChecker file."""

from __future__ import annotations

import json

import pytest

from assay.benchmark.constructed import (
    MIN_SENTENCES,
    _donor,
    first_half,
    load_ragchecker_relevance,
    padded,
)
from assay.benchmark.loaders import load_ragchecker
from assay.errors import UsageError
from assay.metrics.text import split_sentences

LISTED = (
    "Corpora are built in stages.\n\n1. **Collection**: text is gathered from the web.\n"
    "2. **Filtering**: spam and boilerplate are removed.\n3. **Deduplication**: copies are dropped.\n"
    "Finally, the text is tokenised."
)


def test_first_half_keeps_the_leading_sentences_and_their_formatting():
    half = first_half(LISTED)
    assert half == (
        "Corpora are built in stages.\n\n1. **Collection**: text is gathered from the web."
    )
    assert len(split_sentences(half)) == len(split_sentences(LISTED)) // 2


def test_first_half_refuses_a_response_too_short_to_halve():
    three = "One fact. Another fact. A third fact."
    assert len(split_sentences(three)) == MIN_SENTENCES - 1
    assert first_half(three) is None


def test_padded_appends_the_donors_opening_sentences_only():
    donor = "Tall players head well. Short ones turn fast. Height is not everything."
    assert (
        padded("The answer.  ", donor)
        == "The answer.\n\nTall players head well. Short ones turn fast."
    )


def test_every_pair_prefers_the_untouched_response(metaeval_dir):
    data = load_ragchecker_relevance(metaeval_dir, split="dev")
    assert data.kind == "pairwise" and data.aspect == "answer_relevance"
    assert data.n_units == len(data.pairs) == 2 * len(data.rows) // 3
    for number, (preferred, worse) in enumerate(data.pairs):
        whole, other = data.rows[preferred], data.rows[worse]
        assert whole["user_input"] == other["user_input"]
        kind = "incomplete" if number % 2 == 0 else "padded"
        assert data.ids[worse] == f"{data.ids[preferred]}-{kind}"
        if kind == "incomplete":
            assert whole["response"].startswith(other["response"])
            assert len(other["response"]) < len(whole["response"])
        else:
            assert other["response"].startswith(whole["response"].rstrip())
            assert len(other["response"]) > len(whole["response"])
        assert len(split_sentences(whole["response"])) >= MIN_SENTENCES


def test_the_donor_is_the_next_response_from_another_data_set():
    responses = [
        ("a", "q", "kiwi one", "kiwi"),
        ("b", "q", "kiwi two", "kiwi"),
        ("c", "q", "novel one", "novelqa"),
    ]
    assert _donor(responses, 0, "kiwi") == "novel one"  # skips the other kiwi response
    assert _donor(responses, 2, "novelqa") == "kiwi one"  # wraps round
    assert _donor(responses[:2], 0, "kiwi") == "kiwi two"  # no other data set: the next one


def test_padding_is_another_data_sets_response_opening(metaeval_dir):
    records = json.loads((metaeval_dir / "ragchecker" / "human_labeled_data.json").read_text())
    dataset_of = {r["query"]: r["dataset"] for r in records}
    responses = {r[m]["response"]: r["dataset"] for r in records for m in ("model1", "model2")}
    data = load_ragchecker_relevance(metaeval_dir, split="dev", limit=12)
    assert len(data.pairs) == 24
    for preferred, worse in data.pairs[1::2]:
        whole, other = data.rows[preferred], data.rows[worse]
        added = other["response"][len(whole["response"].rstrip()) :].strip()
        donors = [
            text
            for text in responses
            if split_sentences(text) and added.startswith(split_sentences(text)[0])
        ]
        assert donors and all(responses[text] != dataset_of[whole["user_input"]] for text in donors)


def test_it_inherits_ragcheckers_dev_and_test_split(metaeval_dir):
    def instances(data):
        return {row_id.split("-")[2] for row_id in data.ids}

    dev = instances(load_ragchecker_relevance(metaeval_dir, split="dev"))
    test = instances(load_ragchecker_relevance(metaeval_dir, split="test"))
    assert dev and test and not dev & test
    ragchecker_dev = {i.split("-")[1] for i in load_ragchecker(metaeval_dir, split="dev").ids}
    assert dev <= ragchecker_dev
    with pytest.raises(UsageError, match="no 'all' split"):
        load_ragchecker_relevance(metaeval_dir, split="all")
