"""Evaluating a real LangChain application (LCEL runnables over a retriever of in-memory
documents), and scoring from inside LangChain with EvaluatorChain. The judge is scripted: it
says "yes" for a statement that appears in the contexts, so Faithfulness is the share of the
answer's sentences found verbatim in what the application retrieved."""

from __future__ import annotations

import time
import uuid
from typing import Any

import anyio
import pytest
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.messages import AIMessage
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough
from langsmith.schemas import Example, Run

from assay.engine.executor import ExceptionInRunner
from assay.errors import RunFailed, UsageError
from assay.integrations.langchain import (
    EvaluatorChain,
    RagasEvaluatorChain,
    evaluate_chain,
)
from assay.metrics.rag.context_recall import LLMContextRecall
from assay.metrics.rag.faithfulness import Faithfulness
from assay.schema.outcome import Error, Ok
from tests.evaluator.judge import reading_judge

CAPITALS = [
    Document(page_content="Paris is the capital of France."),
    Document(page_content="Berlin is the capital of Germany."),
    Document(page_content="Madrid is the capital of Spain."),
]


class KeywordRetriever(BaseRetriever):
    """The documents sharing the most words with the query (a real LangChain retriever)."""

    documents: list[Document]
    k: int = 1

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        words = set(query.lower().strip("?").split())
        ranked = sorted(
            self.documents,
            key=lambda d: -len(words & set(d.page_content.lower().strip(".").split())),
        )
        return ranked[: self.k]


def answer_from(inputs: dict[str, Any]) -> str:
    question, documents = inputs["question"], inputs["context"]
    if "explode" in question:
        raise RuntimeError("vector store offline")
    if "guess" in question:
        return "Rome is the capital of Germany."
    return documents[0].page_content


def string_chain() -> Any:
    """question -> retriever -> an answer string (documents only visible through callbacks)."""
    retriever = KeywordRetriever(documents=CAPITALS)
    return RunnableParallel(context=retriever, question=RunnablePassthrough()) | RunnableLambda(
        answer_from
    )


def test_a_chain_is_asked_every_row_and_its_answers_scored():
    judge, provider = reading_judge()
    result = evaluate_chain(
        string_chain(),
        [
            {"user_input": "What is the capital of France?"},
            {"user_input": "Please guess the capital of Germany?"},
            {"user_input": "explode on Spain?"},
        ],
        [Faithfulness()],
        llm=judge,
        show_progress=False,
    )
    assert result["faithfulness"] == [1.0, 0.0, None]
    # the retrieved documents came from the retriever's callbacks, the answer from the output
    assert result.dataset[0].retrieved_contexts == ["Paris is the capital of France."]
    assert result.dataset[0].response == "Paris is the capital of France."
    assert result.dataset[1].retrieved_contexts == ["Berlin is the capital of Germany."]
    failed = result.outcome(2, "faithfulness")
    assert isinstance(failed, Error)
    assert failed.error_type == "ApplicationError"
    assert "RuntimeError: vector store offline" in failed.message
    assert result.dataset[2].response is None and result.dataset[2].retrieved_contexts is None
    # only the two answered rows reached the judge; the summary counts the failed row
    assert len(provider.requests) == 2
    (summary,) = result.summaries()
    assert summary.n_error == 1 and summary.coverage_text().startswith("2")


def test_dict_outputs_messages_and_keys_are_read():
    retriever = KeywordRetriever(documents=CAPITALS, k=2)

    def respond(inputs: dict[str, Any]) -> dict[str, Any]:
        docs = inputs["docs"]
        return {"reply": AIMessage(content=docs[0].page_content), "docs": docs, "q": 1}

    chain = RunnableParallel(docs=retriever, question=RunnablePassthrough()) | RunnableLambda(
        respond
    )
    judge, _ = reading_judge()
    result = evaluate_chain(
        chain,
        [{"user_input": "capital of Spain"}],
        [Faithfulness()],
        llm=judge,
        response_key="reply",
        contexts_key="docs",
        show_progress=False,
    )
    assert result["faithfulness"] == [1.0]
    assert result.dataset[0].retrieved_contexts[0] == "Madrid is the capital of Spain."
    assert len(result.dataset[0].retrieved_contexts) == 2

    # an output without any answer key is that row's typed error, naming the keys it had
    result = evaluate_chain(
        RunnableLambda(lambda q: {"foo": q}),
        [{"user_input": "x", "reference": "x"}],
        ["bleu_score"],
        show_progress=False,
        make_input=lambda sample: sample.user_input,
    )
    outcome = result.outcome(0, "bleu_score")
    assert isinstance(outcome, Error) and "no answer in the chain's output" in outcome.message
    assert "'foo'" in outcome.message


