"""Every provider name assay knows, as entries of one `Registry` fed by the `assay.providers` group.

A `ProviderKind` says all there is to know about one name: how to build the provider for a model
string (`openai/gpt-4o-mini`, `anthropic/...`), whether the name may lead a model string or is
only given as `provider=...` (`google/gemma-2-9b` is a model name, not the Google provider), how
it serves embeddings, and which client objects it recognises (`llm_factory(client=AsyncOpenAI())`).
`llm_factory`, `embedding_factory` and the client detection all read these entries; there is no
other list of providers.

A new provider is one file and one entry: `register_provider("myhost", build)` in process, or in
a plugin's pyproject:

    [project.entry-points."assay.providers"]
    myhost = "myhost_assay:build"          # a build callable, or a ProviderKind

`build(model_name, *, base_url, api_key, timeout, **options)` returns a `Provider`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from assay._util.registry import Registry
from assay.errors import MissingCredentials, UsageError
from assay.models.providers.base import Provider

Build = Callable[..., Provider]
ENTRY_POINT_GROUP = "assay.providers"
REMOTE_TIMEOUT = 120.0  # seconds one request to a hosted or served model may take by default


@dataclass(frozen=True)
class ProviderKind:
    """One provider name and how to build from it.

    `build(model, *, base_url, api_key, timeout, **options)`: the provider of a model string
    (None: the name serves only embeddings or only clients). `prefix`: the name may lead a model
    string; False for names given only as `provider=...`. `embeddings(model, *, client, base_url,
    api_key, timeout, **options)`: its own embedding provider (None: `build` serves embeddings
    too, when `embeds`). `accepts_client(client, provider)` / `from_client(client, model,
    timeout, **options)`: recognising a client object the user passed.
    """

    name: str
    build: Build | None = None
    prefix: bool = True
    embeds: bool = False
    embedding_model: str | None = None  # the model when none is named
    embedding_options: tuple[str, ...] = ()
    embedding_batch_size: int = 64
    default_timeout: float | None = REMOTE_TIMEOUT  # None: the provider picks (the local judge)
    embeddings: Build | None = None
    accepts_client: Callable[[Any, str | None], bool] | None = None
    from_client: Build | None = None


def _as_kind(obj: Any) -> ProviderKind:
    if isinstance(obj, ProviderKind):
        return obj
    if callable(obj):  # an entry point may name just the build callable
        return ProviderKind(name=getattr(obj, "__name__", ""), build=obj)
    raise TypeError(
        f"a provider must be a ProviderKind or a callable that builds the provider, "
        f"got {type(obj).__name__}"
    )


def _plain_name(name: str) -> str:
    key = name.lower()
    if not key or "/" in key or "@" in key:
        raise UsageError(f"a provider name must be a plain word such as 'myhost', got {name!r}")
    return key


# -- OpenAI-compatible services -------------------------------------------------------------
@dataclass(frozen=True)
class _Endpoint:
    """Defaults of an OpenAI-compatible service."""

    base_url: str | None
    key_variable: str | None  # None: the server needs no key
    placeholder_key: str = "not-needed"


def _openai_compatible(kind: str, endpoint: _Endpoint) -> Build:
    def build(
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        **_options: Any,
    ) -> Provider:
        from assay.models.providers.openai_compat import OpenAICompatible

        if kind == "openai":
            base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        elif kind == "ollama" and not base_url and os.environ.get("OLLAMA_HOST"):
            host = os.environ["OLLAMA_HOST"]
            base_url = (host if "://" in host else f"http://{host}").rstrip("/") + "/v1"
        base_url = base_url or endpoint.base_url
        if kind == "ollama" and base_url and urlsplit(base_url).path.strip("/") == "":
            # Ragas' docs give Ollama's address as http://localhost:11434; its API is under /v1.
            base_url = base_url.rstrip("/") + "/v1"
        if base_url is None and kind != "openai":
            raise UsageError(
                f"{kind} needs the server's address: '{kind}/{model}@http://host:port/v1' or "
                "base_url=..."
            )
        variable = endpoint.key_variable
        key = api_key or (os.environ.get(variable) if variable else None)
        if not key:
            # A custom endpoint (local server, proxy) often needs no key; OpenAI's own always does.
            if variable and (kind != "openai" or base_url is None):
                raise MissingCredentials(
                    kind.capitalize() if kind != "openai" else "OpenAI", variable
                )
            key = endpoint.placeholder_key
        return OpenAICompatible(
            model, base_url=base_url, api_key=key, timeout=timeout or REMOTE_TIMEOUT, name=kind
        )

    return build


def _openai_client(client: Any, _provider: str | None) -> bool:
    return hasattr(client, "chat") and hasattr(client.chat, "completions")


def _from_openai_client(client: Any, model: str, timeout: float, **_options: Any) -> Provider:
    from assay.models.providers.openai_compat import OpenAICompatible

    return OpenAICompatible(model, client=client, timeout=timeout)


# -- the others -------------------------------------------------------------------------------
def _local(model: str, *, timeout: float | None = None, **options: Any) -> Provider:
    from assay.models.local import local_provider

    options.pop("base_url", None)
    options.pop("api_key", None)
    if timeout is not None:
        options["timeout"] = timeout
    return local_provider(**options)


def _local_embeddings(model: str | None, **_options: Any) -> Provider:
    from assay.models.local_embeddings import local_embedding_provider

    return local_embedding_provider(model or "minilm")


def _anthropic(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float | None = None,
    **_options: Any,
) -> Provider:
    from assay.models.providers.anthropic import AnthropicProvider

    key = api_key or os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise MissingCredentials("Anthropic", "ANTHROPIC_API_KEY")
    return AnthropicProvider(
        model, api_key=key, base_url=base_url, timeout=timeout or REMOTE_TIMEOUT
    )


def _anthropic_client(client: Any, _provider: str | None) -> bool:
    return type(client).__module__.split(".")[0] == "anthropic"


def _from_anthropic_client(client: Any, model: str, timeout: float, **_options: Any) -> Provider:
    from assay.models.providers.anthropic import AnthropicProvider

    return AnthropicProvider(model, client=client)


def _litellm(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float | None = None,
    **options: Any,
) -> Provider:
    from assay.models.providers.litellm import LiteLLMProvider

    return LiteLLMProvider(
        model, api_key=api_key, base_url=base_url, timeout=timeout or REMOTE_TIMEOUT, **options
    )


def _litellm_embeddings(
    model: str | None, *, client: Any = None, base_url: str | None = None, **options: Any
) -> Provider:
    return _litellm(model or "", base_url=options.pop("api_base", None) or base_url, **options)


def is_litellm_client(client: Any, _provider: str | None = None) -> bool:
    """Ragas passes LiteLLM as `client=litellm.completion` (the function) or the module itself."""
    module = getattr(client, "__module__", None) if callable(client) else None
    name = getattr(client, "__name__", "") or ""
    return (module or name or "").split(".")[0] == "litellm"


def _from_litellm_client(client: Any, model: str, timeout: float, **options: Any) -> Provider:
    return _litellm(model, timeout=timeout, **options)


def _google(
    model: str, *, api_key: str | None = None, timeout: float | None = None, **_options: Any
) -> Provider:
    # Gemini is reached through LiteLLM, as Ragas does; the key is read from the environment,
    # not from a Google client object (whose settings LiteLLM cannot use).
    key = api_key or os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")
    if not key:
        raise MissingCredentials("Google", "GOOGLE_API_KEY")
    name = model if model.startswith(("gemini/", "vertex_ai/")) else f"gemini/{model}"
    return _litellm(name, api_key=key, timeout=timeout)


def _google_client(client: Any, provider: str | None) -> bool:
    if (provider or "").lower() in ("google", "gemini"):
        return True
    module = type(client).__module__ if not isinstance(client, type(os)) else client.__name__
    return module.startswith(("google.genai", "google.generativeai", "google.ai"))


def _from_google_client(client: Any, model: str, timeout: float, **_options: Any) -> Provider:
    return _google(model, timeout=timeout)


def _google_embeddings(
    model: str | None, *, client: Any = None, api_key: str | None = None, **options: Any
) -> Provider:
    from assay.models.embedding_providers import GoogleEmbeddingProvider

    options.pop("base_url", None)
    options.pop("timeout", None)
    return GoogleEmbeddingProvider(
        model or "gemini-embedding-001", client=client, api_key=api_key, **options
    )


def _azure(model: str | None, **options: Any) -> Provider:
    from assay.models.embedding_providers import azure_provider

    options["timeout"] = options.get("timeout") or REMOTE_TIMEOUT
    return azure_provider(model or "text-embedding-3-small", **options)


def _azure_llm(model: str, **options: Any) -> Provider:
    options.pop("client", None)
    return _azure(model, **options)


def _huggingface(model: str | None, *, api_key: str | None = None, **options: Any) -> Provider:
    from assay.models.embedding_providers import huggingface_provider

    for connection in ("client", "base_url", "timeout"):
        options.pop(connection, None)
    return huggingface_provider(
        model or "sentence-transformers/all-MiniLM-L6-v2", api_key=api_key, **options
    )


def _module_of(client: Any) -> str:
    return type(client).__module__.split(".")[0]


def _class_loaded(client: Any, module: str, name: str) -> bool:
    """isinstance against an optional library's class, without importing it if it is not loaded."""
    import sys

    loaded = sys.modules.get(module)
    cls = getattr(loaded, name, None) if loaded is not None else None
    return isinstance(cls, type) and isinstance(client, cls)


