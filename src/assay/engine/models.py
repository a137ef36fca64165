"""Models a caller gives `evaluate`, turned into assay models.

A model string is built with `llm_factory` / `embedding_factory`; a LangChain or LlamaIndex model is
wrapped; a raw SDK client or anything else is a UsageError saying what to pass instead. With a
RunConfig's retry settings, the models the run builds get that retry policy, and so do model objects
still on the default policy (as a copy: the caller's object is not changed); a model built with its
own `retry=` keeps it.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
from typing import Any, TypeVar

from assay.errors import UsageError
from assay.metrics.base import Metric
from assay.models.embeddings import Embeddings
from assay.models.factory import embedding_factory, llm_factory
from assay.models.llm import LLM
from assay.models.retry import RetryPolicy

_ACCEPTED_LLM = (
    "an LLM from llm_factory (e.g. llm_factory('openai/gpt-4o-mini')), a model string such as "
    "'openai/gpt-4o-mini', a LangChain chat model or a LlamaIndex LLM"
)
_ACCEPTED_EMBEDDINGS = (
    "an embedding model from embedding_factory (e.g. embedding_factory("
    "'openai/text-embedding-3-small')), a model string such as 'openai/text-embedding-3-small', "
    "LangChain embeddings or a LlamaIndex embedding model"
)


def _is_a(value: Any, module: str, name: str) -> bool:
    """isinstance against an optional library's class, without importing the library."""
    loaded = sys.modules.get(module)
    cls = getattr(loaded, name, None) if loaded is not None else None
    return isinstance(cls, type) and isinstance(value, cls)


def _framework(value: Any) -> tuple[str, str] | None:
    """(library, "llm" | "embeddings") for a LangChain or LlamaIndex model object."""
    if _is_a(value, "langchain_core.language_models", "BaseLanguageModel"):
        return "langchain", "llm"
    if _is_a(value, "langchain_core.embeddings", "Embeddings"):
        return "langchain", "embeddings"
    if _is_a(value, "llama_index.core.llms", "LLM"):
        return "llamaindex", "llm"
    if _is_a(value, "llama_index.core.embeddings", "BaseEmbedding"):
        return "llamaindex", "embeddings"
    return None


def _type_name(value: Any) -> str:
    module = type(value).__module__.split(".")[0]
    return type(value).__name__ if module == "builtins" else f"{module}.{type(value).__name__}"


def _client_hint(value: Any, kind: str) -> str | None:
    """For a raw SDK client, the line that turns it into an assay model."""
    module = type(value).__module__.split(".")[0]
    factory, model = (
        ("llm_factory", "gpt-4o-mini")
        if kind == "llm"
        else ("embedding_factory", "text-embedding-3-small")
    )
    if module == "anthropic" and kind == "llm":
        model = "anthropic/claude-3-5-haiku-latest"
    elif module != "openai" and not hasattr(getattr(value, "chat", None), "completions"):
        return None
    return (
        f"{kind}= got a raw {_type_name(value)} client, which assay does not call directly: wrap it as "
        f"{kind}={factory}('{model}', client=client) (naming the model the client serves)"
    )


_Model = TypeVar("_Model", LLM | None, Embeddings | None)


def with_retry(model: _Model, retry: RetryPolicy | None) -> _Model:
    """`model` with `retry` if it is still on the default policy (a shallow copy sharing its
    endpoint, cache and usage meter), else `model` itself."""
    if retry is None or model is None or getattr(model, "retry", None) != RetryPolicy():
        return model
    changed = copy.copy(model)
    changed.retry = retry
    return changed


def coerce_llm(value: Any, where: str = "llm=", retry: RetryPolicy | None = None) -> LLM | None:
    """The judge model a caller gave, as an assay `LLM`: a model string goes through `llm_factory`, a
    LangChain chat model or LlamaIndex LLM is wrapped; anything else is a UsageError saying what to pass."""
    if value is None or isinstance(value, LLM):
        return with_retry(value, retry)
    if isinstance(value, str):
        return llm_factory(value, retry=retry)
    framework = _framework(value)
    if framework == ("langchain", "llm"):
        from assay.models.providers.langchain import LangchainLLMWrapper

        return with_retry(LangchainLLMWrapper(value), retry)
    if framework == ("llamaindex", "llm"):
        from assay.models.providers.llamaindex import LlamaIndexLLMWrapper

        return with_retry(LlamaIndexLLMWrapper(value), retry)
    if isinstance(value, Embeddings) or framework is not None:
        raise UsageError(
            f"{where} got an embedding model ({_type_name(value)}); pass it as embeddings=, not llm="
        )
    hint = _client_hint(value, "llm")
    if hint is not None:
        raise UsageError(hint if where == "llm=" else f"{where.removesuffix('llm=')}{hint}")
    raise UsageError(f"{where} got a {_type_name(value)}; it accepts {_ACCEPTED_LLM}")


def coerce_embeddings(
    value: Any, where: str = "embeddings=", retry: RetryPolicy | None = None
) -> Embeddings | None:
    """Like `coerce_llm`, for embedding models (`embedding_factory`, LangChain, LlamaIndex)."""
    if value is None or isinstance(value, Embeddings):
        return with_retry(value, retry)
    if isinstance(value, str):
        return embedding_factory(value, retry=retry)
    framework = _framework(value)
    if framework == ("langchain", "embeddings"):
        from assay.models.providers.langchain import LangchainEmbeddingsWrapper

        return with_retry(LangchainEmbeddingsWrapper(value), retry)
    if framework == ("llamaindex", "embeddings"):
        from assay.models.providers.llamaindex import LlamaIndexEmbeddingsWrapper

        return with_retry(LlamaIndexEmbeddingsWrapper(value), retry)
    if isinstance(value, LLM) or framework is not None:
        raise UsageError(
            f"{where} got a judge model ({_type_name(value)}), not an embedding model; pass it as "
            "llm=, and an embedding model (embedding_factory(...)) as embeddings="
        )
    hint = _client_hint(value, "embeddings")
    if hint is not None:
        raise UsageError(
            hint if where == "embeddings=" else f"{where.removesuffix('embeddings=')}{hint}"
        )
    raise UsageError(f"{where} got a {_type_name(value)}; it accepts {_ACCEPTED_EMBEDDINGS}")


def own_models_coerced(metric: Metric, retry: RetryPolicy | None = None) -> Metric:
    """A metric built with a model string (or a LangChain model...) of its own gets it resolved
    (in a copy); with `retry`, its own models on the default policy get that policy."""
    fields = (
        {f.name for f in dataclasses.fields(metric)} if dataclasses.is_dataclass(metric) else set()
    )
    changes: dict[str, Any] = {}
    own_llm, own_embeddings = getattr(metric, "llm", None), getattr(metric, "embeddings", None)
    if "llm" in fields and own_llm is not None:
        resolved = coerce_llm(own_llm, f"metric {metric.name}: llm=", retry)
        if resolved is not own_llm:
            changes["llm"] = resolved
    if "embeddings" in fields and own_embeddings is not None:
        embeddings = coerce_embeddings(own_embeddings, f"metric {metric.name}: embeddings=", retry)
        if embeddings is not own_embeddings:
            changes["embeddings"] = embeddings
    if not changes:
        return metric
    changed = dataclasses.replace(metric, **changes)
    changed.__dict__.update({k: v for k, v in metric.__dict__.items() if k.startswith("_")})
    return changed


__all__ = ["coerce_embeddings", "coerce_llm", "own_models_coerced", "with_retry"]
