"""Task completion: of the tasks the user asked for, how many did the run get done?

Judged from the whole trajectory, tool calls and tool outputs included, in two calls: the judge
lists the tasks the user asked for (`completion_tasks`), then decides for each whether the run got
it done (`task_completed`: a tool output or the agent's answer shows it; a promise, a failed tool
or a claim the tool outputs contradict does not count). score = tasks done / tasks judged, each
task reported with its verdict.

Unlike `agent_goal_accuracy` (one yes/no for the conversation), a run that does two of three
requests scores 2/3 and says which one it missed.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from assay.errors import NotApplicable
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


class TaskList(BaseModel):
    tasks: list[str] = Field(default_factory=list)


def task_completion_score(done: list[bool | None]) -> float:
    """Pure scoring: the share of judged tasks done (None: the judge skipped it, left out)."""
    return checklist_score(done)


@dataclass(kw_only=True)
class TaskCompletion(LLMMetric):
    name: str = "task_completion"

    sample_kind = "multi_turn"
    default_prompt_ids = ("completion_tasks", "task_completed")

    async def _ascore(
        self, *, user_input: list[HumanMessage | AIMessage | ToolMessage]
    ) -> MetricResult:
        conversation = conversation_text(user_input)
        tasks = await list_items(
            self.llm, self.judge_prompt("completion_tasks"), conversation, TaskList, "tasks"
        )
        if not tasks:
            raise NotApplicable("the judge found no task the user asked for")
        verdicts = await judge_items(
            self.llm, self.judge_prompt("task_completed"), conversation, tasks
        )
        return checklist_result(
            tasks,
            verdicts,
            key="task",
            counted="task(s) done",
            failed="not done",
            score=task_completion_score,
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        text = len(multi_turn(sample).pretty_repr()) // 4
        # the task list (~20 tokens a task, ~3 tasks), then one verdict line per task
        return CallEstimate(requests=2, input_tokens=2 * (380 + text) + 60, output_tokens=90)


__all__ = ["TaskCompletion", "TaskList", "task_completion_score"]
