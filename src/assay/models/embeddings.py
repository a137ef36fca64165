"""`Embeddings`: batched, cached, retried text embeddings over any provider that can embed."""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Sequence

import anyio

from assay._util.sync import run_sync
from assay.errors import ModelTimeout, RateLimited
from assay.models.cache import AnswerStore, embedding_key
from assay.models.endpoint import Endpoint, shared_endpoint
from assay.models.limits import Limits, RateLimiter
from assay.models.providers.base import Provider
from assay.models.retry import RetryPolicy, call_with_retry
from assay.models.types import Usage
from assay.models.usage import Price, UsageMeter, current_meter, lookup_price


class Embeddings:
    """Embeds texts in batches of `batch_size`; cached per text, so partial hits save calls."""

    def __init__(
        self,
        provider: Provider,
        *,
        cache: AnswerStore | None = None,
        batch_size: int = 64,
        retry: RetryPolicy | None = None,
        limits: Limits | None = None,
        price: Price | None = None,
        attempt_timeout: float | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if attempt_timeout is not None and not attempt_timeout > 0:
            raise ValueError(
                f"attempt_timeout must be a positive number of seconds, got {attempt_timeout!r}"
            )
        self.provider = provider
        self.cache = cache
        self.batch_size = batch_size
        self.retry = retry or RetryPolicy()
        # Shared with every other Embeddings object of the same endpoint and limits.
        self.endpoint: Endpoint = shared_endpoint(provider.endpoint_address(), limits or Limits())
        self.attempt_timeout = attempt_timeout
        self.price = (
            price if price is not None else (provider.price or lookup_price(provider.model))
        )
        self.usage = UsageMeter()

    @property
    def limiter(self) -> RateLimiter:
        return self.endpoint.limiter

    @property
    def model(self) -> str:
        return self.provider.model

    def __repr__(self) -> str:
        return f"Embeddings(provider={self.provider.name!r}, model={self.model!r})"

    async def aembed_texts(self, texts: Sequence[str]) -> list[list[float]]:
        texts = list(texts)
        vectors: list[list[float] | None] = [None] * len(texts)
        identity = self.provider.identity()
        keys = [embedding_key(identity, text) for text in texts]
        if self.cache is not None:
            for index, key in enumerate(keys):
                vectors[index] = self.cache.get_vector(key)
        missing = [index for index, vector in enumerate(vectors) if vector is None]
        hits = len(texts) - len(missing)
        if hits:
            self._charge(Usage(cached_requests=hits))
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start : start + self.batch_size]
            fresh, tokens = await call_with_retry(
                functools.partial(self._limited, [texts[i] for i in batch]), self.retry
            )
            for index, vector in zip(batch, fresh, strict=True):
                if not all(math.isfinite(x) for x in vector):
                    raise ValueError(f"the embedding of text {index} contains non-finite values")
                vectors[index] = vector
                if self.cache is not None:
                    self.cache.put_vector(keys[index], self.model, vector)
            cost = self.price.cost(tokens, 0) if self.price else 0.0
            self._charge(Usage(input_tokens=tokens, requests=1, cost=cost))
        return [vector for vector in vectors if vector is not None]

    async def aembed_text(self, text: str) -> list[float]:
        return (await self.aembed_texts([text]))[0]

    def embed_texts(self, texts: Sequence[str]) -> list[list[float]]:
        return run_sync(self.aembed_texts(texts))

    def embed_text(self, text: str) -> list[float]:
        return run_sync(self.aembed_text(text))

    # Ragas / LangChain spellings.
    aembed_documents = aembed_texts
    aembed_query = aembed_text
    embed_documents = embed_texts
    embed_query = embed_text

    async def _limited(self, texts: list[str]) -> tuple[list[list[float]], int]:
        held = await self.limiter.acquire(sum(len(text) for text in texts) // 4)
        rate_limited = False
        started = time.monotonic()
        latency: float | None = None
        try:
            if self.attempt_timeout is None:
                result = await self.provider.embed(texts)
            else:
                with anyio.fail_after(self.attempt_timeout):
                    result = await self.provider.embed(texts)
            latency = time.monotonic() - started
            return result
        except TimeoutError as exc:
            raise ModelTimeout(f"no complete answer within {self.attempt_timeout:g} s") from exc
        except RateLimited:
            rate_limited = True
            raise
        finally:
            self.limiter.release(rate_limited=rate_limited, latency=latency, held=held)

    def _charge(self, usage: Usage) -> None:
        self.usage.add(usage, priced=self.price is not None)
        meter = current_meter()
        if meter is not None:
            meter.add(usage, priced=self.price is not None)


__all__ = ["Embeddings"]
