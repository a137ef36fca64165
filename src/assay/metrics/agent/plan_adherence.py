"""Plan adherence: did the agent do what it said it would?

The plan is the one the agent stated in the conversation. An agent framework that records its
plan can put it on the assistant message that announced it, as `metadata={"plan": [steps]}`, and
no call is spent finding it; otherwise the judge lists the steps the agent announced
(`plan_steps`). Then one call judges every step against what the agent did afterwards, its tool
calls, their outputs and its answers (`plan_step_followed`): announcing a step is not doing it,
and a step done with another tool, other arguments or another target is not followed.
score = steps followed / steps judged, each step reported with its verdict; a run with no stated
plan is skipped, not scored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from assay.errors import NotApplicable, UsageError
from assay.metrics.agent._checklist import (
    checklist_result,
    checklist_score,
    judge_items,
    list_items,
)
from assay.metrics.agent._conversation import conversation_text
from assay.metrics.base import CallEstimate, multi_turn
from assay.metrics.llm_metric import LLMMetric
from assay.schema.messages import AIMessage, HumanMessage, ToolMessage
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample


class PlanSteps(BaseModel):
    plan: list[str] = Field(default_factory=list)


def recorded_plan(messages: list[Any]) -> list[str] | None:
    """The plan on the first assistant message whose metadata holds one (None: no message does).
    A plan that is not a list of texts is a UsageError naming the message."""
    for index, message in enumerate(messages):
        metadata = getattr(message, "metadata", None) or {}
        if not isinstance(message, AIMessage) or "plan" not in metadata:
            continue
        plan = metadata["plan"]
        if not isinstance(plan, list) or not all(isinstance(step, str) for step in plan):
            raise UsageError(
                f"user_input[{index}].metadata['plan'] must be a list of texts (the plan's "
                f"steps), got {type(plan).__name__}"
            )
        return [step.strip() for step in plan if step.strip()]
    return None


def plan_adherence_score(followed: list[bool | None]) -> float:
    """Pure scoring: the share of judged plan steps followed (None: skipped by the judge)."""
    return checklist_score(followed)


@dataclass(kw_only=True)
class PlanAdherence(LLMMetric):
    name: str = "plan_adherence"

    sample_kind = "multi_turn"
    default_prompt_ids = ("plan_steps", "plan_step_followed")

    async def _ascore(
        self, *, user_input: list[HumanMessage | AIMessage | ToolMessage]
    ) -> MetricResult:
        conversation = conversation_text(user_input)
        plan = recorded_plan(user_input)
        source = "recorded"
        if plan is None:
            source = "stated"
            plan = await list_items(
                self.llm, self.judge_prompt("plan_steps"), conversation, PlanSteps, "plan"
            )
        if not plan:
            raise NotApplicable("the agent stated no plan to adhere to")
        verdicts = await judge_items(
            self.llm, self.judge_prompt("plan_step_followed"), conversation, plan
        )
        result = checklist_result(
            plan,
            verdicts,
            key="step",
            counted="planned step(s) followed",
            failed="not followed",
            score=plan_adherence_score,
        )
        result.details = {"plan_source": source, **(result.details or {})}
        return result

    def estimate(self, sample: Sample) -> CallEstimate:
        conversation = multi_turn(sample)
        text = len(conversation.pretty_repr()) // 4
        if recorded_plan(conversation.user_input) is not None:
            return CallEstimate(requests=1, input_tokens=420 + text, output_tokens=30)
        return CallEstimate(requests=2, input_tokens=2 * (420 + text) + 60, output_tokens=90)


__all__ = ["PlanAdherence", "PlanSteps", "plan_adherence_score", "recorded_plan"]
