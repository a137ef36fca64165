# ruff: noqa: I001, B018 - the snippets keep the docs' import lines and bare `result` expressions
"""Snippets from the Ragas documentation (spec seed 000), run as written with only the import changed.

Each test body is the docs' code: `from ragas... import X` became `from assay... import X`, and where a
snippet builds a hosted model (`LangchainLLMWrapper(ChatOpenAI(...))`, `llm_factory("gpt-4o", ...)`)
that one line is swapped for the loopback judge (a fake OpenAI-compatible server on 127.0.0.1 that
answers each metric prompt as the test scripted), marked `# swapped:`. Snippets that name no model
get the loopback judge as the configured default (ASSAY_LLM). Placeholders the docs leave to the
reader (`dataset = EvaluationDataset(...)`, `metrics = [...]`) are filled in, marked `# filled in:`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest

from tests.metrics.loopback import Loopback, fenced, loopback, verdict_lines


@pytest.fixture
def loop(monkeypatch, tmp_path) -> Iterator[Loopback]:
    """The loopback judge, also configured as the default model; a private response cache."""
    from assay.metrics.base import forget_default_models

    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ASSAY_EMBEDDINGS", raising=False)
    for served in loopback():
        monkeypatch.setenv("ASSAY_LLM", served.server.model_string("judge"))
        forget_default_models()
        yield served
    forget_default_models()


def all_yes(request) -> str:
    """A verdict line "yes" for every numbered item the request lists."""
    items = [line for line in fenced(request, "items").splitlines() if line[:1].isdigit()]
    return verdict_lines(*["yes"] * len(items))


def rubric(score: int, feedback: str = "fits the rubric") -> str:
    import json

    return json.dumps({"feedback": feedback, "score": score})


# -- evaluate() ----------------------------------------------------------------------------------------
def test_get_started_evaluate_a_simple_rag(loop):
    loop.judge({"supported": all_yes})
    evaluator_llm_source = loop.llm()  # swapped: llm = ChatOpenAI(model="gpt-4o")

    # filled in: the docs' RAG app answers with the most relevant document
    sample_docs = [
        "Albert Einstein proposed the theory of relativity, which transformed our understanding of time, space, and gravity.",
        "Marie Curie was a physicist and chemist who conducted pioneering research on radioactivity and won two Nobel Prizes.",
    ]
    sample_queries = [
        "Who introduced the theory of relativity?",
        "Who won two Nobel Prizes for research on radioactivity?",
    ]
    expected_responses = sample_docs
    rag_answers = dict(zip(sample_queries, sample_docs, strict=True))

    dataset = []
    for query, reference in zip(sample_queries, expected_responses):  # noqa: B905 (as in the docs)
        relevant_docs = [rag_answers[query]]
        response = rag_answers[query]
        dataset.append(
            {
                "user_input": query,
                "retrieved_contexts": relevant_docs,
                "response": response,
                "reference": reference,
            }
        )

    from assay import EvaluationDataset

    evaluation_dataset = EvaluationDataset.from_list(dataset)

    from assay import evaluate

    evaluator_llm = evaluator_llm_source  # swapped: LangchainLLMWrapper(llm)

    from assay import FactualCorrectness, Faithfulness, LLMContextRecall

    result = evaluate(
        dataset=evaluation_dataset,
        metrics=[LLMContextRecall(), Faithfulness(), FactualCorrectness()],
        llm=evaluator_llm,
    )
    result

    assert "'context_recall': 1.0000" in repr(result) and "'faithfulness': 1.0000" in repr(result)
    assert result["faithfulness"] == [1.0, 1.0]
    assert result["factual_correctness"] == [1.0, 1.0]
    # response, reference and context are one text here, so the metrics' checks are identical
    # requests, made once per row and shared
    assert loop.prompt_counts() == {"supported": 2}


def test_evaluate_with_no_metrics_runs_ragas_default_list_on_a_hf_dataset(loop):
    loop.judge(
        {"rating_answer_completeness": "2", "context_usefulness": all_yes, "supported": all_yes}
    )
    from datasets import Dataset

    from assay import evaluate

    # the API reference's example: a v1 dataset, no metrics named
    dataset = Dataset.from_dict(
        {
            "question": ["What is the capital of France?"],
            "answer": ["Paris is the capital of France."],
            "contexts": [["France is a country in Europe. Its capital is Paris."]],
            "ground_truth": ["Paris"],
        }
    )
    result = evaluate(dataset)
    print(result)

    assert result.metric_names == [
        "answer_relevancy",
        "context_precision",
        "faithfulness",
        "context_recall",
    ]
    assert result.scores == [
        {
            "answer_relevancy": 1.0,
            "context_precision": pytest.approx(1.0),
            "faithfulness": 1.0,
            "context_recall": 1.0,
        }
    ]


def test_aevaluate_docstring_example(loop):
    loop.judge({"supported": all_yes})
    from assay import EvaluationDataset, Faithfulness

    dataset = EvaluationDataset.from_list(
        [
            {
                "response": "Paris is the capital.",  # filled in
                "retrieved_contexts": ["Paris is the capital of France."],
            }
        ]
    )
    metrics = [Faithfulness()]  # filled in

    import asyncio

    from assay import aevaluate

    async def main():
        result = await aevaluate(dataset, metrics)
        print(result)
        return result

    result = asyncio.run(main())
    assert result["faithfulness"] == [1.0]


def test_evaluate_allow_nest_asyncio_forms(loop):
    loop.judge({"supported": all_yes})
    from assay import EvaluationDataset, Faithfulness, evaluate

    dataset = EvaluationDataset.from_list(
        [
            {
                "response": "Paris is the capital.",  # filled in
                "retrieved_contexts": ["Paris is the capital of France."],
            }
        ]
    )
    metrics = [Faithfulness()]  # filled in

    # Default behavior (Jupyter-compatible)
    result = evaluate(dataset, metrics)  # allow_nest_asyncio=True
    # Production-safe (avoids event loop patching)
    result_safe = evaluate(dataset, metrics, allow_nest_asyncio=False)
    assert result.scores == result_safe.scores == [{"faithfulness": 1.0}]


def test_legacy_rubrics_singletons_on_a_hf_dataset(loop):
    loop.judge(
        {
            "rubric_score": lambda request: rubric(
                5 if "(not provided)" not in fenced(request, "reference") else 4
            )
        }
    )
    from datasets import Dataset

    from assay import evaluate
    from assay import rubrics_score_with_reference, rubrics_score_without_reference

    rows = {
        "question": [
            "What's the longest river in the world?",
        ],
        "ground_truth": [
            "The Nile is a major north-flowing river in northeastern Africa.",
        ],
        "answer": [
            "The longest river in the world is the Nile, stretching approximately 6,650 kilometers (4,130 miles) through northeastern Africa.",
        ],
        "contexts": [
            [
                "Scientists debate whether the Amazon or the Nile is the longest river in the world.",
                "The Nile River was central to the Ancient Egyptians' rise to wealth and power.",
            ],
        ],
    }
    dataset = Dataset.from_dict(rows)
    result = evaluate(
        dataset,
        metrics=[rubrics_score_without_reference, rubrics_score_with_reference],
    )

    assert result.scores == [
        {"rubrics_score_without_reference": 4, "rubrics_score_with_reference": 5}
    ]
    assert rubrics_score_with_reference.llm is None  # the singleton got the run's model in a copy


def test_instance_rubrics_example(loop):
    loop.judge(
        {"rubric_score": lambda request: rubric(1 if "try" in fenced(request, "response") else 0)}
    )
    evaluator_llm = loop.llm()  # swapped: LangchainLLMWrapper(ChatOpenAI(model="gpt-4o"))
    from assay import EvaluationDataset, InstanceRubrics, evaluate

    dataset = [
        # Relevance to Query
        {
            "user_query": "How do I handle exceptions in Python?",
            "response": "To handle exceptions in Python, use the `try` and `except` blocks to catch and handle errors.",
            "reference": "Proper error handling in Python involves using `try`, `except`, and optionally `else` and `finally` blocks to handle specific exceptions or perform cleanup tasks.",
            "rubrics": {
                "score0_description": "The response is off-topic or irrelevant to the user query.",
                "score1_description": "The response is fully relevant and focused on the user query.",
            },
        },
        # Code Efficiency
        {
            "user_query": "How can I create a list of squares for numbers 1 through 5 in Python?",
            "response": """
                # Using a for loop
                squares = []
                for i in range(1, 6):
                    squares.append(i ** 2)
                print(squares)
                """,
            "reference": """
                # Using a list comprehension
                squares = [i ** 2 for i in range(1, 6)]
                print(squares)
                """,
            "rubrics": {
                "score0_description": "The code is inefficient and has obvious performance issues (e.g., unnecessary loops or redundant calculations).",
                "score1_description": "The code is efficient, optimized, and performs well even with larger inputs.",
            },
        },
    ]
    evaluation_dataset = EvaluationDataset.from_list(dataset)
    result = evaluate(
        dataset=evaluation_dataset,
        metrics=[InstanceRubrics(llm=evaluator_llm)],
        llm=evaluator_llm,
    )
    result

    assert (
        repr(result) == "{'instance_rubrics': 0.5000 (2/2 rows)}"
    )  # the docs' {'instance_rubrics': 0.5000}


# -- metrics scored on their own -------------------------------------------------------------------------
def test_single_turn_metrics_overview(loop):
    loop.judge({"supported": all_yes})
    from assay import SingleTurnSample

    sample = SingleTurnSample(
        response="The Eiffel Tower is in Paris.",  # filled in
        reference="The Eiffel Tower is located in Paris.",
    )

    from assay import FactualCorrectness

    scorer = FactualCorrectness()
    assert (
        asyncio.run(scorer.single_turn_ascore(sample)) == 1.0
    )  # `await scorer.single_turn_ascore(sample)`


def test_aspect_critic_on_a_single_turn_sample(loop):
    loop.judge({"aspect_critic": "yes"})
    agent_code = (
        "def fib_sum(n):\n    a, b, total = 0, 1, 0\n    ..."  # filled in: the agent's code
    )
    from assay import AspectCritic, SingleTurnSample

    evaluator_llm = loop.llm()  # swapped: LlamaIndexLLMWrapper(llm=OpenAI(model="gpt-4o-mini"))

    correct_tool_args = AspectCritic(
        name="correct_tool_args",
        llm=evaluator_llm,
        definition="Score 1 if the tool arguements use in the tool call are correct and 0 otherwise",
    )

    sample = SingleTurnSample(
        user_input="Calculate the sum of the first 10 fibonacci numbers",
        response=agent_code,
    )

    assert asyncio.run(correct_tool_args.single_turn_ascore(sample)) == 1  # the docs' output: 1


def test_multi_turn_aspect_critic_forgetfulness(loop):
    loop.judge(
        {
            "aspect_critic": lambda request: (
                "no" if "credit limit" in fenced(request, "response") else "yes"
            )
        }
    )
    evaluator_llm = loop.llm()  # swapped: LangchainLLMWrapper(ChatOpenAI(model="gpt-4o-mini"))

    from assay import (
        AIMessage,
        AspectCritic,
        EvaluationDataset,
        HumanMessage,
        MultiTurnSample,
        evaluate,
    )

    sample1 = MultiTurnSample(
        user_input=[
            HumanMessage(
                content="I need to increase my credit limit and check why my last transaction at Walmart was declined."
            ),
            AIMessage(
                content="Let's check the declined transaction first, the $234.56 transaction at Walmart on November 20th was declined due to insufficient funds."
            ),
            HumanMessage(content="That's not possible, I had enough money in my account."),
            AIMessage(
                content="I understand your concern. Let me check your account details... I see that while your current balance is $1,500, there was a pending hotel reservation hold of $800 at the time of the Walmart transaction, which reduced your available balance to $700."
            ),
            HumanMessage(content="Oh, I forgot about the hotel booking."),
            AIMessage(content="Is there anything else I can assist you with?"),
            HumanMessage(content="What about increasing my credit limit?"),
            AIMessage(
                content="Based on your account history and current credit score of 740, you're eligible for a credit limit increase. The maximum increase available is $2,000. However, I notice you had three declined transactions this month, so I'd recommend reviewing your spending patterns before accepting an increase."
            ),
        ]
    )

    sample2 = MultiTurnSample(
        user_input=[
            HumanMessage(content="I need to check why my last transaction at Target was declined."),
            AIMessage(
                content="Let's look at the declined transaction. The $145.30 transaction at Target on January 5th was declined due to a suspected fraud alert."
            ),
            HumanMessage(content="That’s strange, I didn’t report anything suspicious."),
            AIMessage(
                content="I understand. Let me look deeper. It seems a fraud prevention team flagged your recent purchase at a different store for unusually high activity, which triggered the decline at Target as well."
            ),
            HumanMessage(content="Ah, that makes sense. I did shop a lot that day."),
            AIMessage(content="Is there anything else I can assist you with?"),
        ]
    )

    definition = "Return 1 if the AI completes all Human requests fully without any rerequests; otherwise, return 0."

    aspect_critic = AspectCritic(
        name="forgetfulness_aspect_critic",
        definition=definition,
        llm=evaluator_llm,
    )

    result = evaluate(
        dataset=EvaluationDataset(samples=[sample1, sample2]),
        metrics=[aspect_critic],
    )
    frame = result.to_pandas()

    assert list(frame["forgetfulness_aspect_critic"]) == [0, 1]
    judged = [fenced(request, "response") for request in loop.sent("aspect_critic")]
    assert any(
        text.startswith("Human: I need to increase my credit limit")
        and "AI: Is there anything else I can assist you with?" in text
        for text in judged
    )


def test_tool_call_accuracy_and_f1_legacy_examples():
    from assay import AIMessage, HumanMessage, MultiTurnSample, ToolCall, ToolCallAccuracy

    sample = MultiTurnSample(
        user_input=[
            HumanMessage(content="What's the weather in New York?"),
            AIMessage(
                content="Checking weather...",
                tool_calls=[ToolCall(name="weather_check", args={"location": "New York"})],
            ),
        ],
        reference_tool_calls=[
            ToolCall(name="weather_check", args={"location": "New York"}),
        ],
    )

    scorer = ToolCallAccuracy()
    score = asyncio.run(
        scorer.multi_turn_ascore(sample)
    )  # `await scorer.multi_turn_ascore(sample)`
    assert score == 1.0

    from assay import ToolCallF1

    sample = MultiTurnSample(
        user_input=[
            HumanMessage(content="What's the weather like in Paris today?"),
            AIMessage(
                content="Let me check that for you.",
                tool_calls=[ToolCall(name="weather_check", args={"location": "Paris"})],
            ),
        ],
        reference_tool_calls=[
            ToolCall(name="weather_check", args={"location": "Paris"}),
            ToolCall(name="uv_index_lookup", args={"location": "Paris"}),
        ],
    )
    scorer = ToolCallF1()
    assert asyncio.run(scorer.multi_turn_ascore(sample)) == pytest.approx(
        0.67, abs=0.005
    )  # TP=1, FP=0, FN=1


# -- results -----------------------------------------------------------------------------------------------
def test_results_scores_pandas_tokens_and_cost(loop):
    loop.judge(
        {"aspect_critic": lambda request: "yes" if "Paris" in fenced(request, "response") else "no"}
    )
    gpt4o = loop.llm()  # swapped: ChatOpenAI(model="gpt-4o")
    from assay import EvaluationDataset

    eval_dataset = EvaluationDataset.from_list(
        [  # filled in: two rows in place of amnesty_qa
            {"user_input": "Capital of France?", "response": "Paris.", "reference": "Paris"},
            {"user_input": "Capital of Italy?", "response": "Milan.", "reference": "Rome"},
        ]
    )

    from assay import AspectCriticWithReference

    metric = AspectCriticWithReference(
        name="answer_correctness",
        definition="is the response correct compared to reference",
    )

    from assay import evaluate
    from assay.cost import get_token_usage_for_openai

    results = evaluate(
        eval_dataset[:5],
        metrics=[metric],
        llm=gpt4o,
        token_usage_parser=get_token_usage_for_openai,
    )
    usage = results.total_tokens()
    cost = results.total_cost(cost_per_input_token=5 / 1e6, cost_per_output_token=15 / 1e6)

    assert usage.input_tokens > 0 and usage.output_tokens > 0
    assert cost == pytest.approx((usage.input_tokens * 5 + usage.output_tokens * 15) / 1e6)
    # per-row scores, as Ragas' result.scores, and the pandas view
    import pandas as pd

    eval_scores_df = pd.DataFrame(results.scores)
    assert list(eval_scores_df["answer_correctness"]) == [1, 0]
    assert list(results.to_pandas()["answer_correctness"]) == [1, 0] and results[
        "answer_correctness"
    ] == [1, 0]


# -- RunConfig -------------------------------------------------------------------------------------------
def test_run_config_parameters_and_usage_with_evaluate(loop):
    loop.judge({"supported": all_yes})
    from assay import RunConfig

    run_config = RunConfig(
        timeout=180,  # Max seconds per operation (default: 180)
        max_retries=10,  # Retry attempts (default: 10)
        max_wait=60,  # Max seconds between retries (default: 60)
        max_workers=16,  # Concurrent workers (default: 16)
        log_tenacity=False,  # Log retry attempts (default: False)
        seed=42,  # Random seed (default: 42)
    )
    assert run_config.retry_policy().max_attempts == 10

    from assay import EvaluationDataset, Faithfulness, evaluate

    eval_dataset = EvaluationDataset.from_list(
        [
            {
                "response": "Paris is the capital.",  # filled in
                "retrieved_contexts": ["Paris is the capital of France."],
            }
        ]
    )

    # Legacy LLM setup
    llm = loop.llm()  # swapped: LangchainLLMWrapper(ChatOpenAI(model="gpt-4o"))

    # Configure run settings
    run_config = RunConfig(max_workers=64, timeout=60)

    # Use with evaluate
    results = evaluate(
        dataset=eval_dataset,
        metrics=[Faithfulness(llm=llm)],
        run_config=run_config,
    )
    assert results["faithfulness"] == [1.0]


# -- cancelling (return_executor) ------------------------------------------------------------------------
def test_cancellable_evaluation_snippets():
    from tests.engine.scripted_metrics import ScriptedMetric

    from assay import evaluate
    from assay import EvaluationDataset

    # Your dataset and metrics
    dataset = EvaluationDataset.from_list([{"response": "0.5"}, {"response": "1"}])  # filled in
    metrics = [ScriptedMetric()]  # filled in

    # Get executor instead of running evaluation immediately
    executor = evaluate(
        dataset=dataset,
        metrics=metrics,
        return_executor=True,  # Key parameter
    )
    assert not executor.is_cancelled()
    assert executor.results() == [0.5, 1.0]  # This blocks until completion

    # Partial Results
    executor = evaluate(dataset=dataset, metrics=metrics, return_executor=True)
    executor.cancel()
    try:
        results = executor.results()
        print(f"Completed {len(results)} evaluations")
    except Exception as e:
        if executor.is_cancelled():
            print("Evaluation was cancelled - may have partial results")
        else:
            print(f"Evaluation failed: {e}")
    assert executor.is_cancelled() and results == [None, None]


def test_timeout_pattern():
    from tests.engine.scripted_metrics import ScriptedMetric

    from assay import evaluate

    def evaluate_with_timeout(dataset, metrics, timeout_seconds=300):
        """Run evaluation with automatic timeout."""
        # Get cancellable executor
        executor = evaluate(dataset=dataset, metrics=metrics, return_executor=True)

        results = None
        exception = None

        def run_evaluation():
            nonlocal results, exception
            try:
                results = executor.results()
            except Exception as e:
                exception = e

        # Start evaluation in background thread
        thread = threading.Thread(target=run_evaluation)
        thread.start()

        # Wait for completion or timeout
        thread.join(timeout=timeout_seconds)

        if thread.is_alive():
            print(f"Evaluation exceeded {timeout_seconds}s timeout, cancelling...")
            executor.cancel()
            thread.join(timeout=10)  # Custom timeout as per need
            return None, "timeout"

        return results, exception

    quick = [{"response": "0.5"}]  # filled in
    slow = [{"response": "sleep:60"}]  # filled in
    assert evaluate_with_timeout(quick, [ScriptedMetric()], timeout_seconds=30) == ([0.5], None)
    began = time.perf_counter()
    assert evaluate_with_timeout(slow, [ScriptedMetric()], timeout_seconds=0.3) == (None, "timeout")
    assert time.perf_counter() - began < 10  # the cancelled run stopped, the thread ended


# -- callbacks ---------------------------------------------------------------------------------------------
def test_custom_langchain_callback_handler(loop):
    loop.judge({"supported": all_yes})
    from langchain_core.callbacks import BaseCallbackHandler

    class Tracer(
        BaseCallbackHandler
    ):  # filled in: "write your own custom callbacks using BaseCallbackHandler"
        def __init__(self):
            self.chains = []

        def on_chain_start(self, serialized, inputs, **kwargs):
            self.chains.append(serialized["name"])

    tracer = Tracer()  # swapped: LangChainTracer(project_name="callback-experiments")

    from assay import EvaluationDataset
    from assay import LLMContextRecall, evaluate

    dataset = EvaluationDataset.from_list(
        [
            {
                "user_input": "Capital of France?",
                "reference": "Paris is the capital.",
                "retrieved_contexts": ["Paris is the capital of France."],
            }
        ]
    )  # filled in
    result = evaluate(dataset, metrics=[LLMContextRecall()], callbacks=[tracer])

    assert "'context_recall': 1.0000" in repr(result)
    assert tracer.chains == ["ragas evaluation", "row 0", "context_recall"]


def test_set_logging_level_snippet(caplog):
    # if you want to see the cache in action, set the logging level to debug
    import logging

    from assay import set_logging_level

    set_logging_level("ragas.cache", logging.DEBUG)

    assert logging.getLogger("assay.cache").level == logging.DEBUG
    logging.getLogger("assay.cache").setLevel(logging.NOTSET)


# -- llm_factory's structured output ---------------------------------------------------------------
def test_llm_generate_with_a_response_model_returns_the_instance(loop):
    from pydantic import BaseModel

    from tests.models.fake_openai import ok

    loop.server.default = ok('{"answer": "Paris", "confidence": 0.9}')
    llm = loop.llm()  # swapped: llm = llm_factory("gpt-4o-mini", client=OpenAI())

    class Answer(BaseModel):
        answer: str
        confidence: float

    result = llm.generate("What is the capital of France?", response_model=Answer)
    assert isinstance(result, Answer) and result.answer == "Paris"

    async def main():
        return await llm.agenerate("What is the capital of France?", response_model=Answer)

    assert asyncio.run(main()).confidence == 0.9
    # assay's own spelling keeps the whole response (usage, every generation)
    response = llm.generate("What is the capital of France?", Answer)
    assert response.parsed == result and response.usage.requests >= 1
