"""LlamaIndex LLMs and embeddings through the one model path (real llama-index-core mocks)."""

from __future__ import annotations

import json
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, ChatResponse
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from pydantic import PrivateAttr

from assay import evaluate
from assay.metrics.rag.faithfulness import Faithfulness
from assay.models import llm_factory
from assay.models.providers.llamaindex import LlamaIndexEmbeddingsWrapper, LlamaIndexLLMWrapper


class ScriptedLlamaLLM(MockLLM):
    """LlamaIndex's MockLLM answering from a list (a real LlamaIndex LLM object)."""

    _answers: list[str] = PrivateAttr(default_factory=list)

    def __init__(self, answers: list[str]) -> None:
        super().__init__()
        self._answers = list(answers)

    async def achat(self, messages: Any, **kwargs: Any) -> ChatResponse:
        return ChatResponse(
            message=ChatMessage(role="assistant", content=self._answers.pop(0)),
            raw={"usage": {"prompt_tokens": 12, "completion_tokens": 3}},
        )


def test_a_llamaindex_llm_runs_a_real_metric():
    llm = llm_factory(
        "any",
        client=ScriptedLlamaLLM(
            answers=[json.dumps({"claims": ["Paris is in France."]}), "1. yes"]
        ),
        cache=False,
    )
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
    assert result.usage().input_tokens == 24 and result.usage().output_tokens == 6


def test_plain_text_through_the_wrapper():
    llm = LlamaIndexLLMWrapper(MockLLM(max_tokens=3))
    response = llm.generate("hello")
    assert response.text == "text text text"


def test_llamaindex_embeddings():
    emb = LlamaIndexEmbeddingsWrapper(MockEmbedding(embed_dim=4), batch_size=1)
    vectors = emb.embed_texts(["a", "b", "c"])
    assert vectors == [[0.5, 0.5, 0.5, 0.5]] * 3
    assert emb.usage.usage.requests == 3  # batch_size=1: one request per text
