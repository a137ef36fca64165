"""Rubric-based scoring: the judge picks the score whose description fits the response.

- `RubricsScore` / `DomainSpecificRubrics`: one rubric for every sample (defaults below, with or
  without a reference). Aliases `RubricsScoreWithoutReference`, `RubricsScoreWithReference`.
- `InstanceSpecificRubrics`: each sample brings its own rubric in its `rubrics` field.
Rubric keys look like `score1_description` ... `score5_description`; any integer scores work.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, Field, create_model

from assay.errors import NotApplicable, OutputParseError, UsageError
from assay.metrics.base import CallEstimate
from assay.metrics.general._inputs import JudgesConversations, judge_inputs
from assay.metrics.judge import ask_json
from assay.metrics.llm_metric import LLMMetric
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample

DEFAULT_RUBRIC_WITHOUT_REFERENCE = {
    "score1_description": "The response is wrong or does not address the question at all.",
    "score2_description": "The response has some correct parts but major mistakes or gaps.",
    "score3_description": "The response is mostly correct but unclear, thin, or missing details.",
    "score4_description": "The response is correct and clear, with only small gaps or slips.",
    "score5_description": "The response is correct, clear and fully answers the question.",
}
DEFAULT_RUBRIC_WITH_REFERENCE = {
    "score1_description": "The response contradicts the reference or is unrelated to it.",
    "score2_description": "The response agrees with parts of the reference but has major errors or omissions.",
    "score3_description": "The response agrees with the reference overall but lacks detail or clarity.",
    "score4_description": "The response agrees closely with the reference, with minor issues.",
    "score5_description": "The response agrees fully with the reference and is clear and complete.",
}

_KEY = re.compile(r"score\s*(-?\d+)", re.IGNORECASE)


def rubric_scores(rubric: dict[str, str]) -> list[int]:
    """The integer scores a rubric defines, from keys like 'score3_description'."""
    scores = []
    for key in rubric:
        match = _KEY.search(key)
        if not match:
            raise UsageError(
                f"rubric key {key!r} does not name a score (use e.g. 'score1_description')"
            )
        scores.append(int(match.group(1)))
    return sorted(set(scores))


def rubric_text(rubric: dict[str, str]) -> str:
    return "\n".join(f"{key}: {description}" for key, description in rubric.items())


class RubricAnswer(BaseModel):
    feedback: str
    score: int


async def score_with_rubric(
    metric: LLMMetric, rubric: dict[str, str], fields: dict[str, Any]
) -> MetricResult:
    allowed = rubric_scores(rubric)
    values = {"rubric": rubric_text(rubric), **judge_inputs(**fields)}
    answer = await ask_json(metric.llm, metric.judge_prompt("rubric_score"), values, RubricAnswer)
    if answer.score not in allowed:
        raise OutputParseError(
            f"the judge gave score {answer.score}, not one of the rubric's {allowed}",
            raw=answer.model_dump_json(),
        )
    return MetricResult(answer.score, reason=answer.feedback)


@dataclass(kw_only=True)
class RubricsScore(JudgesConversations, LLMMetric):
    name: str = "domain_specific_rubrics"
    rubrics: dict[str, str] | None = None
    with_reference: bool = False

    required_fields: ClassVar[tuple[str, ...]] = ("response",)
    optional_fields: ClassVar[tuple[str, ...]] = ("user_input", "retrieved_contexts", "reference")
    default_prompt_ids = ("rubric_score",)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.rubrics is None:
            self.rubrics = dict(
                DEFAULT_RUBRIC_WITH_REFERENCE
                if self.with_reference
                else DEFAULT_RUBRIC_WITHOUT_REFERENCE
            )
        rubric_scores(self.rubrics)  # validates keys now, not at the first sample
        if self.with_reference:
            self.declare_fields(("response", "reference"))
            self.conversation_fields = (("user_input", "reference"), ())  # type: ignore[misc]  # per instance

    async def _ascore(self, **fields: Any) -> MetricResult:
        return await score_with_rubric(self, self.rubrics or {}, fields)

    def estimate(self, sample: Sample) -> CallEstimate:
        text = (
            sum(len(str(sample.get(f) or "")) for f in ("user_input", "response", "reference")) // 4
        )
        return CallEstimate(requests=1, input_tokens=450 + text, output_tokens=60)


DomainSpecificRubrics = RubricsScore


@dataclass(kw_only=True)
class InstanceSpecificRubrics(JudgesConversations, LLMMetric):
    name: str = "instance_rubrics"

    required_fields: ClassVar[tuple[str, ...]] = ("response", "rubrics")
    optional_fields: ClassVar[tuple[str, ...]] = ("user_input", "retrieved_contexts", "reference")
    conversation_fields = (("user_input", "rubrics"), ("reference",))
    default_prompt_ids = ("rubric_score",)

    async def _ascore(self, *, rubrics: dict[str, str], **fields: Any) -> MetricResult:
        if not rubrics:
            raise NotApplicable("the sample has no rubric")
        return await score_with_rubric(self, rubrics, fields)

    def estimate(self, sample: Sample) -> CallEstimate:
        fields = ("user_input", "response", "reference", "rubrics")
        text = sum(len(str(sample.get(f) or "")) for f in fields) // 4
        return CallEstimate(requests=1, input_tokens=450 + text, output_tokens=60)


InstanceRubrics = InstanceSpecificRubrics


@dataclass(kw_only=True)
class RubricsScoreWithoutReference(RubricsScore):
    """Never reads a reference, even when the row has one (as Ragas' class of this name)."""

    name: str = "rubrics_score_without_reference"

    optional_fields: ClassVar[tuple[str, ...]] = ("user_input", "retrieved_contexts")
    conversation_fields = (("user_input",), ())

    def __post_init__(self) -> None:
        if self.with_reference:
            raise UsageError(
                "RubricsScoreWithoutReference cannot take with_reference=True; use RubricsScoreWithReference"
            )
        super().__post_init__()


@dataclass(kw_only=True)
class RubricsScoreWithReference(RubricsScore):
    name: str = "rubrics_score_with_reference"
    with_reference: bool = True


@dataclass(kw_only=True)
class SimpleCriteriaScore(JudgesConversations, LLMMetric):
    """A numeric score by a criterion you define, on the declared scale `score_range` (default
    0 to 5, the scale of Ragas' examples; state the same scale in the definition). The judge's
    JSON schema carries the bounds, and a score outside them gets one repair turn, then a typed
    error: never a clamped value."""

    name: str = ""
    definition: str = ""
    score_range: tuple[float, float] = (0.0, 5.0)

    required_fields: ClassVar[tuple[str, ...]] = ("response",)
    optional_fields: ClassVar[tuple[str, ...]] = ("user_input", "retrieved_contexts", "reference")
    default_prompt_ids = ("simple_criteria",)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.definition.strip():
            raise UsageError(f"SimpleCriteriaScore {self.name!r} needs a definition")
        bounds = tuple(self.score_range) if isinstance(self.score_range, (tuple, list)) else ()
        if (
            len(bounds) != 2
            or any(
                isinstance(b, bool) or not isinstance(b, (int, float)) or not math.isfinite(b)
                for b in bounds
            )
            or not bounds[0] < bounds[1]
        ):
            raise UsageError(
                f"score_range must be (low, high) with finite numbers, low < high; got {self.score_range!r}"
            )
        self.score_range = (bounds[0], bounds[1])

    async def _ascore(self, **fields: Any) -> MetricResult:
        low, high = self.score_range
        shape = create_model(
            "CriteriaAnswer", __base__=_CriteriaAnswer, score=(float, Field(..., ge=low, le=high))
        )
        answer = await ask_json(
            self.llm,
            self.judge_prompt("simple_criteria"),
            {"criterion": self.definition, **judge_inputs(**fields)},
            shape,
        )
        score = answer.score
        return MetricResult(
            int(score) if float(score).is_integer() else score, reason=answer.reason
        )


class _CriteriaAnswer(BaseModel):
    """The shape of the judge's answer; the metric bounds `score` by its `score_range`."""

    reason: str
    score: float


__all__ = [
    "DEFAULT_RUBRIC_WITHOUT_REFERENCE",
    "DEFAULT_RUBRIC_WITH_REFERENCE",
    "DomainSpecificRubrics",
    "InstanceRubrics",
    "InstanceSpecificRubrics",
    "RubricsScore",
    "RubricsScoreWithReference",
    "RubricsScoreWithoutReference",
    "SimpleCriteriaScore",
    "rubric_scores",
]
