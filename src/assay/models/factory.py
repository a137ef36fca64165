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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from assay.errors import MissingCredentials, UsageError
from assay.models.cache import KeyValueCache, ResponseCache, open_cache
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
# Named only by provider=... (never as a model-string prefix: 'google/gemma-2-9b' is a model name).
EXPLICIT_PROVIDERS = ("google", "gemini", "azure")

# Providers other code adds by name: kind -> build(model_name, *, base_url, api_key, timeout, **options).
_REGISTERED: dict[str, Callable[..., Provider]] = {}


def register_provider(kind: str, build: Callable[..., Provider]) -> None:
    """Make `'<kind>/<model>'` model strings (and `provider='<kind>'`) build a provider with
    `build(model_name, base_url=..., api_key=..., timeout=..., **options)`. A new provider is then
    one file and one call; the built-in names cannot be taken over."""
    key = kind.strip().lower() if isinstance(kind, str) else ""
    if not key or "/" in key or "@" in key:
        raise UsageError(f"a provider name must be a plain word such as 'myhost', got {kind!r}")
    if key in PROVIDERS or key in EXPLICIT_PROVIDERS:
        raise UsageError(f"{key!r} is a built-in provider and cannot be registered again")
    if not callable(build):
        raise UsageError(
            f"register_provider needs a callable that builds the provider, got {type(build).__name__}"
        )
    _REGISTERED[key] = build


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
    if slash and (head.lower() in PROVIDERS or head.lower() in _REGISTERED) and provider is None:
        return head.lower(), rest, base_url
    return (provider or "openai").lower(), model, base_url


def _resolve_cache(cache: Any) -> ResponseCache | None:
    if cache is None or cache is False:
        return None
    if cache is True:
        return open_cache()
    if isinstance(cache, ResponseCache):
        return cache
    if isinstance(cache, (str, Path)):
        return open_cache(cache)
    if all(callable(getattr(cache, method, None)) for method in ("get", "set", "has_key")):
        # A key-value store of the caller's own (Ragas' CacheInterface): answers kept as JSON text.
        return KeyValueCache(cache)  # type: ignore[return-value]
    raise UsageError(
        f"cache must be True, False, a path, a ResponseCache or a CacheInterface, "
        f"got {type(cache).__name__}"
    )


def _is_instance_of(obj: Any, module: str, name: str) -> bool:
    """isinstance against an optional library's class, without importing it if it is not loaded."""
    import sys

    loaded = sys.modules.get(module)
    cls = getattr(loaded, name, None) if loaded is not None else None
    return isinstance(cls, type) and isinstance(obj, cls)


def _is_litellm_client(client: Any) -> bool:
    """Ragas passes LiteLLM as `client=litellm.completion` (the function) or the module itself."""
    module = getattr(client, "__module__", None) if callable(client) else None
    name = getattr(client, "__name__", "") or ""
    return (module or name or "").split(".")[0] == "litellm"


def _is_google_client(client: Any) -> bool:
    module = type(client).__module__ if not isinstance(client, type(os)) else client.__name__
    return module.startswith(("google.genai", "google.generativeai", "google.ai"))


def _client_provider(
    client: Any, model: str, timeout: float, provider: str | None = None, **options: Any
) -> Provider:
    module = type(client).__module__.split(".")[0]
    if _is_litellm_client(client):
        from assay.models.providers.litellm import LiteLLMProvider

        return LiteLLMProvider(model, timeout=timeout, **options)
    if _is_google_client(client) or (provider or "").lower() in ("google", "gemini"):
        # Gemini is reached through LiteLLM, as Ragas does; the key is read from the environment,
        # not from the Google client object (whose settings LiteLLM cannot use).
        return _google_llm(model, None, timeout)
    if (
        module.startswith("llama_index")
        or _is_instance_of(client, "llama_index.core.llms", "LLM")
        or _is_instance_of(client, "llama_index.core.embeddings", "BaseEmbedding")
    ):
        from assay.models.providers.llamaindex import LlamaIndexProvider

        return (
            LlamaIndexProvider(client)
            if hasattr(client, "achat")
            else LlamaIndexProvider(embeddings=client)
        )
    if module.startswith("langchain"):
        from assay.models.providers.langchain import LangChainProvider

        return (
            LangChainProvider(client)
            if hasattr(client, "ainvoke")
            else LangChainProvider(embeddings=client)
        )
    if module == "anthropic":
        from assay.models.providers.anthropic import AnthropicProvider

        return AnthropicProvider(model, client=client)
    if hasattr(client, "chat") and hasattr(client.chat, "completions"):
        from assay.models.providers.openai_compat import OpenAICompatible

        return OpenAICompatible(model, client=client, timeout=timeout)
    raise UsageError(
        f"cannot use a client of type {type(client).__name__}; pass an OpenAI, Anthropic, LiteLLM, "
        "LangChain or LlamaIndex client"
    )


