"""Ragas' prompt attributes on metrics (`faithfulness.nli_statement_prompt`, ...), as doors into
the metric's assay prompts.

Reading the attribute gives a typed Ragas prompt (`NLIStatementPrompt`, ...) that shows the
prompt the metric sends now; the same object is returned on every read of that metric, so the
Ragas idiom of editing it in place works:

    scorer.nli_statement_prompt.instruction = "Judge strictly. ..."

and assigning a prompt of the same kind replaces it (`scorer.nli_statement_prompt = MyPrompt()`).
Either way the metric then sends that prompt: `LLMMetric.judge_prompt` reads these views first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.errors import UsageError
from assay.metrics.prompt_views import views as _views


class PromptAttribute:
    """A class attribute naming one of the metric's prompts the way Ragas does."""

    def __init__(self, prompt_id: str | Callable[[Any], str], view: type | None = None) -> None:
        self._prompt_id = prompt_id  # or a function of the metric, for settings that pick it
        self.view = view  # a typed Ragas prompt class over this prompt, or PromptView
        self.name = ""

    def id_for(self, metric: Any) -> str:
        return self._prompt_id(metric) if callable(self._prompt_id) else self._prompt_id

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, metric: Any, owner: type | None = None) -> Any:
        if metric is None:
            return self
        return prompt_view(metric, self.id_for(metric), self.view, self.name)

    def __set__(self, metric: Any, prompt: Any) -> None:
        from assay.compat.ragas.prompt_view import PromptView
        from assay.compat.ragas.prompts import PydanticPrompt
        from assay.prompts.prompt import Prompt

        prompt_id = self.id_for(metric)
        if isinstance(prompt, Prompt):
            if prompt.id != prompt_id:
                raise UsageError(
                    f"{type(metric).__name__}.{self.name} is the {prompt_id!r} prompt; "
                    f"got a prompt with id {prompt.id!r}"
                )
            metric.set_prompt(prompt)
            return
        if not isinstance(prompt, (PydanticPrompt, PromptView)):
            raise UsageError(
                f"{type(metric).__name__}.{self.name} takes a PydanticPrompt or an assay Prompt, "
                f"got {type(prompt).__name__}"
            )
        if self.view is not None and not isinstance(prompt, self.view):
            raise UsageError(
                f"{type(metric).__name__}.{self.name} takes a {self.view.__name__} "
                f"(its input and answer have that shape), got {type(prompt).__name__}"
            )
        _views(metric)[prompt_id] = (prompt, None, None)


def prompt_view(metric: Any, prompt_id: str, view_class: Any, name: str) -> Any:
    """The editable object standing for `metric`'s prompt `prompt_id` (made on first use, then the
    same object on every read). `view_class` is a typed Ragas prompt class, or `PromptView`."""
    from assay.compat.ragas.prompt_view import PromptView

    views = _views(metric)
    if prompt_id in views:
        return views[prompt_id][0]
    current = metric.judge_prompt(prompt_id)
    if view_class is PromptView:
        view = PromptView(current, name)
    else:
        view = view_class(language=_prompt_language(metric))
        if current != view.builtin():  # an earlier set_prompt or translation: show that one
            view.instruction = current.instruction
            view.examples = [view._pair_of(example) for example in current.examples]
    # Until the view is edited, the metric keeps sending `current` itself.
    views[prompt_id] = (view, view.assay_prompt(), current)
    return view


def _prompt_language(metric: Any) -> str:
    return str(getattr(metric, "language", "english") or "english")


__all__ = ["PromptAttribute", "prompt_view"]
