"""The built-in provider names, one `ProviderKind` each (see `registry.py` for how they are found).

Each kind's functions build its provider lazily, importing the provider module (and its optional
SDK) only when that name is used. `builtin_kinds()` lists them in the order client objects are
recognised, most specific first: a LiteLLM function or a LangChain model also looks like "some
object", and the OpenAI duck type (`client.chat.completions`) comes last.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from assay.errors import MissingCredentials, UsageError
from assay.models.providers.base import Provider
from assay.models.providers.kinds import REMOTE_TIMEOUT, Build, ProviderKind


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


def _openai_batch(provider: Any) -> Any:
    from assay.models.providers.openai_batch import OpenAIBatches

    return OpenAIBatches(provider)


def _anthropic_batch(provider: Any) -> Any:
    from assay.models.providers.anthropic_batch import AnthropicBatches

    return AnthropicBatches(provider)


def builtin_kinds() -> dict[str, ProviderKind]:
    """The built-in names, in the order clients are recognised (most specific first)."""
    compatible = {
        "openai": _Endpoint(None, "OPENAI_API_KEY"),
        "ollama": _Endpoint("http://localhost:11434/v1", None, "ollama"),
        "vllm": _Endpoint(None, None, "EMPTY"),
        "lmstudio": _Endpoint("http://localhost:1234/v1", None, "lm-studio"),
        "llamacpp": _Endpoint(None, None),
        "openrouter": _Endpoint("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
        "groq": _Endpoint("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
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
            batch=_anthropic_batch,
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
                batch=_openai_batch if name == "openai" else None,
            )
            for name, endpoint in compatible.items()
        ),
    ]
    return {kind.name: kind for kind in kinds}


__all__ = ["builtin_kinds", "is_litellm_client"]