def _google_llm(model: str, api_key: str | None, timeout: float) -> Provider:
    from assay.models.providers.litellm import LiteLLMProvider

    key = api_key or os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")
    if not key:
        raise MissingCredentials("Google", "GOOGLE_API_KEY")
    name = model if model.startswith(("gemini/", "vertex_ai/")) else f"gemini/{model}"
    return LiteLLMProvider(name, api_key=key, timeout=timeout)


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
    if kind in _REGISTERED and client is None:
        built = _REGISTERED[kind](
            name, base_url=base_url, api_key=api_key, timeout=timeout, **options
        )
        if not isinstance(built, Provider):
            raise UsageError(
                f"the provider registered as {kind!r} returned a {type(built).__name__}, not a Provider"
            )
        return built
    if client is not None:
        return _client_provider(client, name, timeout, provider, **options)
    if kind in ("google", "gemini"):
        return _google_llm(name, api_key, timeout)
    if kind == "azure":
        from assay.models.embedding_providers import azure_provider

        return azure_provider(name, base_url=base_url, api_key=api_key, timeout=timeout, **options)
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
        raise UsageError(
            f"unknown provider {kind!r}; known: {', '.join((*PROVIDERS, *EXPLICIT_PROVIDERS))}"
        )
    from assay.models.providers.openai_compat import OpenAICompatible

    if kind == "openai":
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
    elif kind == "ollama" and not base_url and os.environ.get("OLLAMA_HOST"):
        host = os.environ["OLLAMA_HOST"]
        base_url = (host if "://" in host else f"http://{host}").rstrip("/") + "/v1"
    base_url = base_url or endpoint.base_url
    if kind == "ollama" and base_url and urlsplit(base_url).path.strip("/") == "":
        # Ragas' docs give Ollama's address as http://localhost:11434; its OpenAI API is under /v1.
        base_url = base_url.rstrip("/") + "/v1"
    if base_url is None and kind != "openai":
        raise UsageError(
            f"{kind} needs the server's address: '{kind}/{name}@http://host:port/v1' or base_url=..."
        )
    key = api_key or (os.environ.get(endpoint.key_variable) if endpoint.key_variable else None)
    if not key:
        # A custom endpoint (local server, proxy) often needs no key; OpenAI's own always does.
        if endpoint.key_variable and (kind != "openai" or base_url is None):
            raise MissingCredentials(
                kind.capitalize() if kind != "openai" else "OpenAI", endpoint.key_variable
            )
        key = endpoint.placeholder_key
    return OpenAICompatible(name, base_url=base_url, api_key=key, timeout=timeout, name=kind)


# What `llm_factory` accepts besides its named parameters: default request fields of the model
# (Ragas passes its **kwargs to the model as `InstructorModelArgs`). Anything else is refused by
# name rather than sent to the server, where it would be an error or, worse, quietly ignored.
MODEL_ARGS = (
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "seed",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "logit_bias",
    "logprobs",
    "top_logprobs",
    "reasoning_effort",
    "user",
    # understood by vLLM, llama.cpp, LM Studio and LiteLLM's OpenAI-compatible servers
    "top_k",
    "min_p",
    "repetition_penalty",
    "guided_choice",
    "guided_json",
    "guided_regex",
    "guided_grammar",
)
LOCAL_OPTIONS = ("model_path", "n_threads", "n_ctx", "n_parallel")
# LiteLLM connection settings (Azure, Bedrock, Vertex); only with provider="litellm" / "litellm/..."
LITELLM_OPTIONS = (
    "api_base",
    "api_version",
    "aws_region_name",
    "vertex_project",
    "vertex_location",
)
# Ragas chose a structured-output library per provider; assay's one structured-output ladder
# replaces both, so every adapter name is accepted and none changes anything.
ADAPTERS = ("auto", "instructor", "litellm")
_LLM_PARAMETERS = (
    "model",
    "provider",
    "client",
    "adapter",
    "cache",
    "system_prompt",
    "model_args",
    "extra_body",
    "base_url",
    "api_key",
    "timeout",
    "retry",
    "limits",
    "price",
)


