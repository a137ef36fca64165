"""Embeddings through an OpenAI-compatible endpoint: batching, order, per-text cache, usage."""

from __future__ import annotations

import asyncio

import pytest

from assay.errors import AssayError
from assay.models import embedding_factory
from tests.models.fake_openai import embed, embed_vector, rate_limited

TEXTS = ["alpha", "beta", "gamma", "delta", "epsilon"]


@pytest.fixture
def make_embeddings(server, tmp_path):
    def build(*, cache=False, batch_size=2, **options):
        return embedding_factory(
            f"vllm/emb@{server.url}", cache=cache, batch_size=batch_size, **options
        )

    return build


def test_texts_are_sent_in_batches_and_vectors_come_back_in_order(server, make_embeddings):
    emb = make_embeddings(batch_size=2)

    vectors = asyncio.run(emb.aembed_texts(TEXTS))

    assert vectors == [embed_vector(text) for text in TEXTS]
    requests = server.embedding_requests
    assert [r.body["input"] for r in requests] == [
        ["alpha", "beta"],
        ["gamma", "delta"],
        ["epsilon"],
    ]
    assert all(r.body["model"] == "emb" for r in requests)
    assert server.chat_requests == []


def test_vectors_are_matched_by_index_when_the_server_lists_them_out_of_order(
    server, make_embeddings
):
    server.embedding_default = embed(reverse=True)
    emb = make_embeddings(batch_size=3)

    assert asyncio.run(emb.aembed_texts(TEXTS)) == [embed_vector(text) for text in TEXTS]


def test_the_cache_is_per_text(server, make_embeddings, tmp_path):
    emb = make_embeddings(cache=tmp_path / "emb.sqlite", batch_size=2)

    async def scenario():
        first = await emb.aembed_texts(TEXTS[:4])
        second = await emb.aembed_texts(["gamma", "zeta", "alpha", "delta"])
        return first, second

    first, second = asyncio.run(scenario())

    assert first == [embed_vector(text) for text in TEXTS[:4]]
    assert second == [embed_vector(text) for text in ["gamma", "zeta", "alpha", "delta"]]
    inputs = [r.body["input"] for r in server.embedding_requests]
    assert inputs == [["alpha", "beta"], ["gamma", "delta"], ["zeta"]]
    assert emb.usage.usage.cached_requests == 3


def test_a_fresh_embedding_model_on_the_same_cache_makes_no_request(
    server, make_embeddings, tmp_path
):
    path = tmp_path / "emb.sqlite"
    asyncio.run(make_embeddings(cache=path).aembed_texts(TEXTS))
    before = server.count

    again = asyncio.run(make_embeddings(cache=path).aembed_texts(TEXTS))

    assert again == [embed_vector(text) for text in TEXTS]
    assert server.count == before == 3


def test_embedding_usage_is_counted(server, make_embeddings):
    server.embedding_default = embed(tokens_per_text=4)
    emb = make_embeddings(batch_size=2, price=(1.0, 0.0))

    asyncio.run(emb.aembed_texts(TEXTS))

    usage = emb.usage.usage
    assert (usage.input_tokens, usage.output_tokens, usage.requests) == (20, 0, 3)
    assert usage.cost == pytest.approx(20 / 1e6, rel=1e-12)


def test_the_sync_single_text_api(server, make_embeddings):
    emb = make_embeddings()
    assert emb.embed_query("alpha") == embed_vector("alpha")
    assert server.embedding_requests[0].body["input"] == ["alpha"]


def test_a_429_on_embeddings_is_retried_after_retry_after(server, make_embeddings):
    server.script_embeddings(rate_limited(retry_after=0.2), embed())
    emb = make_embeddings()

    assert asyncio.run(emb.aembed_texts(["alpha"])) == [embed_vector("alpha")]
    first, second = server.embedding_requests
    assert first.status == 429 and second.status == 200
    assert second.time - first.time >= 0.2


def test_a_short_answer_from_the_server_is_an_error_not_a_shorter_list(server, make_embeddings):
    """If the server returns fewer vectors than texts, the texts and vectors no longer line up:
    that must fail loudly rather than hand back a list missing rows."""
    server.embedding_default = embed(drop=1)
    emb = make_embeddings(batch_size=2)

    with pytest.raises((AssayError, ValueError)):
        vectors = asyncio.run(emb.aembed_texts(TEXTS))
        raise AssertionError(f"got {len(vectors)} vectors for {len(TEXTS)} texts")


def test_an_openai_client_can_be_passed_in(server):
    import openai

    client = openai.AsyncOpenAI(api_key="sk-client", base_url=server.url, max_retries=0)
    emb = embedding_factory("emb", client=client, cache=False)

    assert asyncio.run(emb.aembed_texts(["alpha"])) == [embed_vector("alpha")]
    assert server.embedding_requests[0].headers["authorization"] == "Bearer sk-client"
