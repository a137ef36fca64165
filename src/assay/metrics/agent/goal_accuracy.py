"""Agent goal accuracy: did the conversation achieve what the user wanted? 1.0 or 0.0.

With a reference the judge compares the final state with the reference outcome (one yes/no
verdict); without one it first states the user's goal and the end state, then decides.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from assay.metrics.agent._conversation import conversation_text
from assay.metrics.base import CallEstimate, multi_turn
from assay.metrics.judge import ask_json, ask_yes_no
from assay.metrics.llm_metric import LLMMetric
from assay.prompts.render import render
from assay.schema.messages import AIMessage, HumanMessage, ToolMessage
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample


class GoalJudgement(BaseModel):
    user_goal: str
    end_state: str
    achieved: int = Field(ge=0, le=1)


@dataclass(kw_only=True)
class AgentGoalAccuracyWithReference(LLMMetric):
    name: str = "agent_goal_accuracy"

    sample_kind = "multi_turn"
    default_prompt_ids = ("goal_with_reference",)

    async def _ascore(
        self, *, user_input: list[HumanMessage | AIMessage | ToolMessage], reference: str
    ) -> MetricResult:
        messages = render(
            self.judge_prompt("goal_with_reference"),
            {"conversation": conversation_text(user_input), "reference": reference},
        )
        verdict = await ask_yes_no(self.llm, messages)
        return MetricResult(
            float(verdict.passed),
            reason=f"goal achieved: {verdict.label}",
            details={"probability": verdict.probability},
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        sample = multi_turn(sample)  # the kind it accepts
        return CallEstimate(
            requests=1, input_tokens=300 + len(sample.pretty_repr()) // 4, output_tokens=2
        )


@dataclass(kw_only=True)
class AgentGoalAccuracyWithoutReference(LLMMetric):
    name: str = "agent_goal_accuracy_without_reference"

    sample_kind = "multi_turn"
    default_prompt_ids = ("goal_without_reference",)

    async def _ascore(
        self, *, user_input: list[HumanMessage | AIMessage | ToolMessage]
    ) -> MetricResult:
        judgement = await ask_json(
            self.llm,
            self.judge_prompt("goal_without_reference"),
            {"conversation": conversation_text(user_input)},
            GoalJudgement,
        )
        return MetricResult(
            float(judgement.achieved),
            reason=f"goal: {judgement.user_goal}; outcome: {judgement.end_state}",
            details=judgement.model_dump(),
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        sample = multi_turn(sample)  # the kind it accepts
        return CallEstimate(
            requests=1, input_tokens=400 + len(sample.pretty_repr()) // 4, output_tokens=80
        )


AgentGoalAccuracy = AgentGoalAccuracyWithReference

__all__ = [
    "AgentGoalAccuracy",
    "AgentGoalAccuracyWithReference",
    "AgentGoalAccuracyWithoutReference",
]