def _accepted_llm_arguments() -> str:
    return ", ".join((*_LLM_PARAMETERS, *MODEL_ARGS, *LOCAL_OPTIONS, *LITELLM_OPTIONS))


def _model_args_dict(model_args: Any) -> dict[str, Any]:
    if model_args is None:
        return {}
    if isinstance(model_args, dict):
        return dict(model_args)
    dump = getattr(model_args, "model_dump", None)
    if callable(dump):
        return {k: v for k, v in dump().items() if v is not None}
    raise UsageError(
        f"model_args must be a dict or InstructorModelArgs, got {type(model_args).__name__}"
    )


def llm_factory(
    model: str,
    provider: str | None = None,
    client: Any = None,
    adapter: str = "auto",
    cache: Any = True,
    *,
    system_prompt: str | None = None,
    model_args: Any = None,
    extra_body: dict[str, Any] | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float | None = None,
    retry: RetryPolicy | None = None,
    limits: Limits | None = None,
    price: tuple[float, float] | Price | None = None,
    **params: Any,
) -> LLM:
    """Build a judge LLM.

    `provider`, `client`, `adapter`, `cache`, `system_prompt` and model arguments mean what they
    mean in Ragas' `llm_factory`: `system_prompt` is a system message leading every request of
    this LLM (part of the cache key, as it changes answers); `adapter` is accepted and has no
    effect (see ADAPTERS). Model arguments (MODEL_ARGS: temperature, max_tokens, seed, ...) and
    `model_args` become default request fields; fields of one server only go in `extra_body`.
    Any other keyword is a `UsageError` naming it. `price` is (input, output) USD per million tokens."""
    if not isinstance(adapter, str) or adapter.lower() not in ADAPTERS:
        raise UsageError(
            f"adapter must be one of {', '.join(map(repr, ADAPTERS))}, got {adapter!r}"
        )
    if system_prompt is not None and (
        not isinstance(system_prompt, str) or not system_prompt.strip()
    ):
        raise UsageError(f"system_prompt must be a non-empty string, got {system_prompt!r}")
    if extra_body is not None and not isinstance(extra_body, dict):
        raise UsageError(
            f"extra_body must be a dict of request fields, got {type(extra_body).__name__}"
        )
    kind = parse_model_string(model, provider)[0] if client is None else None
    local_options = {k: params.pop(k) for k in LOCAL_OPTIONS if k in params}
    litellm_options = {k: params.pop(k) for k in LITELLM_OPTIONS if k in params}
    unknown = [name for name in params if name not in MODEL_ARGS]
    if unknown:
        raise UsageError(
            f"llm_factory() got an unknown argument {unknown[0]!r}; it accepts "
            f"{_accepted_llm_arguments()} (other request fields go in extra_body={{...}})"
        )
    if local_options and kind != "local":
        raise UsageError(
            f"{next(iter(local_options))} applies only to the embedded judge (model 'local')"
        )
    if litellm_options and kind != "litellm" and not _is_litellm_client(client):
        raise UsageError(
            f"{next(iter(litellm_options))} applies only to LiteLLM models (provider='litellm')"
        )
    params = {**_model_args_dict(model_args), **params, **(extra_body or {})}
    backend = make_provider(
        model,
        provider=provider,
        client=client,
        base_url=base_url,
        api_key=api_key,
        timeout=timeout,
        **local_options,
        **litellm_options,
    )
    profile = backend.profile
    if limits is None and profile.concurrency is not None:
        limits = Limits(max_concurrency=profile.concurrency, adaptive=False)
    if profile.default_max_tokens is not None:
        params.setdefault("max_tokens", profile.default_max_tokens)
    return LLM(
        backend,
        cache=_resolve_cache(cache),
        retry=retry,
        limits=limits,
        price=_price(price),
        default_params=params,
        max_output_tokens=profile.max_output_tokens,
        attempt_timeout=getattr(backend, "timeout", None) or timeout or 120.0,
        system_prompt=system_prompt,
    )


