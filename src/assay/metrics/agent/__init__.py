"""Metrics for agents and multi-turn conversations."""

from assay.metrics.agent.goal_accuracy import (
    AgentGoalAccuracy,
    AgentGoalAccuracyWithoutReference,
    AgentGoalAccuracyWithReference,
)
from assay.metrics.agent.topic_adherence import TopicAdherence, TopicAdherenceScore

__all__ = [
    "AgentGoalAccuracy",
    "AgentGoalAccuracyWithReference",
    "AgentGoalAccuracyWithoutReference",
    "TopicAdherence",
    "TopicAdherenceScore",
]
