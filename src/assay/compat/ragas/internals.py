"""Ragas internals that its documentation shows in source listings, so that code copied from them
imports: the analytics batcher, the nest-asyncio runner, the LLM adapters, the logger patch, the
OCI factory, the DSPy adapter helpers and Opik's tracer.

Where assay has the thing, the name is a door into it (`run` is assay's `run_sync`, `get_adapter`
builds with `llm_factory`). Where assay does not, calling the name raises a `UsageError` that
says what to use instead; importing it always works.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

from assay._util.sync import run_sync
from assay.engine.logs import set_logging_level
from assay.errors import UsageError
from assay.models.factory import llm_factory

T = TypeVar("T")


class _AnalyticsBatcher:
    """assay sends no usage analytics, so there is never anything to flush."""

    def flush(self) -> None:
        return None


analytics_batcher = _AnalyticsBatcher()


def run_coroutine(coro: Coroutine[Any, Any, T]) -> T:
    """Ragas' `ragas.async_utils.run`: drive `coro` to completion from synchronous code, also
    inside a running loop (on a fresh loop in a worker thread; the caller's loop is not patched)."""
    return run_sync(coro)


def patch_logger(module: str, level: int | str) -> logging.Logger:
    """Ragas' older name for `set_logging_level`."""
    return set_logging_level(module, level)


class _Adapter:
    """What Ragas' `get_adapter(name)` returns: `create_llm` builds the one assay LLM."""

    def __init__(self, name: str) -> None:
        self.name = name

    def create_llm(self, client: Any, model: str, provider: str, **kwargs: Any) -> Any:
        return llm_factory(model, provider=provider, client=client, adapter=self.name, **kwargs)


_ADAPTERS = ("instructor", "litellm")


def get_adapter(name: str) -> _Adapter:
    """Ragas chose between instructor and LiteLLM here; assay's structured-output ladder serves
    both, so either name gives the same LLM."""
    if name not in _ADAPTERS:
        raise UsageError(f"adapter must be one of {', '.join(_ADAPTERS)}, got {name!r}")
    return _Adapter(name)


def auto_detect_adapter(client: Any, provider: str) -> str:
    """The adapter Ragas would pick: LiteLLM for Google and LiteLLM clients, else instructor."""
    modules = (type(client).__module__, str(getattr(client, "__module__", "")))
    if provider.lower() == "google" or any(m.startswith("litellm") for m in modules):
        return "litellm"
    return "instructor"


def oci_genai_factory(model_id: str, compartment_id: str | None = None, **options: Any) -> Any:
    """Ragas' Oracle Cloud Generative AI factory. assay has no OCI SDK provider."""
    raise UsageError(
        f"assay has no OCI Generative AI provider (model {model_id!r}); OCI serves an "
        "OpenAI-compatible endpoint: llm_factory(model, base_url='<your OCI endpoint>/v1', "
        "api_key=...)"
    )


def _dspy_internal(name: str) -> Any:
    def helper(*args: Any, **kwargs: Any) -> Any:
        raise UsageError(
            f"{name} is an internal helper of Ragas' DSPyOptimizer; assay's DSPyOptimizer "
            "(assay.optimizers.DSPyOptimizer, or assay.align) does this itself"
        )

    helper.__name__ = helper.__qualname__ = name
    return helper


create_dspy_metric = _dspy_internal("create_dspy_metric")
pydantic_prompt_to_dspy_signature = _dspy_internal("pydantic_prompt_to_dspy_signature")
ragas_dataset_to_dspy_examples = _dspy_internal("ragas_dataset_to_dspy_examples")
setup_dspy_llm = _dspy_internal("setup_dspy_llm")


class OpikTracer:
    """Opik's LangChain tracer, which Ragas re-exports: `OpikTracer(...)` builds Opik's own class
    (pass it in `callbacks=[...]`; assay's run reports itself as LangChain chains)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        try:
            from opik.integrations.langchain import OpikTracer as OpiksTracer
        except ImportError:
            raise UsageError(
                "OpikTracer is Opik's LangChain tracer: pip install opik langchain-core"
            ) from None
        return OpiksTracer(*args, **kwargs)


__all__ = [
    "OpikTracer",
    "analytics_batcher",
    "auto_detect_adapter",
    "create_dspy_metric",
    "get_adapter",
    "oci_genai_factory",
    "patch_logger",
    "pydantic_prompt_to_dspy_signature",
    "ragas_dataset_to_dspy_examples",
    "run_coroutine",
    "setup_dspy_llm",
]