# -- embeddings -----------------------------------------------------------------------------------
# Providers an embedding model can be named by, as Ragas' embedding_factory("openai", model=...) does,
# with the model used when none is named.
EMBEDDING_PROVIDERS: dict[str, str | None] = {
    "openai": "text-embedding-3-small",
    "azure": "text-embedding-3-small",
    "google": "gemini-embedding-001",
    "gemini": "gemini-embedding-001",
    "litellm": None,
    "huggingface": "sentence-transformers/all-MiniLM-L6-v2",
    "local": "minilm",
    "ollama": None,
    "vllm": None,
    "lmstudio": None,
    "llamacpp": None,
    "openrouter": None,
}
INTERFACES = ("auto", "modern", "legacy")  # Ragas' two embedding class families; here there is one
_EMBEDDING_OPTIONS = {
    "litellm": (
        "api_base",
        "api_version",
        "aws_region_name",
        "vertex_project",
        "vertex_location",
        "dimensions",
        "encoding_format",
        "input_type",
    ),
    "azure": ("api_version", "azure_endpoint", "azure_deployment"),
    "google": ("use_vertex", "project_id", "location", "task_type", "output_dimensionality"),
    "huggingface": (
        "use_api",
        "device",
        "normalize_embeddings",
        "model_kwargs",
        "encode_kwargs",
        "cache_folder",
    ),
}
_EMBEDDING_OPTIONS["gemini"] = _EMBEDDING_OPTIONS["google"]


def _embedding_target(
    spec: str | None, provider: str | None, model: str | None
) -> tuple[str, str | None, str | None]:
    """(provider, model name, base_url) from the Ragas spellings and assay's model strings:
    ("openai", model="m"), (provider="openai", model="m"), ("openai/m"), ("vllm/m@http://..."), ("openai")."""
    if spec is not None and not isinstance(spec, str):
        raise UsageError(
            f"the first argument of embedding_factory must be a provider or model name, got {spec!r}"
        )
    if spec and spec.strip().lower() in EMBEDDING_PROVIDERS and provider is None:
        provider, spec = spec.strip().lower(), None
    if spec and model:
        raise UsageError(
            f"embedding_factory got both the model string {spec!r} and model={model!r}; give one"
        )
    if provider is not None and provider.lower() not in EMBEDDING_PROVIDERS:
        raise UsageError(
            f"unknown embedding provider {provider!r}; known: {', '.join(EMBEDDING_PROVIDERS)}"
        )
    name = spec or model
    if provider is not None and provider.lower() in (
        "huggingface",
        "google",
        "gemini",
        "azure",
        "local",
    ):
        kind = provider.lower()
        return kind, name or EMBEDDING_PROVIDERS[kind], None
    if name is None:
        kind = (provider or "openai").lower()
        default = EMBEDDING_PROVIDERS[kind]
        if default is None:
            raise UsageError(
                f"embedding_factory({kind!r}) needs model=..., e.g. model='{kind}/...' names for LiteLLM"
            )
        return kind, default, None
    kind, parsed, url = parse_model_string(name, provider)
    if kind == "local":
        return "local", parsed if parsed != "local" else "minilm", None
    return kind, parsed, url


