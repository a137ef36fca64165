"""Base for metrics that ask a judge model: the `llm` field, prompt loading, and their identity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from assay.metrics.aligned import Alignable
from assay.metrics.base import Metric
from assay.metrics.prompt_views import forget_view, viewed_prompt
from assay.prompts.prompt import Prompt, load_prompt


@dataclass(kw_only=True)
class LLMMetric(Alignable, Metric):
    """A metric with a judge. `language` picks the prompts' language (English by default)."""

    llm: Any = None
    language: str = "english"

    needs_llm: ClassVar[bool] = True
    # The prompts (by id, see `assay/prompts/`) a metric of this class sends to its judge.
    default_prompt_ids: ClassVar[tuple[str, ...]] = ()

    @property
    def prompt_ids(self) -> tuple[str, ...]:
        """The prompts this metric sends as configured, so records and translations name only
        those. A metric whose prompts follow from its configuration (faithfulness with claims
        asks for them first) overrides this property; the others set `default_prompt_ids`."""
        return self.default_prompt_ids

    def judge_prompt(self, prompt_id: str) -> Prompt:
        viewed = viewed_prompt(self, prompt_id)  # a Ragas prompt attribute set or edited
        if viewed is not None:
            return viewed
        overrides: dict[str, Prompt] = getattr(self, "_prompt_overrides", {})
        return overrides.get(prompt_id) or load_prompt(prompt_id, self.language)

    def set_prompt(self, prompt: Prompt) -> None:
        """Replace one of this metric's prompts (e.g. an edited or translated copy)."""
        forget_view(self, prompt.id)
        overrides = dict(getattr(self, "_prompt_overrides", {}))
        overrides[prompt.id] = prompt
        object.__setattr__(self, "_prompt_overrides", overrides)

    def judge_prompts(self) -> dict[str, Prompt]:
        """Every prompt this metric sends, by id, as it would send it now."""
        return {prompt_id: self.judge_prompt(prompt_id) for prompt_id in self.prompt_ids}

    def spec(self) -> dict[str, Any]:
        spec = super().spec()
        spec["prompts"] = [self.judge_prompt(prompt_id).describe() for prompt_id in self.prompt_ids]
        return spec


__all__ = ["LLMMetric"]
