"""Offline embeddings: MiniLM int8 (English) and multilingual E5, through `embedding_factory`."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from assay.errors import UsageError
from assay.models import Embeddings, ResponseCache, embedding_factory
from assay.models.local_embeddings import E5Provider, MiniLMProvider, local_embedding_provider


@pytest.fixture(scope="module")
def minilm() -> Iterator[Embeddings]:
    yield embedding_factory("local", cache=False)


@pytest.fixture(scope="module")
def e5() -> Iterator[Embeddings]:
    yield embedding_factory("local/e5", cache=False)


def _cosine(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_minilm_gives_384_dimensional_unit_vectors(minilm: Embeddings) -> None:
    assert isinstance(minilm.provider, MiniLMProvider)
    vectors = minilm.embed_texts(["The cat sat on the mat.", "Stock prices fell sharply."])
    assert np.asarray(vectors).shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.usage.usage.input_tokens > 0
    assert minilm.usage.usage.cost == 0.0


def test_minilm_ranks_a_paraphrase_above_an_unrelated_text(minilm: Embeddings) -> None:
    anchor, paraphrase, unrelated = minilm.embed_texts(
        [
            "The cat is sleeping on the sofa.",
            "A cat naps on the couch.",
            "Interest rates were raised by the central bank.",
        ]
    )
    assert _cosine(anchor, paraphrase) > _cosine(anchor, unrelated)


def test_padding_does_not_change_a_vector(minilm: Embeddings) -> None:
    text = "Paris is the capital of France."
    alone = np.asarray(minilm.embed_text(text))
    short_batch = minilm.embed_texts(["Hi", text])
    long_batch = minilm.embed_texts(
        [
            text,
            "A considerably longer sentence, so that the shorter ones in this batch are padded with "
            "many padding tokens before the model sees them, which must not shift their mean pooling.",
            "Ok",
        ]
    )
    assert np.max(np.abs(np.asarray(short_batch[1]) - alone)) < 1e-5
    assert np.max(np.abs(np.asarray(long_batch[0]) - alone)) < 1e-5


def test_a_text_longer_than_the_model_window_is_truncated_not_an_error(minilm: Embeddings) -> None:
    vector = minilm.embed_text("word " * 2000)
    assert len(vector) == 384
    assert np.isclose(np.linalg.norm(vector), 1.0, atol=1e-5)


def test_async_embedding_matches_sync(minilm: Embeddings) -> None:
    text = "Embeddings are computed off the event loop."
    assert np.allclose(asyncio.run(minilm.aembed_text(text)), minilm.embed_text(text), atol=1e-6)


def test_local_embeddings_are_cached(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    first = embedding_factory("local/minilm", cache=cache)
    vector = first.embed_text("cached sentence")
    second = embedding_factory("local/minilm", cache=cache)
    assert second.embed_text("cached sentence") == vector
    assert second.usage.usage.cached_requests == 1
    assert second.usage.usage.requests == 0


def test_e5_handles_chinese(e5: Embeddings) -> None:
    assert isinstance(e5.provider, E5Provider)
    anchor, paraphrase, unrelated = e5.embed_texts(
        ["今天天气很好。", "今天的天气非常不错。", "股票市场昨天大幅下跌。"]
    )
    assert len(anchor) == 384
    assert np.allclose(np.linalg.norm([anchor, paraphrase, unrelated], axis=1), 1.0, atol=1e-5)
    assert _cosine(anchor, paraphrase) > _cosine(anchor, unrelated)
    assert np.allclose(e5.embed_text("今天天气很好。"), anchor, atol=1e-5)


def test_local_embedding_names() -> None:
    assert isinstance(local_embedding_provider("local"), MiniLMProvider)
    assert isinstance(local_embedding_provider("minilm"), MiniLMProvider)
    assert isinstance(local_embedding_provider("local/e5"), E5Provider)
    assert isinstance(local_embedding_provider("multilingual"), E5Provider)
    with pytest.raises(UsageError, match="local/minilm"):
        embedding_factory("local/no-such-model", cache=False)


def test_local_embedding_models_cannot_generate() -> None:
    provider = local_embedding_provider("minilm")
    from assay.models.types import ChatMessage, ModelRequest

    with pytest.raises(UsageError, match="embedding model"):
        asyncio.run(provider.complete(ModelRequest((ChatMessage(role="user", content="hi"),))))


def test_local_embeddings_are_not_reported_as_unpriced(minilm: Embeddings) -> None:
    # Like the local judge: free and known to be free, so not "a model with no known price".
    minilm.embed_text("price check")
    assert minilm.usage.usage.unpriced_requests == 0
