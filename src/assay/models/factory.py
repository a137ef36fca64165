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

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from assay.errors import UsageError
from assay.models.cache import AnswerStore, KeyValueCache, ResponseCache, open_cache
from assay.models.embeddings import Embeddings
from assay.models.limits import Limits
from assay.models.llm import LLM
from assay.models.providers.base import Provider
from assay.models.providers.registry import (
    PROVIDER_KINDS,
    REMOTE_TIMEOUT,
    ProviderKind,
    client_provider,
    is_litellm_client,
    prefix_names,
    register_provider,
)
from assay.models.retry import RetryPolicy
from assay.models.usage import Price


def _builtin_names(prefix: bool) -> tuple[str, ...]:
    return tuple(
        name
        for name, kind in PROVIDER_KINDS.builtins().items()
        if isinstance(kind, ProviderKind) and kind.build is not None and kind.prefix is prefix
    )


# The built-in names a model string may start with, and those given only as provider=... (never
# a model-string prefix: 'google/gemma-2-9b' is a model name). Both read from the registry.
PROVIDERS = _builtin_names(prefix=True)
EXPLICIT_PROVIDERS = _builtin_names(prefix=False)


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
    if slash and provider is None and head.lower() in prefix_names():
        return head.lower(), rest, base_url
    return (provider or "openai").lower(), model, base_url


def _resolve_cache(cache: Any) -> AnswerStore | None:
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
        return KeyValueCache(cache)
    raise UsageError(
        f"cache must be True, False, a path, a ResponseCache or a CacheInterface, "
        f"got {type(cache).__name__}"
    )


def check_base_url(base_url: Any) -> None:
    """Refuse an address no request could reach before any work: every cell of a run would
    otherwise time out against it, one after another."""
    parts = urlsplit(base_url) if isinstance(base_url, str) else None
    try:
        valid = parts is not None and parts.scheme in ("http", "https") and bool(parts.hostname)
        if valid and parts is not None:
            parts.port  # noqa: B018  (raises ValueError for a port that is not a number)
    except ValueError:
        valid = False
    if not valid:
        raise UsageError(
            f"base_url must be an http(s) URL such as http://127.0.0.1:8000/v1, got {base_url!r}"
        )


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
    `timeout`: seconds one request may take; None: the provider's default (120 for a remote
    provider, 900 for the embedded judge: a CPU judge writing a long answer is slow, not stuck)."""
    kind_name, name, url_in_string = parse_model_string(model, provider)
    base_url = base_url or url_in_string
    if base_url is not None:
        check_base_url(base_url)
    if timeout is not None and not timeout > 0:
        raise UsageError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if client is not None:
        return client_provider(client, name, timeout or REMOTE_TIMEOUT, provider, **options)
    kind = PROVIDER_KINDS.find(kind_name)
    if kind is None or kind.build is None:
        known = [
            n for n in PROVIDER_KINDS.names() if n not in ("llamaindex", "langchain", "huggingface")
        ]
        raise UsageError(f"unknown provider {kind_name!r}; known: {', '.join(known)}")
    built = kind.build(
        name,
        base_url=base_url,
        api_key=api_key,
        timeout=timeout if timeout is not None else kind.default_timeout,
        **options,
    )
    if not isinstance(built, Provider):
        raise UsageError(
            f"the provider registered as {kind_name!r} returned a {type(built).__name__}, "
            "not a Provider"
        )
    return built


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
    if litellm_options and kind != "litellm" and not is_litellm_client(client):
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
def _embedding_kind(name: str) -> ProviderKind | None:
    """The provider an embedding model can be named by (Ragas' embedding_factory("openai", ...))."""
    kind = PROVIDER_KINDS.find(name)
    return kind if kind is not None and kind.embeds else None


# The built-in embedding providers -> the model used when none is named (None: name one).
EMBEDDING_PROVIDERS: dict[str, str | None] = {
    name: kind.embedding_model
    for name, kind in PROVIDER_KINDS.builtins().items()
    if isinstance(kind, ProviderKind) and kind.embeds
}
INTERFACES = ("auto", "modern", "legacy")  # Ragas' two embedding class families; here there is one


def _embedding_target(
    spec: str | None, provider: str | None, model: str | None
) -> tuple[str, str | None, str | None]:
    """(provider, model name, base_url) from the Ragas spellings and assay's model strings:
    ("openai", model="m"), (provider="openai", model="m"), ("openai/m"), ("vllm/m@http://..."), ("openai")."""
    if spec is not None and not isinstance(spec, str):
        raise UsageError(
            f"the first argument of embedding_factory must be a provider or model name, got {spec!r}"
        )
    if spec and provider is None and "/" not in spec and _embedding_kind(spec.strip().lower()):
        provider, spec = spec.strip().lower(), None
    if spec and model:
        raise UsageError(
            f"embedding_factory got both the model string {spec!r} and model={model!r}; give one"
        )
    entry = _embedding_kind(provider.lower()) if provider is not None else None
    if provider is not None and entry is None:
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
        return kind, name or (entry.embedding_model if entry else None), None
    if name is None:
        kind = (provider or "openai").lower()
        default = (entry or PROVIDER_KINDS.get(kind)).embedding_model
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
    if client is not None and is_litellm_client(client):
        kind = "litellm"
    entry = PROVIDER_KINDS.get(kind)
    allowed = entry.embedding_options
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
        batch_size=batch_size or entry.embedding_batch_size,
        retry=retry,
        limits=limits,
        price=_price(price),
        attempt_timeout=getattr(backend, "timeout", None) or timeout or 120.0,
    )


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
    """The provider behind one embedding model (see `embedding_factory`): the kind's own embedding
    provider, or the provider of its model strings, which serves embeddings too."""
    entry = PROVIDER_KINDS.get(kind)
    if entry.embeddings is not None and not (kind == "local" and client is not None):
        return entry.embeddings(
            name, client=client, base_url=base_url, api_key=api_key, timeout=timeout, **options
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
