"""Metrics for agents and multi-turn conversations."""

from assay.metrics.agent.goal_accuracy import (
    AgentGoalAccuracy,
    AgentGoalAccuracyWithoutReference,
    AgentGoalAccuracyWithReference,
)
from assay.metrics.agent.plan_adherence import PlanAdherence
from assay.metrics.agent.step_efficiency import StepEfficiency
from assay.metrics.agent.task_completion import TaskCompletion
from assay.metrics.agent.tool_arguments import ToolArgumentCorrectness
from assay.metrics.agent.topic_adherence import TopicAdherence, TopicAdherenceScore

__all__ = [
    "AgentGoalAccuracy",
    "AgentGoalAccuracyWithReference",
    "AgentGoalAccuracyWithoutReference",
    "PlanAdherence",
    "StepEfficiency",
    "TaskCompletion",
    "ToolArgumentCorrectness",
    "TopicAdherence",
    "TopicAdherenceScore",
]
