"""`llm_factory` and `embedding_factory`: one model string or one client, one LLM.

Model strings:
    gpt-4o-mini                      OpenAI (provider defaults to "openai")
    openai/gpt-4o-mini               OpenAI, or any endpoint named by base_url / OPENAI_BASE_URL
    anthropic/claude-3-5-haiku-latest
    ollama/llama3.1                  a local Ollama server (OLLAMA_HOST or localhost:11434)
    vllm/Qwen2.5-7B@http://host:8000/v1   an endpoint given after '@'
    lmstudio/..., openrouter/..., llamacpp/...@URL
    litellm/bedrock/anthropic.claude-3  anything LiteLLM supports
    local                            the embedded offline judge (assay[local])
    local/minilm, local/e5           offline embeddings (English; multilingual)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import MissingCredentials, UsageError
from assay.models.cache import ResponseCache
from assay.models.embeddings import Embeddings
from assay.models.limits import Limits
from assay.models.llm import LLM
from assay.models.providers.base import Provider
from assay.models.retry import RetryPolicy
from assay.models.usage import Price


@dataclass(frozen=True)
class _Endpoint:
    """Defaults of an OpenAI-compatible service."""

    base_url: str | None
    key_variable: str | None  # None: the server needs no key
    placeholder_key: str = "not-needed"


_OPENAI_COMPATIBLE: dict[str, _Endpoint] = {
    "openai": _Endpoint(None, "OPENAI_API_KEY"),
    "ollama": _Endpoint("http://localhost:11434/v1", None, "ollama"),
    "vllm": _Endpoint(None, None, "EMPTY"),
    "lmstudio": _Endpoint("http://localhost:1234/v1", None, "lm-studio"),
    "llamacpp": _Endpoint(None, None),
    "openrouter": _Endpoint("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
}
PROVIDERS = (*_OPENAI_COMPATIBLE, "anthropic", "litellm", "local")


def parse_model_string(model: str, provider: str | None = None) -> tuple[str, str, str | None]:
    """Split 'provider/model@base_url' into its parts; a bare name uses `provider` or 'openai'."""
    if not model or not model.strip():
        raise UsageError("a model name is required, e.g. 'openai/gpt-4o-mini' or 'local'")
    model = model.strip()
    base_url = None
    if "@" in model and "://" in model.split("@", 1)[1]:
        model, base_url = model.split("@", 1)
    if model == "local":
        return "local", "local", base_url
    head, slash, rest = model.partition("/")
    if slash and head.lower() in PROVIDERS and provider is None:
        return head.lower(), rest, base_url
    return (provider or "openai").lower(), model, base_url


def _resolve_cache(cache: Any) -> ResponseCache | None:
    if cache is None or cache is False:
        return None
    if cache is True:
        return ResponseCache()
    if isinstance(cache, ResponseCache):
        return cache
    if isinstance(cache, (str, Path)):
        return ResponseCache(cache)
    raise UsageError(f"cache must be True, False, a path or a ResponseCache, got {type(cache).__name__}")


def _is_instance_of(obj: Any, module: str, name: str) -> bool:
    """isinstance against an optional library's class, without importing it if it is not loaded."""
    import sys

    loaded = sys.modules.get(module)
    cls = getattr(loaded, name, None) if loaded is not None else None
    return isinstance(cls, type) and isinstance(obj, cls)


def _client_provider(client: Any, model: str, timeout: float) -> Provider:
    module = type(client).__module__.split(".")[0]
    if module.startswith("llama_index") or _is_instance_of(client, "llama_index.core.llms", "LLM") \
            or _is_instance_of(client, "llama_index.core.embeddings", "BaseEmbedding"):
        from assay.models.providers.llamaindex import LlamaIndexProvider

        return LlamaIndexProvider(client) if hasattr(client, "achat") else LlamaIndexProvider(embeddings=client)
    if module.startswith("langchain"):
        from assay.models.providers.langchain import LangChainProvider

        return LangChainProvider(client) if hasattr(client, "ainvoke") else LangChainProvider(embeddings=client)
    if module == "anthropic":
        from assay.models.providers.anthropic import AnthropicProvider

        return AnthropicProvider(model, client=client)
    if hasattr(client, "chat") and hasattr(client.chat, "completions"):
        from assay.models.providers.openai_compat import OpenAICompatible

        return OpenAICompatible(model, client=client, timeout=timeout)
    raise UsageError(f"cannot use a client of type {type(client).__name__}; pass an OpenAI or Anthropic client")