def test_concurrency_is_bounded_and_dataset_order_kept(capsys: pytest.CaptureFixture[str]):
    in_flight, peak = 0, 0

    async def slow_echo(question: str) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        row = int(question.split("-")[1])
        await anyio.sleep(0.02 * (12 - row))  # later rows finish first
        in_flight -= 1
        return f"answer-{row}"

    rows = [{"user_input": f"row-{i}", "reference": f"answer-{i}"} for i in range(12)]
    result = evaluate_chain(
        RunnableLambda(slow_echo),
        rows,
        ["exact_match"],
        app_concurrency=3,
        show_progress=True,
    )
    assert peak == 3
    shown = capsys.readouterr().err  # the engine's progress bars: the app's rows, then the cells
    assert "Asking the chain" in shown and "12/12" in shown and "Evaluating" in shown
    assert [s.response for s in result.dataset] == [f"answer-{i}" for i in range(12)]
    assert result["exact_match"] == [1.0] * 12


def test_a_slow_row_times_out_alone_and_strict_stops_at_the_first_failure():
    def sometimes_slow(question: str) -> str:  # a blocking app, run in worker threads
        if question == "slow":
            time.sleep(1.0)
        return question

    result = evaluate_chain(
        RunnableLambda(sometimes_slow),
        [{"user_input": "fast", "reference": "fast"}, {"user_input": "slow", "reference": "x"}],
        ["exact_match"],
        app_timeout=0.2,
        show_progress=False,
    )
    assert result.outcome(0, "exact_match") == Ok(value=1.0)
    timed_out = result.outcome(1, "exact_match")
    assert isinstance(timed_out, Error) and timed_out.error_type == "ApplicationTimeout"

    with pytest.raises(ExceptionInRunner) as raised:
        evaluate_chain(
            string_chain(),
            [
                {"user_input": "capital of France", "reference": "r"},
                {"user_input": "explode", "reference": "r"},
            ],
            ["bleu_score"],
            raise_exceptions=True,
            app_concurrency=1,
            show_progress=False,
        )
    assert raised.value.row == 1 and "vector store offline" in str(raised.value)


def test_configuration_mistakes_are_refused_before_the_app_is_asked():
    calls = []
    app = RunnableLambda(lambda q: calls.append(q) or q)
    with pytest.raises(UsageError, match="needs reference"):
        evaluate_chain(app, [{"user_input": "a"}], ["exact_match"], show_progress=False)
    with pytest.raises(UsageError, match="app_concurrency must be at least 1"):
        evaluate_chain(
            app, [{"user_input": "a"}], ["bleu_score"], app_concurrency=0, show_progress=False
        )
    with pytest.raises(UsageError, match=r"no user_input .*index 1"):
        evaluate_chain(
            app, [{"user_input": "a"}, {"reference": "b"}], ["bleu_score"], show_progress=False
        )
    with pytest.raises(UsageError, match="LangChain Runnable"):
        evaluate_chain(lambda q: q, [{"user_input": "a"}], ["bleu_score"])
    assert calls == []


def test_a_metric_needing_what_the_app_never_reported_is_refused_clearly():
    judge, provider = reading_judge()
    with pytest.raises(UsageError, match=r"needs retrieved_contexts.*the chain reported none"):
        evaluate_chain(
            RunnableLambda(lambda q: "an answer"),
            [{"user_input": "a"}, {"user_input": "b"}],
            [Faithfulness()],
            llm=judge,
            show_progress=False,
        )
    assert provider.requests == []


