"""Ragas' prompt methods on assay's judged metrics: `get_prompts`, `set_prompts`, `adapt_prompts`,
`save_prompts`, `load_prompts`, keyed by the names Ragas gives the prompts.

assay names a metric's prompts by id (`metric.prompt_ids`, `metric.judge_prompt("supported")`,
`metric.judge_prompts()`); Ragas code names them as Ragas does (`"n_l_i_statement_prompt"`,
`"single_turn_aspect_critic_prompt"`). `RAGAS_PROMPT_NAMES` is the one table between the two; a
prompt without a Ragas twin keeps its assay id as its name. The prompt objects handed out are
mutable views (a typed Ragas prompt class where one exists, else a `PromptView`), the same object on
every read, so Ragas' edit-in-place idiom works and the metric then sends the edited prompt.
`install` attaches these methods to `LLMMetric`; the test-set synthesizers inherit them
(`RagasPromptMethods`).
"""

from __future__ import annotations

import json
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
}

# Prompt ids whose Ragas name is the same whoever sends them (the test-set synthesizers' prompts).
RAGAS_NAMES_BY_PROMPT_ID: dict[str, str] = {
    "testset.single_hop": "generate_query_reference_prompt",
    "testset.multi_hop": "generate_query_reference_prompt",
    "testset.multi_hop_abstract": "generate_query_reference_prompt",
}


def _names(metric: Any) -> dict[str, str]:
    """assay prompt id -> Ragas name, for this metric's prompts."""
    table: dict[str, str] = dict(RAGAS_NAMES_BY_PROMPT_ID)
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


def _sent_prompts(metric: Any) -> dict[str, Prompt]:
    """Each prompt as the metric sends it now, an optimized instruction (`optimize_prompts`,
    kept in the metric's aligned state) included."""
    state = getattr(metric, "alignment", None)
    instructions = getattr(state, "instructions", None) or {}
    prompts = {}
    for pid in metric.prompt_ids:
        prompt = metric.judge_prompt(pid)
        if pid in instructions:
            prompt = prompt.model_copy(update={"instruction": instructions[pid]})
        prompts[pid] = prompt
    return prompts


def _is_file_path(path: str | os.PathLike[str]) -> bool:
    return Path(path).suffix.lower() == ".json"


def save_prompts(self: Any, path: str | os.PathLike[str]) -> None:
    """`path` a directory: each prompt to assay's prompt file (`{metric}_{prompt id}_{language}.json`,
    read back by `load_prompts` and `assay prompts`). `path` a `.json` file (Ragas 0.4's form):
    all of the metric's prompts as it sends them now, optimized instructions included."""
    if _is_file_path(path):
        target = Path(path)
        if not target.parent.is_dir():
            raise UsageError(f"the folder of {str(path)!r} does not exist")
        names = _names(self)
        data = {
            "metric": self.name,
            "prompts": {
                names[pid]: prompt.model_dump(mode="json")
                for pid, prompt in _sent_prompts(self).items()
            },
        }
        target.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
        return
    if not Path(path).is_dir():
        raise UsageError(
            f"path {str(path)!r} is not an existing directory (or a .json file to write)"
        )
    localize.save_prompts(self, path)


def load_prompts(
    self: Any, path: str | os.PathLike[str], language: str | None = None
) -> dict[str, Any]:
    """`path` a directory: the prompts saved there for `language` (default english), keyed as
    `get_prompts` keys them, returned, not applied (give them to `set_prompts`). `path` a `.json`
    file written by `save_prompts`: its prompts are applied to this metric, and returned."""
    names = _names(self)
    if _is_file_path(path):
        try:
            saved = json.loads(Path(path).read_text(encoding="utf-8"))["prompts"]
            prompts = {name: Prompt.model_validate(data) for name, data in saved.items()}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(
                f"{path}: not a prompts file written by save_prompts ({exc})"
            ) from None
        for name, prompt in prompts.items():
            pid = _prompt_id(self, name)
            if prompt.id != pid:
                raise UsageError(
                    f"{path}: prompt {name!r} is {prompt.id!r}, but {type(self).__name__} sends "
                    f"{pid!r} under that name"
                )
            self.set_prompt(prompt)
        return {name: PromptView(prompt, name) for name, prompt in prompts.items()}
    loaded = localize.load_prompts(self, path, language or "english")
    return {names[pid]: PromptView(prompt, names[pid]) for pid, prompt in loaded.items()}


METHODS = {
    "get_prompts": get_prompts,
    "set_prompts": set_prompts,
    "adapt_prompts": adapt_prompts,
    "save_prompts": save_prompts,
    "load_prompts": load_prompts,
}


class RagasPromptMethods:
    """The same methods as a base class, for assay classes outside the core that can inherit them
    (the test-set synthesizers); a class needs `prompt_ids`, `judge_prompt` and `set_prompt`."""

    get_prompts = get_prompts
    set_prompts = set_prompts
    adapt_prompts = adapt_prompts
    save_prompts = save_prompts
    load_prompts = load_prompts


def attach_prompt_methods(cls: type) -> None:
    """Give `cls` (LLMMetric, which the core keeps free of them) the methods it does not define."""
    for name, method in METHODS.items():
        if name not in vars(cls):
            setattr(cls, name, method)


__all__ = [
    "METHODS",
    "RAGAS_NAMES_BY_PROMPT_ID",
    "RAGAS_PROMPT_NAMES",
    "RagasPromptMethods",
    "attach_prompt_methods",
]
