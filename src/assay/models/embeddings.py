"""`Embeddings`: batched, cached, retried text embeddings over any provider that can embed."""

from __future__ import annotations

import math
from collections.abc import Sequence

from assay._util.sync import run_sync
from assay.errors import RateLimited
from assay.models.cache import ResponseCache, embedding_key
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
        cache: ResponseCache | None = None,
        batch_size: int = 64,
        retry: RetryPolicy | None = None,
        limits: Limits | None = None,
        price: Price | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.provider = provider
        self.cache = cache
        self.batch_size = batch_size
        self.retry = retry or RetryPolicy()
        self.limiter = RateLimiter(limits or Limits())
        self.price = price if price is not None else (provider.price or lookup_price(provider.model))
        self.usage = UsageMeter()

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
            fresh, tokens = await call_with_retry(lambda b=batch: self._limited([texts[i] for i in b]), self.retry)
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
        await self.limiter.acquire(sum(len(text) for text in texts) // 4)
        rate_limited = False
        try:
            return await self.provider.embed(texts)
        except RateLimited:
            rate_limited = True
            raise
        finally:
            await self.limiter.release(rate_limited=rate_limited)

    def _charge(self, usage: Usage) -> None:
        self.usage.add(usage, priced=self.price is not None)
        meter = current_meter()
        if meter is not None:
            meter.add(usage, priced=self.price is not None)


__all__ = ["Embeddings"]