def test_evaluator_chain_scores_its_inputs_as_a_runnable():
    judge, _ = reading_judge()
    chain = EvaluatorChain(Faithfulness(), llm=judge)
    scored = chain.invoke(
        {
            "question": "capital of France?",
            "answer": "Paris is the capital of France. It has ten million bees.",
            "contexts": [CAPITALS[0]],
        }
    )
    assert scored == {"faithfulness": 0.5}
    # composed after a real chain: the app's output dict feeds the evaluator
    pipeline = (
        RunnableParallel(
            contexts=KeywordRetriever(documents=CAPITALS), question=RunnablePassthrough()
        )
        | RunnablePassthrough.assign(answer=lambda d: d["contexts"][0].page_content)
        | chain
    )
    assert pipeline.invoke("capital of Germany") == {"faithfulness": 1.0}
    assert chain.batch(
        [
            {
                "question": "q",
                "answer": "Madrid is the capital of Spain.",
                "contexts": [CAPITALS[2]],
            },
            {"question": "q", "answer": "Madrid is big.", "contexts": [CAPITALS[2]]},
        ]
    ) == [{"faithfulness": 1.0}, {"faithfulness": 0.0}]
    by_name = EvaluatorChain("exact_match")
    assert by_name.invoke({"response": "x", "reference": "x"}) == {"exact_match": 1.0}
    assert by_name.input_keys == ["response", "reference"]
    with pytest.raises(UsageError, match="needs response"):
        chain.invoke({"question": "q", "contexts": ["c"]})
    with pytest.raises(UsageError, match="cannot score this input: row has no response"):
        chain.invoke({"question": "q", "answer": "", "contexts": ["c"]})


def test_a_failed_judge_call_raises_with_its_cause():
    from assay.models import LLM, ScriptedProvider

    broken = LLM(ScriptedProvider([ValueError("judge fell over")]))
    chain = EvaluatorChain(Faithfulness(), llm=broken)
    with pytest.raises(RunFailed, match="judge fell over"):
        chain.invoke({"question": "q", "answer": "A b.", "contexts": ["A b."]})


def test_legacy_qa_chain_form_and_langsmith_run_evaluator():
    judge, _ = reading_judge()
    legacy = RagasEvaluatorChain(Faithfulness(), llm=judge)
    qa_result = {
        "query": "capital of Spain?",
        "result": "Madrid is the capital of Spain.",
        "source_documents": [CAPITALS[2]],
    }
    assert legacy(qa_result) == {**qa_result, "faithfulness_score": 1.0}
    assert legacy.evaluate(
        [{"query": "q1"}, {"query": "q2"}],
        [
            {"result": "Paris is the capital of France.", "source_documents": [CAPITALS[0]]},
            {"result": "Paris is the capital of France.", "source_documents": [CAPITALS[1]]},
        ],
    ) == [{"faithfulness_score": 1.0}, {"faithfulness_score": 0.0}]

    recall = EvaluatorChain(LLMContextRecall(), llm=reading_judge()[0])
    run = Run(
        id=uuid.uuid4(),
        name="rag",
        run_type="chain",
        start_time="2026-01-01T00:00:00",
        trace_id=uuid.uuid4(),
        inputs={"question": "capital of France?"},
        outputs={"answer": "Paris.", "contexts": ["Paris is the capital of France."]},
    )
    example = Example(
        id=uuid.uuid4(),
        dataset_id=uuid.uuid4(),
        inputs={"question": "capital of France?"},
        outputs={"ground_truth": "Paris is the capital of France."},
    )
    evaluation = recall.evaluate_run(run, example)
    assert evaluation.key == "context_recall" and evaluation.score == 1.0
    without_truth = Example(id=uuid.uuid4(), dataset_id=uuid.uuid4(), inputs={"question": "q"})
    with pytest.raises(UsageError, match="ground_truth"):
        recall.evaluate_run(run, without_truth)
