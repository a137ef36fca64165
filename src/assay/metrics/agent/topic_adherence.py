"""Topic adherence: does the assistant answer what is on-topic and only that?

Three calls: list the topics the user raised; for each, did the assistant refuse it; for each,
is it within the reference topics. With answered = not refused and on = within reference:
precision = answered&on / (answered&on + answered&off + 1e-10)
recall    = answered&on / (answered&on + refused&on  + 1e-10)
f1 from both. The two verdict calls run concurrently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import anyio
from pydantic import BaseModel, Field

from assay.errors import NotApplicable
from assay.metrics.agent._conversation import conversation_text
from assay.metrics.base import CallEstimate
from assay.metrics.judge import Verdict, ask_json, ask_verdicts
from assay.metrics.llm_metric import LLMMetric
from assay.schema.messages import AIMessage, HumanMessage, ToolMessage
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample


class TopicList(BaseModel):
    topics: list[str] = Field(default_factory=list)


def topic_adherence_score(refused: list[bool], on_topic: list[bool], mode: str = "f1") -> float:
    """Pure scoring over per-topic flags."""
    answered_on = sum(1 for r, o in zip(refused, on_topic, strict=True) if not r and o)
    answered_off = sum(1 for r, o in zip(refused, on_topic, strict=True) if not r and not o)
    refused_on = sum(1 for r, o in zip(refused, on_topic, strict=True) if r and o)
    precision = answered_on / (answered_on + answered_off + 1e-10)
    recall = answered_on / (answered_on + refused_on + 1e-10)
    if mode == "precision":
        return precision
    if mode == "recall":
        return recall
    return 2 * precision * recall / (precision + recall + 1e-10)


@dataclass(kw_only=True)
class TopicAdherence(LLMMetric):
    name: str = "topic_adherence"
    mode: Literal["f1", "precision", "recall"] = "f1"

    sample_kind = "multi_turn"
    default_prompt_ids = ("topics", "topic_refused", "topic_on_reference")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mode not in ("f1", "precision", "recall"):
            raise ValueError(f"mode must be f1, precision or recall, got {self.mode!r}")

    async def _ascore(
        self,
        *,
        user_input: list[HumanMessage | AIMessage | ToolMessage],
        reference_topics: list[str],
    ) -> MetricResult:
        conversation = conversation_text(user_input)
        topics = [
            t.strip()
            for t in (
                await ask_json(
                    self.llm, self.judge_prompt("topics"), {"conversation": conversation}, TopicList
                )
            ).topics
            if t.strip()
        ]
        if not topics:
            raise NotApplicable("the user raised no topics")
        found: dict[str, list[Verdict | None]] = {}

        async def refused() -> None:
            found["refused"] = await ask_verdicts(
                self.llm, self.judge_prompt("topic_refused"), {"conversation": conversation}, topics
            )

        async def on_reference() -> None:
            found["on"] = await ask_verdicts(
                self.llm,
                self.judge_prompt("topic_on_reference"),
                {"reference_topics": ", ".join(reference_topics)},
                topics,
            )

        async with anyio.create_task_group() as group:
            group.start_soon(refused)
            group.start_soon(on_reference)
        # A topic the judge skipped counts as answered (not refused) and on-topic: the lenient reading.
        refused_flags = [bool(v and v.passed) for v in found["refused"]]
        on_flags = [v.passed if v else True for v in found["on"]]
        score = topic_adherence_score(refused_flags, on_flags, self.mode)
        details = [
            {"topic": t, "refused": r, "on_reference_topics": o}
            for t, r, o in zip(topics, refused_flags, on_flags, strict=True)
        ]
        return MetricResult(
            score,
            reason=f"{sum(o and not r for r, o in zip(refused_flags, on_flags, strict=True))} of "
            f"{len(topics)} topics answered and on the reference topics",
            details={"topics": details},
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        text = len(sample.pretty_repr()) // 4 if hasattr(sample, "pretty_repr") else 200
        return CallEstimate(requests=3, input_tokens=3 * (350 + text), output_tokens=80)


TopicAdherenceScore = TopicAdherence

__all__ = ["TopicAdherence", "TopicAdherenceScore", "topic_adherence_score"]
