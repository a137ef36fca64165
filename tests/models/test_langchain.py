"""LangChain chat models and embeddings through the one model path (real langchain-core fakes)."""

from __future__ import annotations

import json

import pytest
from langchain_core.embeddings.fake import DeterministicFakeEmbedding
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from pydantic import BaseModel

from assay import evaluate
from assay.metrics.rag.faithfulness import Faithfulness
from assay.models import llm_factory
from assay.models.providers.langchain import LangchainEmbeddingsWrapper, LangchainLLMWrapper


class Verdict(BaseModel):
    verdict: int


def test_structured_output_through_a_langchain_chat_model():
    llm = LangchainLLMWrapper(FakeListChatModel(responses=['Here you go: {"verdict": 1,}']))
    response = llm.generate("Is the sky blue?", schema=Verdict)
    assert response.parsed == Verdict(verdict=1)
    assert response.usage.requests == 1


def test_a_langchain_model_runs_a_real_metric():
    claims = json.dumps({"claims": ["Paris is in France."]})
    llm = llm_factory("any", client=FakeListChatModel(responses=[claims, "1. yes"]), cache=False)
    result = evaluate(
        [
            {
                "response": "Paris is in France.",
                "retrieved_contexts": ["Paris is the capital of France."],
            }
        ],
        [Faithfulness(llm=llm, statements="claims")],
        show_progress=False,
    )
    assert result["faithfulness"] == [1.0]


def test_langchain_embeddings_are_batched_and_cached(tmp_path):
    from assay.models import ResponseCache

    emb = LangchainEmbeddingsWrapper(
        DeterministicFakeEmbedding(size=8), cache=ResponseCache(tmp_path / "c.sqlite")
    )
    first = emb.embed_texts(["a", "b"])
    assert len(first) == 2 and len(first[0]) == 8
    again = emb.embed_texts(["a", "b"])
    assert again == first
    assert emb.usage.usage.cached_requests == 2


def test_langchain_errors_become_typed_errors():
    class Boom(FakeListChatModel):
        async def ainvoke(self, *args, **kwargs):
            error = RuntimeError("too many requests")
            error.status_code = 429
            raise error

    from assay.errors import RateLimited
    from assay.models import RetryPolicy

    llm = LangchainLLMWrapper(
        Boom(responses=["x"]), retry=RetryPolicy(max_attempts=2, initial_wait=0.01, max_wait=0.02)
    )
    with pytest.raises(RateLimited) as info:
        llm.generate("hi")
    assert info.value.attempts == 2
