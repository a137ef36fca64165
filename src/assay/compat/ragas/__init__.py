"""Ragas' names under assay: one package, so the rest of assay stays free of them.

- `paths.py`: every Ragas module path (`ragas.llms`, `ragas.metrics.collections`, ...) and where
  each of its names lives. The modules at the matching assay paths (`assay.llms`, ...) are thin:
  they only call `paths.reexport`.
- `models.py`, `cache.py`, `cost.py`, `tokenizers.py`: Ragas' model, cache, cost and tokenizer
  classes as doors into assay's one `LLM` / `Embeddings` and response cache.
- `prompts.py`, `prompt_classes.py`, `prompt_attributes.py`, `metric_prompts.py`: Ragas' typed
  prompts, the faithfulness-family prompt classes, and the prompt attributes Ragas metrics carry
  (`faithfulness.nli_statement_prompt`, ...), attached to assay's metric classes by `install`.
- `metric_bases.py`: Ragas' metric base classes (`MetricWithLLM`, `SingleTurnMetric`, ...).
- `metric_methods.py`: Ragas' scoring methods on every metric (`single_turn_ascore(sample)`, ...),
  attached to `Metric` by `install`.
- `prompt_view.py`, `prompt_methods.py`: Ragas' prompt methods on metrics (`get_prompts()` keyed by
  Ragas' prompt names, `set_prompts`, `adapt_prompts`, `save_prompts`, `load_prompts`), attached to
  `LLMMetric` by `install`, and the editable prompt object they hand out.
- `internals.py`, `evolutions.py`: Ragas internals its documentation shows, and its 0.1 test-set
  "evolutions".

`install()` runs once when `assay` is imported: it adds the Ragas-only names to the assay modules
whose path Ragas shares (`assay.metrics` is also `ragas.metrics`) and the prompt attributes to the
metric classes. It only adds names; it never replaces one assay defines.
"""

from __future__ import annotations

_installed = False


def install() -> None:
    """Attach the Ragas spellings to the assay modules and classes that Ragas code reaches."""
    global _installed
    if _installed:
        return
    import importlib

    from assay.compat.ragas.metric_methods import attach_scoring_methods
    from assay.compat.ragas.metric_prompts import attach_prompt_attributes
    from assay.compat.ragas.models import get_temperature
    from assay.compat.ragas.paths import SHARED_MODULE_NAMES, resolve
    from assay.compat.ragas.prompt_methods import attach_prompt_methods
    from assay.metrics.base import Metric
    from assay.metrics.llm_metric import LLMMetric
    from assay.models.llm import LLM

    for module_name, names in SHARED_MODULE_NAMES.items():
        module = importlib.import_module(module_name)
        exported = getattr(module, "__all__", None)
        for name, location in names.items():
            if name in vars(module):
                continue
            setattr(module, name, resolve(location, name))
            if isinstance(exported, list) and name not in exported:
                exported.append(name)
    attach_scoring_methods(Metric)
    attach_prompt_attributes()
    attach_prompt_methods(LLMMetric)
    if "get_temperature" not in vars(LLM):  # Ragas' LLMs have it; so do the ones llm_factory makes
        LLM.get_temperature = get_temperature  # type: ignore[attr-defined]  # Ragas' method, added
    _installed = True


__all__ = ["install"]
