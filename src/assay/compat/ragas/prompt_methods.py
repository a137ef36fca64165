"""Ragas' prompt methods on assay's judged metrics: `get_prompts`, `set_prompts`, `adapt_prompts`,
`save_prompts`, `load_prompts`, keyed by the names Ragas gives the prompts.

assay names a metric's prompts by id (`metric.prompt_ids`, `metric.judge_prompt("supported")`,
`metric.judge_prompts()`); Ragas code names them as Ragas does (`"n_l_i_statement_prompt"`,
`"single_turn_aspect_critic_prompt"`). `RAGAS_PROMPT_NAMES` is the one table between the two; a
prompt without a Ragas twin keeps its assay id as its name. The prompt objects handed out are
mutable views (a typed Ragas prompt class where one exists, else a `PromptView`), the same object on
every read, so Ragas' edit-in-place idiom works and the metric then sends the edited prompt.
`install` attaches these methods to `LLMMetric` and to the test-set synthesizers.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from assay.compat.ragas.metric_prompts import PROMPT_ATTRIBUTES
from assay.compat.ragas.prompt_attributes import prompt_view
from assay.compat.ragas.prompt_view import PromptView
from assay.compat.ragas.prompts import PydanticPrompt, as_llm
from assay.errors import UsageError
from assay.metrics.answer.answer_correctness import AnswerCorrectness
from assay.metrics.general.aspect_critic import AspectCritic
from assay.metrics.general.rubrics import RubricsScore, SimpleCriteriaScore
from assay.metrics.prompt_views import views
from assay.metrics.rag.context_precision import ContextPrecision
from assay.metrics.rag.context_recall import LLMContextRecall
from assay.metrics.rag.factual_correctness import FactualCorrectness
from assay.metrics.rag.faithfulness import Faithfulness
from assay.metrics.rag.noise_sensitivity import NoiseSensitivity
from assay.prompts import localize
from assay.prompts.prompt import Prompt
from assay.testset.synthesizers.base import BaseSynthesizer

_NLI = "n_l_i_statement_prompt"  # Ragas' snake case of NLIStatementPrompt

# metric class (and its subclasses) -> assay prompt id -> the name Ragas gives that prompt
RAGAS_PROMPT_NAMES: dict[type, dict[str, str]] = {
    AspectCritic: {"aspect_critic": "single_turn_aspect_critic_prompt"},
    SimpleCriteriaScore: {"simple_criteria": "single_turn_prompt"},
    RubricsScore: {"rubric_score": "single_turn_prompt"},
    Faithfulness: {"claims": "statement_generator_prompt", "supported": _NLI},
    NoiseSensitivity: {"claims": "statement_generator_prompt", "supported": _NLI},
    FactualCorrectness: {
        "claims": "claim_decomposition_prompt",
        "claims.coarse": "claim_decomposition_prompt",
        "supported": _NLI,
    },
    AnswerCorrectness: {
        "claims.coarse": "statement_generator_prompt",
        "supported": "correctness_classifier",
    },
    LLMContextRecall: {"supported": "context_recall_classification_prompt"},
    ContextPrecision: {"context_usefulness": "context_precision_prompt"},
    BaseSynthesizer: {
        "testset.single_hop": "generate_query_reference_prompt",
        "testset.multi_hop": "generate_query_reference_prompt",
        "testset.multi_hop_abstract": "generate_query_reference_prompt",
    },
}


def _names(metric: Any) -> dict[str, str]:
    """assay prompt id -> Ragas name, for this metric's prompts."""
    table: dict[str, str] = {}
    for cls in reversed(type(metric).__mro__):
        table.update(RAGAS_PROMPT_NAMES.get(cls, {}))
    return {pid: table.get(pid, pid) for pid in metric.prompt_ids}


def _view_class(metric: Any, prompt_id: str) -> type | None:
    for cls in type(metric).__mro__:
        for attribute_id, view in PROMPT_ATTRIBUTES.get(cls, {}).values():
            chosen = attribute_id(metric) if callable(attribute_id) else attribute_id
            if chosen == prompt_id and view is not None:
                return view
    return None


def _prompt_id(metric: Any, name: str) -> str:
    by_name = {ragas: pid for pid, ragas in _names(metric).items()}
    if name in by_name:
        return by_name[name]
    if name in metric.prompt_ids:  # assay's own id works too
        return name
    raise UsageError(
        f"{type(metric).__name__} has no prompt {name!r}; its prompts are "
        f"{', '.join(sorted(by_name))} (see get_prompts())"
    )


def get_prompts(self: Any) -> dict[str, Any]:
    """{Ragas' prompt name: an editable prompt object} for each prompt the metric sends."""
    return {
        name: prompt_view(self, pid, _view_class(self, pid) or PromptView, name)
        for pid, name in _names(self).items()
    }


def set_prompts(self: Any, **prompts: Any) -> None:
    """Replace prompts by name (as `get_prompts` keys them): a typed Ragas prompt, a prompt
    object from `get_prompts` / `adapt_prompts` / `load_prompts`, or an assay `Prompt`."""
    chosen = {_prompt_id(self, name): prompt for name, prompt in prompts.items()}
    for pid, prompt in chosen.items():
        if isinstance(prompt, Prompt):
            self.set_prompt(prompt.model_copy(update={"id": pid}))
        elif isinstance(prompt, (PydanticPrompt, PromptView)):
            views(self)[pid] = (prompt, None, None)
        else:
            raise UsageError(
                f"prompt {_names(self)[pid]!r} must be a PydanticPrompt or a prompt from "
                f"get_prompts(), got {type(prompt).__name__}"
            )


async def adapt_prompts(
    self: Any, language: str, llm: Any, adapt_instruction: bool = False
) -> dict[str, Any]:
    """Translated copies, keyed as `get_prompts` keys them; not applied (give them to
    `set_prompts`). One model call per prompt."""
    adapted = {}
    for name, prompt in get_prompts(self).items():
        adapted[name] = await prompt.adapt(language, as_llm(llm), adapt_instruction)
    return adapted


def save_prompts(self: Any, path: str | os.PathLike[str]) -> None:
    """Write each prompt to `path` as assay's prompt files (`{metric}_{prompt id}_{language}.json`,
    read back by `load_prompts` and `assay prompts`); `path` must exist."""
    if not Path(path).is_dir():
        raise UsageError(f"path {str(path)!r} is not an existing directory")
    localize.save_prompts(self, path)


def load_prompts(
    self: Any, path: str | os.PathLike[str], language: str | None = None
) -> dict[str, Any]:
    """The prompts saved in `path` for `language` (default english), keyed as `get_prompts`
    keys them; returned, not applied (give them to `set_prompts`)."""
    loaded = localize.load_prompts(self, path, language or "english")
    names = _names(self)
    return {names[pid]: PromptView(prompt, names[pid]) for pid, prompt in loaded.items()}


METHODS = {
    "get_prompts": get_prompts,
    "set_prompts": set_prompts,
    "adapt_prompts": adapt_prompts,
    "save_prompts": save_prompts,
    "load_prompts": load_prompts,
}


def attach_prompt_methods(cls: type) -> None:
    """Give `cls` (LLMMetric, BaseSynthesizer) the methods it does not define itself."""
    for name, method in METHODS.items():
        if name not in vars(cls):
            setattr(cls, name, method)


__all__ = ["METHODS", "RAGAS_PROMPT_NAMES", "attach_prompt_methods"]
