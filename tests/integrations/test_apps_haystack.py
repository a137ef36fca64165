"""Evaluating a real Haystack pipeline (InMemoryDocumentStore + InMemoryBM25Retriever + a custom
answering component), scoring inside a pipeline with RagasEvaluator, and Haystack models as
judges (OpenAIChatGenerator against the fake OpenAI server on 127.0.0.1)."""

from __future__ import annotations

import os

os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"  # before Haystack is imported: no network

from collections.abc import Iterator
from typing import Any

import anyio
import numpy as np
import pytest
from haystack import Document, Pipeline, component
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.dataclasses import ChatMessage
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.utils import Secret

from assay.errors import UsageError
from assay.integrations.haystack import (
    HaystackEmbeddingsWrapper,
    HaystackLLMWrapper,
    RagasEvaluator,
    evaluate_pipeline,
)
from assay.metrics.answer.semantic_similarity import SemanticSimilarity
from assay.metrics.rag.faithfulness import Faithfulness
from assay.models import LLM, ScriptedProvider
from assay.schema.outcome import Error, Ok
from tests.evaluator.judge import reading_judge
from tests.models.fake_openai import FakeOpenAI, ok, serve

FACTS = [
    "The Nile is the longest river in Africa.",
    "Mount Kenya is the second highest mountain in Africa.",
    "Lake Victoria is the largest lake in Africa.",
]


@component
class FirstDocumentAnswerer:
    """Answers with the best document's text; fails on 'explode', invents on 'guess'."""

    @component.output_types(replies=list[ChatMessage])
    def run(self, question: str, documents: list[Document]) -> dict[str, Any]:
        if "explode" in question:
            raise RuntimeError("generator quota exceeded")
        text = "The Nile flows into Lake Geneva." if "guess" in question else documents[0].content
        return {"replies": [ChatMessage.from_assistant(text)]}


@component
class Passthrough:
    """Hands documents on unchanged (a second component that returns documents)."""

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document]) -> dict[str, Any]:
        return {"documents": documents}


def rag_pipeline(*, with_ranker: bool = False) -> Pipeline:
    store = InMemoryDocumentStore()
    store.write_documents([Document(content=fact) for fact in FACTS])
    pipeline = Pipeline()
    pipeline.add_component("retriever", InMemoryBM25Retriever(store, top_k=1))
    pipeline.add_component("answerer", FirstDocumentAnswerer())
    if with_ranker:
        pipeline.add_component("ranker", Passthrough())
        pipeline.connect("retriever.documents", "ranker.documents")
        pipeline.connect("ranker.documents", "answerer.documents")
    else:
        pipeline.connect("retriever.documents", "answerer.documents")
    return pipeline


def test_a_pipeline_is_run_per_row_and_scored():
    judge, provider = reading_judge()
    rows = [
        {"user_input": "Which is the longest river in Africa?"},
        {"user_input": "explode: the largest lake in Africa?"},
        {"user_input": "guess where the longest river flows"},
    ]
    result = evaluate_pipeline(
        rag_pipeline(), rows, [Faithfulness()], llm=judge, show_progress=False
    )
    assert result["faithfulness"] == [1.0, None, 0.0]
    assert result.dataset[0].retrieved_contexts == [FACTS[0]]  # BM25 found the Nile
    assert result.dataset[0].response == FACTS[0]
    failed = result.outcome(1, "faithfulness")
    assert isinstance(failed, Error) and failed.error_type == "ApplicationError"
    assert "generator quota exceeded" in failed.message
    assert len(provider.requests) == 2

    # explicit paths give the same answers; a ranker after the retriever needs naming
    named = evaluate_pipeline(
        rag_pipeline(with_ranker=True),
        rows[:1],
        [Faithfulness()],
        llm=judge,
        query_inputs={"retriever": "query", "answerer": "question"},
        response_from="answerer.replies",
        documents_from="ranker.documents",
        show_progress=False,
    )
    assert named["faithfulness"] == [1.0] and named.dataset[0].retrieved_contexts == [FACTS[0]]
    guessed = evaluate_pipeline(
        rag_pipeline(with_ranker=True), rows[:1], [Faithfulness()], llm=judge, show_progress=False
    )
    outcome = guessed.outcome(0, "faithfulness")
    assert isinstance(outcome, Error)
    assert "several components return documents" in outcome.message
    assert "documents_from=" in outcome.message


def test_wiring_mistakes_are_refused_before_any_run():
    with pytest.raises(UsageError, match="no component 'llm'"):
        evaluate_pipeline(
            rag_pipeline(), [{"user_input": "q"}], [Faithfulness()], response_from="llm.replies"
        )
    with pytest.raises(UsageError, match=r"'component\.socket'"):
        evaluate_pipeline(
            rag_pipeline(), [{"user_input": "q"}], [Faithfulness()], documents_from="retriever"
        )
    with pytest.raises(UsageError, match="Haystack Pipeline"):
        evaluate_pipeline(object(), [{"user_input": "q"}], [Faithfulness()])


