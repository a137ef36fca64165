"""`Criteria`: RagMetrics-style evaluation criteria, usable directly as metrics in `evaluate()`.

criteria_type "llm_judge" with output_type:
  "5-point"  Likert scale 1–5 (labels likert_score_1..5 under a `header` question) -> 1..5
  "bool"     yes/no (header, with descriptions bool_true / bool_false)            -> 1.0 / 0.0
  "prompt"   a free rubric in `prompt`; the judge explains, then gives a number  -> that number
criteria_type "function" with function_name "string_match": match_type starts_with / ends_with /
contains / regex_match on `match_pattern`, `case_sensitive` -> 1.0 / 0.0, no model call.
phase "generation" judges the response; "retrieval" judges the retrieved contexts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any

from pydantic import BaseModel

from assay.errors import NotApplicable, UsageError
from assay.metrics.base import CallEstimate
from assay.metrics.general._inputs import judge_inputs
from assay.metrics.general.rubrics import RubricAnswer, rubric_text
from assay.metrics.judge import ask_json, ask_yes_no
from assay.metrics.llm_metric import LLMMetric
from assay.prompts.render import render
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample

MATCH_TYPES = ("starts_with", "ends_with", "contains", "regex_match")


class _PromptAnswer(BaseModel):
    reason: str
    score: float


def string_match(text: str, match_type: str, pattern: str, case_sensitive: bool = False) -> bool:
    """The `string_match` function of function-type criteria."""
    if match_type == "regex_match":
        return re.search(pattern, text, 0 if case_sensitive else re.IGNORECASE) is not None
    if not case_sensitive:
        text, pattern = text.casefold(), pattern.casefold()
    if match_type == "starts_with":
        return text.startswith(pattern)
    if match_type == "ends_with":
        return text.endswith(pattern)
    if match_type == "contains":
        return pattern in text
    raise UsageError(f"match_type must be one of {MATCH_TYPES}, got {match_type!r}")


@dataclass(kw_only=True, eq=False)
class Criteria(LLMMetric):
    name: str = ""
    phase: str = ""
    description: str = ""
    prompt: str = ""
    bool_true: str = ""
    bool_false: str = ""
    output_type: str = ""
    header: str = ""
    likert_score_1: str = ""
    likert_score_2: str = ""
    likert_score_3: str = ""
    likert_score_4: str = ""
    likert_score_5: str = ""
    criteria_type: str = "llm_judge"
    function_name: str = ""
    match_type: str = ""
    match_pattern: str = ""
    test_string: str = ""
    validation_status: str = ""
    case_sensitive: bool = False

    object_type = "criteria"
    optional_fields = ("user_input", "retrieved_contexts", "reference", "response")
    default_prompt_ids = ("aspect_critic", "rubric_score", "simple_criteria")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.phase not in ("", "generation", "retrieval"):
            raise UsageError(
                f"criteria {self.name!r}: phase must be 'retrieval' or 'generation', got {self.phase!r}"
            )
        if self.criteria_type == "function":
            if self.function_name not in ("", "string_match"):
                raise UsageError(
                    f"criteria {self.name!r}: unknown function {self.function_name!r} (use 'string_match')"
                )
            if self.match_type not in MATCH_TYPES:
                raise UsageError(f"criteria {self.name!r}: match_type must be one of {MATCH_TYPES}")
            if self.match_type == "regex_match":
                try:
                    re.compile(self.match_pattern)
                except re.error as exc:
                    raise UsageError(
                        f"criteria {self.name!r}: invalid regex {self.match_pattern!r}: {exc}"
                    ) from None
        elif self.criteria_type == "llm_judge":
            if self.output_type not in ("5-point", "bool", "prompt"):
                raise UsageError(
                    f"criteria {self.name!r}: output_type must be '5-point', 'bool' or 'prompt'"
                )
        else:
            raise UsageError(
                f"criteria {self.name!r}: criteria_type must be 'llm_judge' or 'function'"
            )
        self.declare_fields(("retrieved_contexts",) if self.phase == "retrieval" else ("response",))
        self.needs_llm = self.criteria_type == "llm_judge"  # type: ignore[misc]  # per instance

    # -- scoring ---------------------------------------------------------------------------
    def _subject(self, fields: dict[str, Any]) -> str:
        if self.phase == "retrieval":
            return "\n\n".join(fields.get("retrieved_contexts") or [])
        return fields.get("response") or ""

    async def _ascore(self, **fields: Any) -> MetricResult:
        subject = self._subject(fields)
        if self.criteria_type == "function":
            matched = string_match(
                subject, self.match_type, self.match_pattern, self.case_sensitive
            )
            return MetricResult(
                float(matched),
                reason=f"{self.match_type} {self.match_pattern!r}: {'matched' if matched else 'no match'}",
            )
        if not subject.strip():
            raise NotApplicable(f"nothing to judge in the {self.phase or 'generation'} phase")
        inputs = judge_inputs(
            fields.get("user_input"),
            subject,
            None if self.phase == "retrieval" else fields.get("retrieved_contexts"),
            fields.get("reference"),
        )
        if self.output_type == "bool":
            criterion = f"{self.header}\nyes means: {self.bool_true or 'yes'}\nno means: {self.bool_false or 'no'}"
            verdict = await ask_yes_no(
                self.llm,
                render(self.judge_prompt("aspect_critic"), {"criterion": criterion, **inputs}),
            )
            return MetricResult(
                float(verdict.passed),
                reason=f"judged {verdict.label}",
                details={"probability": verdict.probability},
            )
        if self.output_type == "5-point":
            labels = [
                self.likert_score_1,
                self.likert_score_2,
                self.likert_score_3,
                self.likert_score_4,
                self.likert_score_5,
            ]
            rubric = {
                f"score{i}_description": f"{label}" for i, label in enumerate(labels, start=1)
            }
            values = {"rubric": f"{self.header}\n{rubric_text(rubric)}", **inputs}
            answer = await ask_json(
                self.llm, self.judge_prompt("rubric_score"), values, RubricAnswer
            )
            if not 1 <= answer.score <= 5:
                from assay.errors import OutputParseError

                raise OutputParseError(
                    f"the judge gave {answer.score} on a 1–5 scale", raw=answer.model_dump_json()
                )
            return MetricResult(answer.score, reason=answer.feedback)
        criterion = f"{self.description}\n{self.prompt}".strip()
        judged = await ask_json(
            self.llm,
            self.judge_prompt("simple_criteria"),
            {"criterion": criterion, **inputs},
            _PromptAnswer,
        )
        return MetricResult(judged.score, reason=judged.reason)

    def estimate(self, sample: Sample) -> CallEstimate:
        if self.criteria_type == "function":
            return CallEstimate()
        return CallEstimate(
            requests=1,
            input_tokens=400 + len(str(sample.get("response") or "")) // 4,
            output_tokens=60,
        )

    # -- RagMetrics object protocol ----------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        data = {
            f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("llm", "language")
        }
        data["object_type"] = self.object_type
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Criteria:
        known = {f.name for f in fields(cls)} - {"llm"}
        return cls(**{k: v for k, v in data.items() if k in known})

    def spec(self) -> dict[str, Any]:
        spec = super().spec()
        spec["criteria"] = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name not in ("llm", "language") and getattr(self, f.name) not in ("", False)
        }
        return spec


__all__ = ["MATCH_TYPES", "Criteria", "string_match"]
