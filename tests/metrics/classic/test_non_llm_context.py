"""NonLLMContextPrecisionWithReference and NonLLMContextRecall."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from assay import MetricResult, NotApplicable, SingleTurnSample, UsageError
from assay.metrics.base import Metric
from assay.metrics.classic import (
    DistanceMeasure,
    NonLLMContextPrecisionWithReference,
    NonLLMContextRecall,
    RougeScore,
)

CAPITAL = "Paris is the capital of France."
LANDMARK = "The Eiffel Tower is one of the most famous landmarks in Paris."
LOCATED = "The Eiffel Tower is located in Paris."
UNRELATED = "Bananas are rich in potassium and grow in bunches."


def test_precision_doc_vector():
    result = NonLLMContextPrecisionWithReference().score(
        retrieved_contexts=[LOCATED], reference_contexts=[CAPITAL, LANDMARK]
    )
    # LOCATED is closest to LANDMARK (Levenshtein similarity 17/31 ~ 0.548 >= 0.5), so the
    # one retrieved context is relevant: AP = 1 / (1 + 1e-10).
    assert result.value == 0.9999999999
    assert result.value == 1 / (1 + 1e-10)
    assert result.details["verdicts"] == [1]
    assert result.details["best_reference_index"] == [1]
    assert result.details["best_similarity"][0] == pytest.approx(17 / 31, abs=1e-12)


def test_recall_doc_vector():
    result = NonLLMContextRecall().score(
        retrieved_contexts=[CAPITAL], reference_contexts=[CAPITAL, LANDMARK]
    )
    assert result.value == 0.5
    assert result.details["recalled"] == [1, 0]
    assert "1 of 2" in result.reason


def test_precision_rewards_relevant_contexts_ranked_first():
    metric = NonLLMContextPrecisionWithReference()
    first = metric.score(retrieved_contexts=[CAPITAL, UNRELATED], reference_contexts=[CAPITAL])
    second = metric.score(retrieved_contexts=[UNRELATED, CAPITAL], reference_contexts=[CAPITAL])
    assert first.value == pytest.approx(1 / (1 + 1e-10), abs=1e-15)
    # Relevant at rank 2 only: precision@2 = 1/2, one relevant item.
    assert second.value == pytest.approx(0.5 / (1 + 1e-10), abs=1e-15)
    assert second.details["verdicts"] == [0, 1]


def test_nothing_relevant_scores_zero():
    assert (
        NonLLMContextPrecisionWithReference()
        .score(retrieved_contexts=[UNRELATED], reference_contexts=[CAPITAL])
        .value
        == 0.0
    )
    assert (
        NonLLMContextRecall()
        .score(retrieved_contexts=[UNRELATED], reference_contexts=[CAPITAL])
        .value
        == 0.0
    )


def test_threshold_decides_relevance():
    strict = NonLLMContextPrecisionWithReference(threshold=0.6)
    assert (
        strict.score(retrieved_contexts=[LOCATED], reference_contexts=[CAPITAL, LANDMARK]).value
        == 0.0
    )
    lenient = NonLLMContextRecall(threshold=0.2)
    assert (
        lenient.score(retrieved_contexts=[CAPITAL], reference_contexts=[CAPITAL, LANDMARK]).value
        == 1.0
    )


def test_distance_measure_by_enum_string_or_metric():
    by_enum = NonLLMContextRecall(distance_measure=DistanceMeasure.JARO_WINKLER)
    by_text = NonLLMContextRecall(distance_measure="jaro_winkler")
    assert by_enum.distance_measure is by_text.distance_measure is DistanceMeasure.JARO_WINKLER
    # ROUGE-L F between LOCATED and LANDMARK: LCS "The Eiffel Tower is ... in Paris" = 6 of 7 and
    # 6 of 12 tokens -> F = 2 * (6/7) * (1/2) / (6/7 + 1/2) = 12/19, above 0.5.
    by_metric = NonLLMContextPrecisionWithReference(distance_measure=RougeScore())
    result = by_metric.score(retrieved_contexts=[LOCATED], reference_contexts=[LANDMARK])
    assert result.details["best_similarity"][0] == pytest.approx(12 / 19, abs=1e-12)
    assert result.value == 1 / (1 + 1e-10)


def test_nested_metric_is_described_in_a_json_spec():
    spec = NonLLMContextRecall(distance_measure=RougeScore(rouge_type="rouge1")).spec()
    assert (
        json.loads(json.dumps(spec))["params"]["distance_measure"]["params"]["rouge_type"]
        == "rouge1"
    )
    assert NonLLMContextRecall().spec()["params"] == {
        "distance_measure": "levenshtein",
        "threshold": 0.5,
    }


@dataclass(kw_only=True)
class _NeedsAModel(Metric):
    name: str = "needs_a_model"
    required_fields = ("response", "reference")
    needs_llm = True

    async def _ascore(self, *, response: str, reference: str) -> MetricResult:
        return MetricResult(1.0)


def test_model_based_or_unknown_measures_are_rejected():
    with pytest.raises(UsageError, match="model"):
        NonLLMContextRecall(distance_measure=_NeedsAModel())
    with pytest.raises(UsageError, match="distance_measure"):
        NonLLMContextPrecisionWithReference(distance_measure="cosine")
    with pytest.raises(UsageError, match="threshold"):
        NonLLMContextRecall(threshold="high")


def test_empty_lists():
    with pytest.raises(NotApplicable, match="retrieved"):
        NonLLMContextPrecisionWithReference().score(
            retrieved_contexts=[], reference_contexts=[CAPITAL]
        )
    with pytest.raises(NotApplicable, match="reference"):
        NonLLMContextRecall().score(retrieved_contexts=[CAPITAL], reference_contexts=[])
    # Nothing retrieved recalls nothing; nothing to match against makes nothing relevant.
    assert (
        NonLLMContextRecall().score(retrieved_contexts=[], reference_contexts=[CAPITAL]).value
        == 0.0
    )
    result = NonLLMContextPrecisionWithReference().score(
        retrieved_contexts=[CAPITAL], reference_contexts=[]
    )
    assert result.value == 0.0
    assert result.details["best_reference_index"] == [-1]


@pytest.mark.anyio
async def test_scores_a_sample():
    sample = SingleTurnSample(retrieved_contexts=[CAPITAL], reference_contexts=[CAPITAL, LANDMARK])
    assert (await NonLLMContextRecall().ascore_sample(sample)).value == 0.5
    assert (await NonLLMContextPrecisionWithReference().ascore_sample(sample)).value == 0.9999999999
