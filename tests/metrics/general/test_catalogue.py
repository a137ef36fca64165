"""The issue's metrics are reachable by id and from the package root."""

from __future__ import annotations

import pytest

import assay
from assay.metrics.agent import (
    AgentGoalAccuracyWithoutReference,
    AgentGoalAccuracyWithReference,
    TopicAdherence,
)
from assay.metrics.general import (
    InstanceSpecificRubrics,
    RubricsScore,
    RubricsScoreWithoutReference,
    RubricsScoreWithReference,
)
from assay.metrics.registry import create_metric
from assay.metrics.sql import SQLSemanticEquivalence


@pytest.mark.parametrize(
    ("metric_id", "cls"),
    [
        ("topic_adherence", TopicAdherence),
        ("agent_goal_accuracy", AgentGoalAccuracyWithReference),
        ("agent_goal_accuracy_without_reference", AgentGoalAccuracyWithoutReference),
        ("sql_semantic_equivalence", SQLSemanticEquivalence),
        ("domain_specific_rubrics", RubricsScore),
        ("rubrics_score_with_reference", RubricsScoreWithReference),
        ("rubrics_score_without_reference", RubricsScoreWithoutReference),
        ("instance_rubrics", InstanceSpecificRubrics),
    ],
)
def test_ids(metric_id, cls):
    metric = create_metric(metric_id)
    assert type(metric) is cls and metric.name == metric_id
    assert metric.needs_llm


def test_parameters_by_id():
    assert create_metric("topic_adherence", mode="recall").mode == "recall"
    assert create_metric("rubrics_score_with_reference").required_fields == (
        "response",
        "reference",
    )
    with pytest.raises(assay.UsageError):
        create_metric("topic_adherence", strictness=3)


def test_package_root_exports():
    for name in (
        "AspectCritic",
        "SimpleCriteriaScore",
        "RubricsScore",
        "DomainSpecificRubrics",
        "InstanceRubrics",
        "InstanceSpecificRubrics",
        "RubricsScoreWithReference",
        "RubricsScoreWithoutReference",
        "TopicAdherence",
        "TopicAdherenceScore",
        "AgentGoalAccuracyWithReference",
        "AgentGoalAccuracyWithoutReference",
        "SQLSemanticEquivalence",
        "LLMSQLEquivalence",
        "DiscreteMetric",
        "NumericMetric",
        "RankingMetric",
        "discrete_metric",
        "numeric_metric",
        "ranking_metric",
        "MetricResult",
        "Criteria",
        "harmfulness",
        "maliciousness",
        "coherence",
        "correctness",
        "conciseness",
    ):
        assert hasattr(assay, name), name