def make_provider(
    model: str,
    *,
    provider: str | None = None,
    client: Any = None,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float | None = None,
    **options: Any,
) -> Provider:
    """Build the provider for a model string; credentials are checked here, before any work.
    `timeout`: seconds one request may take; None: 120 for a remote provider, 900 for the
    embedded judge (a CPU judge writing a long answer is slow, not stuck)."""
    kind, name, url_in_string = parse_model_string(model, provider)
    base_url = base_url or url_in_string
    if timeout is not None and not timeout > 0:
        raise UsageError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if kind == "local" and client is None:
        from assay.models.local import local_provider

        return local_provider(**options, **({"timeout": timeout} if timeout is not None else {}))
    timeout = timeout if timeout is not None else 120.0
    if client is not None:
        return _client_provider(client, name, timeout)
    if kind == "anthropic":
        from assay.models.providers.anthropic import AnthropicProvider

        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise MissingCredentials("Anthropic", "ANTHROPIC_API_KEY")
        return AnthropicProvider(name, api_key=key, base_url=base_url, timeout=timeout)
    if kind == "litellm":
        from assay.models.providers.litellm import LiteLLMProvider

        return LiteLLMProvider(name, api_key=api_key, base_url=base_url, timeout=timeout, **options)
    endpoint = _OPENAI_COMPATIBLE.get(kind)
    if endpoint is None:
        raise UsageError(f"unknown provider {kind!r}; known: {', '.join(PROVIDERS)}")
    from assay.models.providers.openai_compat import OpenAICompatible

    if kind == "openai":
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
    elif kind == "ollama" and not base_url and os.environ.get("OLLAMA_HOST"):
        host = os.environ["OLLAMA_HOST"]
        base_url = (host if "://" in host else f"http://{host}").rstrip("/") + "/v1"
    base_url = base_url or endpoint.base_url
    if base_url is None and kind != "openai":
        raise UsageError(f"{kind} needs the server's address: '{kind}/{name}@http://host:port/v1' or base_url=...")
    key = api_key or (os.environ.get(endpoint.key_variable) if endpoint.key_variable else None)
    if not key:
        # A custom endpoint (local server, proxy) often needs no key; OpenAI's own always does.
        if endpoint.key_variable and (kind != "openai" or base_url is None):
            raise MissingCredentials(kind.capitalize() if kind != "openai" else "OpenAI", endpoint.key_variable)
        key = endpoint.placeholder_key
    return OpenAICompatible(name, base_url=base_url, api_key=key, timeout=timeout, name=kind)


def llm_factory(
    model: str,
    provider: str | None = None,
    client: Any = None,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    cache: Any = True,
    timeout: float | None = None,
    retry: RetryPolicy | None = None,
    limits: Limits | None = None,
    price: tuple[float, float] | Price | None = None,
    **params: Any,
) -> LLM:
    """Build a judge LLM. Extra keyword arguments become default sampling parameters
    (temperature, max_tokens, seed, ...). `price` is (input, output) USD per million tokens."""
    local_options = {k: params.pop(k) for k in ("model_path", "n_threads", "n_ctx", "n_parallel") if k in params}
    backend = make_provider(model, provider=provider, client=client, base_url=base_url, api_key=api_key,
                            timeout=timeout, **local_options)
    if limits is None and backend.name == "local":
        # More requests in flight than server slots would only queue inside llama.cpp and
        # run into client timeouts; let the limiter hold them instead.
        limits = Limits(max_concurrency=backend.settings.n_parallel, adaptive=False)
    # On a CPU judge, doubling a runaway answer's budget up to 16k tokens takes ~25 minutes before it
    # fails; 2,048 is ample for any judge answer and fails in a couple of minutes instead.
    max_output = 2048 if backend.name == "local" else 16384
    if backend.name == "local":
        # llama.cpp generates until its context is full when a request names no max_tokens: a small
        # judge that starts repeating itself would hold a server slot for minutes. Calls that need
        # more still get it (an answer cut off here is retried with twice the budget).
        params.setdefault("max_tokens", 1024)
    return LLM(backend, cache=_resolve_cache(cache), retry=retry, limits=limits, price=_price(price),
               default_params=params, max_output_tokens=max_output,
               attempt_timeout=getattr(backend, "timeout", None) or timeout or 120.0)


def embedding_factory(
    model: str = "openai/text-embedding-3-small",
    provider: str | None = None,
    client: Any = None,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    cache: Any = True,
    batch_size: int = 64,
    timeout: float | None = None,
    retry: RetryPolicy | None = None,
    limits: Limits | None = None,
    price: tuple[float, float] | Price | None = None,
) -> Embeddings:
    """Build an embedding model, e.g. `embedding_factory("openai/text-embedding-3-small")`."""
    # Ragas spelled this embedding_factory("openai", model="..."): accept that order too.
    if model in PROVIDERS and provider is None and model != "local":
        model, provider = "text-embedding-3-small", model
    kind, name, _ = parse_model_string(model, provider)
    if kind == "local" and client is None:
        from assay.models.local_embeddings import local_embedding_provider

        backend = local_embedding_provider(name)
    else:
        backend = make_provider(model, provider=provider, client=client, base_url=base_url, api_key=api_key,
                                timeout=timeout)
    return Embeddings(backend, cache=_resolve_cache(cache), batch_size=batch_size, retry=retry, limits=limits,
                      price=_price(price), attempt_timeout=getattr(backend, "timeout", None) or timeout or 120.0)


def _price(price: tuple[float, float] | Price | None) -> Price | None:
    if price is None or isinstance(price, Price):
        return price
    return Price(*price)


__all__ = ["PROVIDERS", "embedding_factory", "llm_factory", "make_provider", "parse_model_string"]