def test_concurrent_async_components_are_bounded_and_order_is_kept():
    state = {"in_flight": 0, "peak": 0}

    @component
    class SlowEcho:
        @component.output_types(replies=list[str])
        def run(self, query: str) -> dict[str, Any]:  # pragma: no cover - run_async is used
            return {"replies": [query.upper()]}

        @component.output_types(replies=list[str])
        async def run_async(self, query: str) -> dict[str, Any]:
            state["in_flight"] += 1
            state["peak"] = max(state["peak"], state["in_flight"])
            await anyio.sleep(0.01 * (10 - int(query.split("-")[1])))
            state["in_flight"] -= 1
            return {"replies": [query.upper()]}

    pipeline = Pipeline()
    pipeline.add_component("echo", SlowEcho())
    rows = [{"user_input": f"q-{i}", "reference": f"Q-{i}"} for i in range(10)]
    result = evaluate_pipeline(
        pipeline, rows, ["exact_match"], app_concurrency=4, show_progress=False
    )
    assert state["peak"] == 4
    assert [s.response for s in result.dataset] == [f"Q-{i}" for i in range(10)]
    assert result["exact_match"] == [1.0] * 10


def test_ragas_evaluator_scores_inside_a_pipeline():
    judge, _ = reading_judge()
    pipeline = rag_pipeline()
    pipeline.add_component(
        "evaluator", RagasEvaluator(ragas_metrics=[Faithfulness()], evaluator_llm=judge)
    )
    pipeline.connect("answerer.replies", "evaluator.response")
    pipeline.connect("retriever.documents", "evaluator.documents")
    question = "Which is the largest lake in Africa?"
    out = pipeline.run(
        {
            "retriever": {"query": question},
            "answerer": {"question": question},
            "evaluator": {"query": question},
        }
    )
    assert out["evaluator"]["result"] == {"faithfulness": 1.0}
    assert isinstance(out["evaluator"]["outcomes"]["faithfulness"], Ok)

    # a failing judge: the score is None and the outcome says why
    broken = RagasEvaluator(
        ragas_metrics=["faithfulness"],
        evaluator_llm=LLM(ScriptedProvider([PermissionError("judge key revoked")])),
    )
    scored = broken.run(query="q", response="A b.", documents=[Document(content="A b.")])
    assert scored["result"] == {"faithfulness": None}
    error = scored["outcomes"]["faithfulness"]
    assert isinstance(error, Error) and "judge key revoked" in error.message
    with pytest.raises(UsageError, match="needs retrieved_contexts"):
        broken.run(query="q", response="A b.")


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    yield from serve()


def test_haystack_models_serve_as_judge_and_embeddings(server: FakeOpenAI):
    server.default = ok("1. yes", usage=(20, 2))
    generator = OpenAIChatGenerator(
        api_key=Secret.from_token("test-key"), api_base_url=server.url, model="test-model"
    )
    judge = HaystackLLMWrapper(generator, cache=False)
    result = evaluate_pipeline(
        rag_pipeline(),
        [{"user_input": "Which mountain is the second highest in Africa?"}],
        [Faithfulness()],
        llm=judge,
        show_progress=False,
    )
    assert result["faithfulness"] == [1.0]
    (request,) = server.requests
    assert FACTS[1] in request.last_user_text  # the retrieved context went to the judge
    assert result.usage().input_tokens == 20

    def letter_counts(text: str) -> list[float]:
        return [float(text.lower().count(c)) + 0.1 for c in "aeiounrst"]

    @component
    class LetterCounts:
        """A text embedder: letter frequencies (a real Haystack component)."""

        @component.output_types(embedding=list[float])
        def run(self, text: str) -> dict[str, Any]:
            return {"embedding": letter_counts(text)}

    embeddings = HaystackEmbeddingsWrapper(LetterCounts(), cache=False)
    scored = evaluate_pipeline(
        rag_pipeline(),
        [
            {"user_input": "longest river in Africa?", "reference": FACTS[0]},
            {"user_input": "largest lake in Africa?", "reference": "Tana"},
        ],
        [SemanticSimilarity()],
        embeddings=embeddings,
        show_progress=False,
    )
    same, different = scored["semantic_similarity"]
    answer = scored.dataset[1].response
    a, b = np.array(letter_counts(answer)), np.array(letter_counts("Tana"))
    assert same == pytest.approx(1.0)
    assert different == pytest.approx(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    assert different < 0.9
