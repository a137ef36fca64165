"""`ProviderKind`: what assay knows about one provider name (the entries of the provider registry)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from assay.models.providers.base import Provider

Build = Callable[..., Provider]
REMOTE_TIMEOUT = 120.0  # seconds one request to a hosted or served model may take by default


@dataclass(frozen=True)
class ProviderKind:
    """One provider name and how to build from it.

    `build(model, *, base_url, api_key, timeout, **options)`: the provider of a model string
    (None: the name serves only embeddings or only clients). `prefix`: the name may lead a model
    string; False for names given only as `provider=...`. `embeddings(model, *, client, base_url,
    api_key, timeout, **options)`: its own embedding provider (None: `build` serves embeddings
    too, when `embeds`). `accepts_client(client, provider)` / `from_client(client, model,
    timeout, **options)`: recognising a client object the user passed. `batch(provider)`: the
    `BatchClient` of the provider's batch API (`batch_api.py`); None: it answers live only.
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
    batch: Callable[[Provider], Any] | None = None


__all__ = ["REMOTE_TIMEOUT", "Build", "ProviderKind"]
