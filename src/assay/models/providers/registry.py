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

`build(model_name, *, base_url, api_key, timeout, **options)` returns a `Provider`. The
built-in entries are in `builtin.py`; the `ProviderKind` record in `kinds.py`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from assay._util.registry import Registry
from assay.errors import UsageError
from assay.models.providers.base import Provider
from assay.models.providers.builtin import builtin_kinds, is_litellm_client
from assay.models.providers.kinds import REMOTE_TIMEOUT, Build, ProviderKind

ENTRY_POINT_GROUP = "assay.providers"


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


PROVIDER_KINDS: Registry[ProviderKind] = Registry(
    "provider",
    ENTRY_POINT_GROUP,
    builtins=builtin_kinds,
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
    "REMOTE_TIMEOUT",
    "ProviderKind",
    "client_provider",
    "is_litellm_client",
    "prefix_names",
    "provider_kind",
    "register_provider",
]