def embedding_factory(
    spec: str | None = None,
    /,
    provider: str | None = None,
    model: str | None = None,
    client: Any = None,
    interface: str = "auto",
    cache: Any = True,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    batch_size: int | None = None,
    timeout: float | None = None,
    retry: RetryPolicy | None = None,
    limits: Limits | None = None,
    price: tuple[float, float] | Price | None = None,
    **options: Any,
) -> Embeddings:
    """Build an embedding model. Every spelling of Ragas and assay works:

        embedding_factory("openai", model="text-embedding-3-small", client=AsyncOpenAI())
        embedding_factory(provider="google", model="gemini-embedding-001")      # assay[google]
        embedding_factory("litellm", model="azure/my-deployment", api_base=..., api_version=...)
        embedding_factory("huggingface", model="BAAI/bge-small-en-v1.5")         # assay[huggingface]
        embedding_factory("openai/text-embedding-3-small"), embedding_factory("local/minilm")

    `interface` ("auto", "modern", "legacy") is accepted and changes nothing: one class serves both
    of Ragas' interfaces. Provider settings (api_version, device, use_vertex, ...) are checked per
    provider; an unknown keyword is a `UsageError` naming it."""
    if not isinstance(interface, str) or interface not in INTERFACES:
        raise UsageError(
            f"interface must be one of {', '.join(map(repr, INTERFACES))}, got {interface!r}"
        )
    if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
        raise UsageError(f"batch_size must be a positive integer, got {batch_size!r}")
    kind, name, url = _embedding_target(spec, provider, model)
    if client is not None and _is_litellm_client(client):
        kind = "litellm"
    allowed = _EMBEDDING_OPTIONS.get(kind, ())
    unknown = [key for key in options if key not in allowed]
    if unknown:
        accepted = ", ".join(
            (
                "provider",
                "model",
                "client",
                "interface",
                "cache",
                "base_url",
                "api_key",
                "batch_size",
                "timeout",
                "retry",
                "limits",
                "price",
                *allowed,
            )
        )
        raise UsageError(
            f"embedding_factory() got an unknown argument {unknown[0]!r} for provider {kind!r}; "
            f"it accepts {accepted}"
        )
    backend = embedding_provider(
        kind,
        name,
        client=client,
        base_url=base_url or url,
        api_key=api_key,
        timeout=timeout,
        **options,
    )
    return Embeddings(
        backend,
        cache=_resolve_cache(cache),
        batch_size=batch_size or _batch_size(kind),
        retry=retry,
        limits=limits,
        price=_price(price),
        attempt_timeout=getattr(backend, "timeout", None) or timeout or 120.0,
    )


def _batch_size(kind: str) -> int:
    # Ragas' per-provider batch sizes where they are limits of the service (Google: small batches).
    return {"google": 5, "gemini": 5, "huggingface": 32}.get(kind, 64)


def embedding_provider(
    kind: str,
    name: str | None,
    *,
    client: Any = None,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float | None = None,
    **options: Any,
) -> Provider:
    """The provider behind one embedding model (see `embedding_factory`)."""
    from assay.models import embedding_providers as extra

    if kind == "local" and client is None:
        from assay.models.local_embeddings import local_embedding_provider

        return local_embedding_provider(name or "minilm")
    if kind in ("google", "gemini"):
        return extra.GoogleEmbeddingProvider(
            name or "gemini-embedding-001", client=client, api_key=api_key, **options
        )
    if kind == "huggingface":
        return extra.huggingface_provider(
            name or "sentence-transformers/all-MiniLM-L6-v2", api_key=api_key, **options
        )
    if kind == "azure":
        return extra.azure_provider(
            name or "text-embedding-3-small",
            client=client,
            base_url=base_url,
            api_key=api_key,
            timeout=timeout or 120.0,
            **options,
        )
    if kind == "litellm":
        from assay.models.providers.litellm import LiteLLMProvider

        return LiteLLMProvider(
            name or "",
            api_key=api_key,
            base_url=options.pop("api_base", None) or base_url,
            timeout=timeout or 120.0,
            **options,
        )
    return make_provider(
        name or "",
        provider=kind,
        client=client,
        base_url=base_url,
        api_key=api_key,
        timeout=timeout,
    )


def _price(price: tuple[float, float] | Price | None) -> Price | None:
    if price is None or isinstance(price, Price):
        return price
    return Price(*price)


__all__ = [
    "ADAPTERS",
    "EMBEDDING_PROVIDERS",
    "MODEL_ARGS",
    "PROVIDERS",
    "embedding_factory",
    "embedding_provider",
    "llm_factory",
    "make_provider",
    "parse_model_string",
    "register_provider",
]
