"""A provider turns one `ModelRequest` into one `ModelResponse`, nothing more.

Retries, rate limits, caching, usage and structured-output fallbacks are layered on top by
`assay.models.llm.LLM`, identically for every provider. A provider's only other duties are
to say what it can do (`Profile`) and to raise assay's `ModelError` subclasses, translated
from its SDK's exceptions at the boundary.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

from assay.models.types import OUTPUT_MODES, ModelRequest, ModelResponse, OutputMode
from assay.models.usage import Price


@dataclass(frozen=True)
class Profile:
    """Capabilities, as data. `output_modes` are tried in this order for structured output."""

    output_modes: tuple[OutputMode, ...] = OUTPUT_MODES
    logprobs: bool = False
    multiple_completions: bool = True  # honours n > 1 in one request
    # Requests the endpoint can really serve at once (a local server's slots). None: unknown, so
    # the limiter adapts; a number: the limit is fixed there, since more would only queue inside.
    concurrency: int | None = None
    # The largest answer worth asking for when a cut-off answer is asked again with more room.
    max_output_tokens: int = 16384
    # max_tokens sent when a call names none (None: the provider's own default).
    default_max_tokens: int | None = None


class Provider(abc.ABC):
    """One authenticated connection to one model."""

    name: str = "provider"
    # A known price for every model of this provider (local models cost nothing); None = look it up.
    price: Price | None = None

    def __init__(self, model: str, *, profile: Profile | None = None) -> None:
        self.model = model
        self.profile = profile or Profile()

    def identity(self) -> dict[str, Any]:
        """What distinguishes this model's answers from another's (used in cache keys)."""
        return {"provider": self.name, "model": self.model}

    def endpoint_address(self) -> dict[str, Any]:
        """What makes two providers one endpoint for rate limiting: the identity plus which
        credentials are used (as a fingerprint; separate keys have separate quotas)."""
        from assay.models.endpoint import credential_fingerprint

        return {
            **self.identity(),
            "credentials": credential_fingerprint(getattr(self, "api_key", None)),
        }

    @abc.abstractmethod
    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Make one call. Raise `ModelError` subclasses for every failure."""

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        """Embed texts; return the vectors and the input tokens used."""
        raise TypeError(f"{type(self).__name__} does not provide embeddings")

    async def aclose(self) -> None:  # noqa: B027 (optional hook; most providers hold nothing)
        """Release connections (optional)."""


__all__ = ["Profile", "Provider"]
