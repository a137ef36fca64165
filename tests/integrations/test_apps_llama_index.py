"""Evaluating a real llama-index-core query engine (a VectorStoreIndex over Documents with
LlamaIndex's MockEmbedding, answered by a MockLLM subclass that reads its prompt), and converting
real agent-workflow events to messages. The judge is scripted (see tests/evaluator/judge.py)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.agent.workflow import (
    AgentInput,
    AgentOutput,
    AgentStream,
    ToolCall,
    ToolCallResult,
)
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import (
    ChatMessage,
    CompletionResponse,
    ImageBlock,
    MockLLM,
    TextBlock,
)
from llama_index.core.tools import ToolOutput, ToolSelection

from assay import evaluate as assay_evaluate
from assay.errors import DataError, UsageError
from assay.integrations.llama_index import (
    LlamaIndexLLMWrapper,
    convert_to_ragas_messages,
    evaluate,
)
from assay.metrics.classic.tool_call_accuracy import ToolCallAccuracy
from assay.metrics.rag.faithfulness import Faithfulness
from assay.schema.messages import AIMessage, HumanMessage, ToolMessage
from assay.schema.messages import ToolCall as AssayToolCall
from assay.schema.outcome import Error
from tests.evaluator.judge import reading_judge

DOCUMENTS = [
    Document(text="The Rhine flows through Basel."),
    Document(text="The Danube flows through Vienna."),
]


class FirstContextLLM(MockLLM):
    """Answers with the first line of the context in its prompt; fails on 'explode', makes
    something up on 'guess' (a real LlamaIndex LLM: the query engine calls its complete())."""

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        query = prompt.split("Query:")[-1]
        if "explode" in query:
            raise ConnectionError("the answering model is unreachable")
        if "guess" in query:
            return CompletionResponse(text="The Rhine flows through Paris.")
        context = re.search(r"-{5,}\n(.*?)\n", prompt).group(1)
        return CompletionResponse(text=context)

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        text = self.complete(prompt).text
        words = text.split(" ")
        for n, word in enumerate(words):
            piece = word if n == 0 else " " + word
            yield CompletionResponse(text=" ".join(words[: n + 1]), delta=piece)


def query_engine() -> Any:
    index = VectorStoreIndex.from_documents(DOCUMENTS, embed_model=MockEmbedding(embed_dim=8))
    return index.as_query_engine(llm=FirstContextLLM(), similarity_top_k=2)


def test_a_query_engine_is_queried_per_row_and_scored():
    judge, provider = reading_judge()
    rows = [
        {"user_input": "Where does the river flow?"},
        {"user_input": "explode"},
        {"user_input": "guess where the Rhine goes"},
    ]
    result = evaluate(
        query_engine=query_engine(),
        metrics=[Faithfulness()],
        dataset=rows,
        llm=judge,
        show_progress=False,
    )
    assert result["faithfulness"] == [1.0, None, 0.0]
    contexts = result.dataset[0].retrieved_contexts
    assert sorted(contexts) == sorted(d.text for d in DOCUMENTS)  # source_nodes' texts
    assert result.dataset[0].response == contexts[0]
    failed = result.outcome(1, "faithfulness")
    assert isinstance(failed, Error) and failed.error_type == "ApplicationError"
    assert "ConnectionError: the answering model is unreachable" in failed.message
    assert "query engine" in failed.message
    assert len(provider.requests) == 2  # the failed row never reached the judge


def test_streaming_engines_and_llamaindex_judges_work_too():
    index = VectorStoreIndex.from_documents(DOCUMENTS, embed_model=MockEmbedding(embed_dim=8))
    streaming = index.as_query_engine(llm=FirstContextLLM(), similarity_top_k=1, streaming=True)
    result = evaluate(
        streaming,
        [{"user_input": "which river?", "reference": "x"}],
        ["bleu_score"],
        show_progress=False,
    )
    (sample,) = result.dataset
    assert sample.response and sample.response == sample.retrieved_contexts[0]
    # the names Ragas has in this module are the model wrappers assay already has
    wrapped = LlamaIndexLLMWrapper(MockLLM(max_tokens=2))
    assert wrapped.generate("hi").text == "text text"


def test_every_row_failing_still_returns_every_row():
    result = evaluate(
        query_engine(),
        [{"user_input": "explode"}, {"user_input": "explode again"}],
        [Faithfulness()],
        llm=reading_judge()[0],
        show_progress=False,
    )
    assert result["faithfulness"] == [None, None]
    assert all(result.outcome(i, "faithfulness").error_type == "ApplicationError" for i in (0, 1))
    with pytest.raises(UsageError, match="query engine"):
        evaluate(object(), [{"user_input": "q"}], [Faithfulness()], llm=reading_judge()[0])


def agent_run() -> list[Any]:
    """The events of one FunctionAgent-style run: ask, call a tool, read its result, answer."""
    call = ToolSelection(tool_id="call-1", tool_name="add_item", tool_kwargs={"item": "milk"})
    result = ToolOutput(
        tool_name="add_item", content="added milk", raw_input={"item": "milk"}, raw_output="ok"
    )
    return [
        AgentInput(
            input=[
                ChatMessage(role="system", content="You keep a shopping list."),
                ChatMessage(
                    role="user", blocks=[TextBlock(text="Add milk"), TextBlock(text="please")]
                ),
            ],
            current_agent_name="list_manager",
        ),
        AgentStream(delta="", response="", current_agent_name="list_manager"),
        AgentOutput(
            response=ChatMessage(role="assistant", content=""),
            tool_calls=[call],
            current_agent_name="list_manager",
        ),
        ToolCall(tool_name="add_item", tool_kwargs={"item": "milk"}, tool_id="call-1"),
        ToolCallResult(
            tool_name="add_item",
            tool_kwargs={"item": "milk"},
            tool_id="call-1",
            tool_output=result,
            return_direct=False,
        ),
        AgentInput(
            input=[ChatMessage(role="user", content="Add milk")], current_agent_name="list_manager"
        ),
        AgentOutput(
            response=ChatMessage(role="assistant", content="Milk is on the list."),
            tool_calls=[call],  # repeated by the workflow: counted once
            current_agent_name="list_manager",
        ),
    ]


def test_agent_events_become_messages_and_score():
    messages = convert_to_ragas_messages(agent_run())
    assert messages == [
        HumanMessage(content="Add milk\nplease"),
        AIMessage(content="", tool_calls=[AssayToolCall(name="add_item", args={"item": "milk"})]),
        ToolMessage(content="added milk"),
        AIMessage(content="Milk is on the list."),
    ]
    direct = agent_run()[:5]
    direct[4] = direct[4].model_copy(update={"return_direct": True})
    assert convert_to_ragas_messages(direct)[-1] == AIMessage(content="added milk")

    scored = assay_evaluate(
        [
            {
                "user_input": messages,
                "reference_tool_calls": [{"name": "add_item", "args": {"item": "milk"}}],
            }
        ],
        [ToolCallAccuracy()],
        show_progress=False,
    )
    assert scored["tool_call_accuracy"] == [1.0]
    with pytest.raises(DataError, match="index 0: expected a LlamaIndex workflow event"):
        convert_to_ragas_messages(["not an event"])
    with_image = AgentInput(
        input=[
            ChatMessage(
                role="user",
                blocks=[TextBlock(text="what is this?"), ImageBlock(url="http://x/y.png")],
            )
        ],
        current_agent_name="a",
    )
    with pytest.raises(DataError, match=r"blocks\[1\].*ImageBlock"):
        convert_to_ragas_messages([with_image])
    # a tool result answering no tool call is refused, not scored as a conversation
    orphan = agent_run()[4]
    with pytest.raises(DataError, match="out of order"):
        convert_to_ragas_messages([agent_run()[0], orphan])
