"""Prompt views: objects that stand for one of a metric's prompts and may be edited in place.

A view is anything with `assay_prompt()` returning the assay `Prompt` it shows now. The Ragas
compatibility layer keeps its typed prompt objects (`faithfulness.nli_statement_prompt`, ...)
here, per metric instance and prompt id, so that `LLMMetric.judge_prompt` sends an edited view
and a view that was only read changes nothing. Each entry is `(view, as_read, current)`:
the view, the assay prompt it showed when handed out (None: it was assigned, not read) and the
prompt the metric would have sent then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.prompts.prompt import Prompt


def views(metric: Any) -> dict[str, Any]:
    """The metric's views by prompt id (made on first use)."""
    held: dict[str, Any] | None = metric.__dict__.get("_prompt_views")
    if held is None:
        held = {}
        object.__setattr__(metric, "_prompt_views", held)
    return held


def viewed_prompt(metric: Any, prompt_id: str) -> Prompt | None:
    """The assay prompt of a view set or read on `metric` for `prompt_id`, or None."""
    entry = metric.__dict__.get("_prompt_views", {}).get(prompt_id)
    if entry is None:
        return None
    current: Prompt
    view, as_read, current = entry  # the view, the prompt as it read, the prompt then
    prompt: Prompt = view.assay_prompt()
    if as_read is not None and prompt == as_read:
        return current  # read, not edited
    if prompt.id != prompt_id:  # a typed prompt of the user's own: keep the metric's id
        prompt = prompt.model_copy(update={"id": prompt_id})
    return prompt


def forget_view(metric: Any, prompt_id: str) -> None:
    metric.__dict__.get("_prompt_views", {}).pop(prompt_id, None)


__all__ = ["forget_view", "viewed_prompt", "views"]