def _llamaindex_client(client: Any, _provider: str | None) -> bool:
    return (
        _module_of(client).startswith("llama_index")
        or _class_loaded(client, "llama_index.core.llms", "LLM")
        or _class_loaded(client, "llama_index.core.embeddings", "BaseEmbedding")
    )


def _from_llamaindex_client(client: Any, model: str, timeout: float, **_options: Any) -> Provider:
    from assay.models.providers.llamaindex import LlamaIndexProvider

    if hasattr(client, "achat"):
        return LlamaIndexProvider(client)
    return LlamaIndexProvider(embeddings=client)


def _from_langchain_client(client: Any, model: str, timeout: float, **_options: Any) -> Provider:
    from assay.models.providers.langchain import LangChainProvider

    if hasattr(client, "ainvoke"):
        return LangChainProvider(client)
    return LangChainProvider(embeddings=client)


_LITELLM_CONNECTION = (
    "api_base",
    "api_version",
    "aws_region_name",
    "vertex_project",
    "vertex_location",
)
_GOOGLE_EMBEDDING_OPTIONS = (
    "use_vertex",
    "project_id",
    "location",
    "task_type",
    "output_dimensionality",
)


def _builtin_kinds() -> dict[str, ProviderKind]:
    """The built-in names, in the order clients are recognised (most specific first)."""
    compatible = {
        "openai": _Endpoint(None, "OPENAI_API_KEY"),
        "ollama": _Endpoint("http://localhost:11434/v1", None, "ollama"),
        "vllm": _Endpoint(None, None, "EMPTY"),
        "lmstudio": _Endpoint("http://localhost:1234/v1", None, "lm-studio"),
        "llamacpp": _Endpoint(None, None),
        "openrouter": _Endpoint("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    }
    kinds = [
        ProviderKind(
            "litellm",
            build=_litellm,
            embeds=True,
            embedding_options=(*_LITELLM_CONNECTION, "dimensions", "encoding_format", "input_type"),
            embeddings=_litellm_embeddings,
            accepts_client=is_litellm_client,
            from_client=_from_litellm_client,
        ),
        *(
            ProviderKind(
                name,
                build=_google,
                prefix=False,
                embeds=True,
                embedding_model="gemini-embedding-001",
                embedding_options=_GOOGLE_EMBEDDING_OPTIONS,
                embedding_batch_size=5,  # Google's service limit
                embeddings=_google_embeddings,
                accepts_client=_google_client,
                from_client=_from_google_client,
            )
            for name in ("google", "gemini")
        ),
        ProviderKind(
            "llamaindex",
            prefix=False,
            accepts_client=_llamaindex_client,
            from_client=_from_llamaindex_client,
        ),
        ProviderKind(
            "langchain",
            prefix=False,
            accepts_client=lambda client, _p: _module_of(client).startswith("langchain"),
            from_client=_from_langchain_client,
        ),
        ProviderKind(
            "anthropic",
            build=_anthropic,
            accepts_client=_anthropic_client,
            from_client=_from_anthropic_client,
        ),
        ProviderKind(
            "azure",
            build=_azure_llm,
            prefix=False,
            embeds=True,
            embedding_model="text-embedding-3-small",
            embedding_options=("api_version", "azure_endpoint", "azure_deployment"),
            embeddings=_azure,
        ),
        ProviderKind(
            "huggingface",
            prefix=False,
            embeds=True,
            embedding_model="sentence-transformers/all-MiniLM-L6-v2",
            embedding_options=(
                "use_api",
                "device",
                "normalize_embeddings",
                "model_kwargs",
                "encode_kwargs",
                "cache_folder",
            ),
            embedding_batch_size=32,
            embeddings=_huggingface,
        ),
        ProviderKind(
            "local",
            build=_local,
            embeds=True,
            embedding_model="minilm",
            embeddings=_local_embeddings,
            default_timeout=None,
        ),
        *(
            ProviderKind(
                name,
                build=_openai_compatible(name, endpoint),
                embeds=True,
                embedding_model="text-embedding-3-small" if name == "openai" else None,
                accepts_client=_openai_client if name == "openai" else None,
                from_client=_from_openai_client if name == "openai" else None,
            )
            for name, endpoint in compatible.items()
        ),
    ]
    return {kind.name: kind for kind in kinds}


PROVIDER_KINDS: Registry[ProviderKind] = Registry(
    "provider",
    ENTRY_POINT_GROUP,
    builtins=_builtin_kinds,
    check=_as_kind,
    normalise=_plain_name,
)


def register_provider(kind: str, build: Build | ProviderKind) -> None:
    """Make `'<kind>/<model>'` model strings (and `provider='<kind>'`) build a provider with
    `build(model_name, base_url=..., api_key=..., timeout=..., **options)`. A new provider is then
    one file and one call; the built-in names cannot be taken over."""
    if not callable(build) and not isinstance(build, ProviderKind):
        raise UsageError(
            f"register_provider needs a callable that builds the provider, got {type(build).__name__}"
        )
    name = PROVIDER_KINDS.key(kind)
    entry = build if isinstance(build, ProviderKind) else ProviderKind(name, build=build)
    PROVIDER_KINDS.register(name, replace(entry, name=name))


def provider_kind(name: str) -> ProviderKind:
    """The entry for a provider name (a `UsageError` listing the known ones if there is none)."""
    return PROVIDER_KINDS.get(name)


def prefix_names() -> set[str]:
    """Names that may lead a model string: built-ins marked so, and every registered name."""
    builtin = PROVIDER_KINDS.builtins()
    return {
        name
        for name in PROVIDER_KINDS.names()
        if name not in builtin or _as_kind(builtin[name]).prefix
    }


def client_provider(
    client: Any, model: str, timeout: float, provider: str | None = None, **options: Any
) -> Provider:
    """The provider wrapping a client object, found by asking each kind whether it is theirs."""
    for name in PROVIDER_KINDS.names():  # built-ins first, most specific first
        kind = PROVIDER_KINDS.get(name)
        accepts, build = kind.accepts_client, kind.from_client
        if accepts is not None and build is not None and accepts(client, provider):
            return build(client, model, timeout, **options)
    raise UsageError(
        f"cannot use a client of type {type(client).__name__}; pass an OpenAI, Anthropic, LiteLLM, "
        "LangChain or LlamaIndex client"
    )


__all__ = [
    "ENTRY_POINT_GROUP",
    "PROVIDER_KINDS",
    "ProviderKind",
    "client_provider",
    "is_litellm_client",
    "prefix_names",
    "provider_kind",
    "register_provider",
]
