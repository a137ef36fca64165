"""LlamaIndex: evaluate a query engine, convert agent events, wrap models (extra `assay[llamaindex]`).

    from assay.integrations.llama_index import evaluate
    result = evaluate(query_engine, dataset, [Faithfulness()], llm=judge)

`evaluate` queries the engine once per row through `assay.integrations._apps` (concurrently,
each call bounded in time, a failed query a typed `ApplicationError` for its row); each answer
becomes the row's `response` and its `source_nodes` the row's `retrieved_contexts`, then the rows
are scored. The judge and embeddings may be LlamaIndex models (wrapped) or assay's.

`convert_to_ragas_messages(events)` turns the events of a LlamaIndex agent workflow run
(`AgentInput`, `AgentOutput`, `ToolCallResult`) into assay's conversation messages for
multi-turn metrics.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from assay._util.deps import require
from assay._util.sync import run_sync
from assay.errors import DataError, UsageError
from assay.integrations._apps import AppAnswer, UnreadableAppOutput, aevaluate_app, in_thread
from assay.integrations._messages import (
    ConvertedMessage,
    bad_input,
    checked,
    enum_value,
    tool_call,
)
from assay.metrics.base import Metric
from assay.models.providers.llamaindex import LlamaIndexEmbeddingsWrapper, LlamaIndexLLMWrapper
from assay.schema.messages import AIMessage, HumanMessage, ToolMessage
from assay.schema.result import EvaluationResult
from assay.schema.samples import SingleTurnSample

require("llama_index.core", extra="llamaindex", package="llama-index-core", feature="LlamaIndex")

from llama_index.core.agent.workflow import AgentInput, AgentOutput, ToolCallResult  # noqa: E402
from llama_index.core.base.llms.types import TextBlock  # noqa: E402
from llama_index.core.base.response.schema import (  # noqa: E402
    AsyncStreamingResponse,
    PydanticResponse,
    StreamingResponse,
)
from llama_index.core.schema import MetadataMode  # noqa: E402
from llama_index.core.workflow import Event  # noqa: E402


async def _text_of_response(response: Any) -> str:
    """The answer text of a query engine's response (plain, streaming or structured)."""
    if isinstance(response, AsyncStreamingResponse):
        response = await response.get_response()
    elif isinstance(response, (StreamingResponse, PydanticResponse)):
        response = response.get_response()
    if isinstance(response, str):
        return response
    answer = getattr(response, "response", None)
    if not isinstance(answer, str):
        raise UnreadableAppOutput(
            f"the query engine returned a {type(response).__name__} with no answer text "
            f"(response is {type(answer).__name__})"
        )
    return answer


def _contexts_of_response(response: Any) -> list[str] | None:
    nodes = getattr(response, "source_nodes", None)
    if nodes is None:
        return None
    return [node.node.get_content(metadata_mode=MetadataMode.NONE) for node in nodes]


def query_engine_asker(query_engine: Any) -> Any:
    """How to ask a query engine one row's question (`aquery`, else `query` in a thread)."""
    asynchronous = callable(getattr(query_engine, "aquery", None))
    if not asynchronous and not callable(getattr(query_engine, "query", None)):
        raise UsageError(
            f"query_engine must be a LlamaIndex query engine (with query/aquery), got "
            f"{type(query_engine).__name__}"
        )

    async def ask(sample: SingleTurnSample) -> AppAnswer:
        if asynchronous:
            response = await query_engine.aquery(sample.user_input)
        else:
            response = await in_thread(query_engine.query, sample.user_input)
        return AppAnswer(
            retrieved_contexts=_contexts_of_response(response),
            response=await _text_of_response(response),
        )

    return ask


async def aevaluate(
    query_engine: Any,
    dataset: Any,
    metrics: Sequence[Metric | str] | None = None,
    llm: Any = None,
    embeddings: Any = None,
    callbacks: Any = None,
    in_ci: bool = False,
    run_config: Any = None,
    batch_size: int | None = None,
    token_usage_parser: Any = None,
    raise_exceptions: bool = False,
    column_map: Any = None,
    show_progress: bool = True,
    **options: Any,
) -> EvaluationResult:
    """Query `query_engine` with every row's `user_input`, then score the answers.

    Ragas' parameters in Ragas' order (`in_ci` and `token_usage_parser` are accepted and change
    nothing: judged calls are deterministic and usage is always metered); `options` are those of
    `aevaluate_app` (`app_concurrency`, `app_timeout`, `max_concurrency`, `timeout`, `budget`...).
    """
    del in_ci, token_usage_parser
    options.setdefault("app_name", "query engine")
    return await aevaluate_app(
        query_engine_asker(query_engine),
        dataset,
        metrics,
        llm=llm,
        embeddings=embeddings,
        callbacks=callbacks,
        run_config=run_config,
        batch_size=batch_size,
        raise_exceptions=raise_exceptions,
        column_map=column_map,
        show_progress=show_progress,
        **options,
    )


def evaluate(
    query_engine: Any, dataset: Any = None, metrics: Any = None, **options: Any
) -> EvaluationResult:
    """Synchronous twin of `aevaluate` (same parameters), as Ragas'
    `ragas.integrations.llama_index.evaluate(query_engine=, metrics=, dataset=)`."""
    return run_sync(aevaluate(query_engine, dataset, metrics, **options))


# -- agent events -> messages ---------------------------------------------------------------
def _user_text(event: AgentInput, index: int) -> str | None:
    """The text of the event's last user message; a part that is not text (an image, a file)
    is refused rather than dropped, since the turn without it is not what the user sent."""
    for message in reversed(event.input):
        if enum_value(message.role) != "user":
            continue
        parts = []
        for position, block in enumerate(message.blocks):
            if not isinstance(block, TextBlock):
                raise bad_input(
                    index,
                    "AgentInput event",
                    f"input[-1].blocks[{position}]",
                    f"is a {type(block).__name__}; only text can become message content",
                )
            parts.append(block.text)
        return "\n".join(parts)
    return None


def convert_to_ragas_messages(events: Iterable[Any]) -> list[ConvertedMessage]:
    """The conversation in a LlamaIndex agent run's events, as assay messages.

    `AgentInput` is the user's turn (the text of its last user message), except right after a
    tool result, where the agent is only reading that result; `AgentOutput` is the assistant's
    turn, with the tool calls it asked for (each tool call id once across the run);
    `ToolCallResult` is the tool's answer (an assistant message when the tool returns directly
    to the user). Other workflow events (streamed deltas, `ToolCall` announcements) carry
    nothing new. Anything that is not a workflow event is a `DataError` naming its index."""
    messages: list[ConvertedMessage] = []
    seen_calls: set[str] = set()
    for index, event in enumerate(events):
        if isinstance(event, AgentInput):
            if messages and isinstance(messages[-1], ToolMessage):
                continue
            text = _user_text(event, index)
            if text is not None:
                messages.append(HumanMessage(content=text))
        elif isinstance(event, AgentOutput):
            calls = []
            for position, selection in enumerate(event.tool_calls):
                if selection.tool_id in seen_calls:
                    continue
                seen_calls.add(selection.tool_id)
                calls.append(
                    tool_call(
                        selection.tool_name,
                        dict(selection.tool_kwargs),
                        index=index,
                        what="AgentOutput event",
                        field=f"tool_calls[{position}].tool_name",
                    )
                )
            content = event.response.content or ""
            messages.append(AIMessage(content=content, tool_calls=calls or None))
        elif isinstance(event, ToolCallResult):
            output = event.tool_output
            text = str(output.content or "") if output is not None else ""
            if event.return_direct:
                messages.append(AIMessage(content=text))
            else:
                messages.append(ToolMessage(content=text))
        elif not isinstance(event, Event):
            raise DataError(
                f"expected a LlamaIndex workflow event, got {type(event).__name__}",
                row=index,
                row_is_index=True,
            )
    return checked(messages)


__all__ = [
    "LlamaIndexEmbeddingsWrapper",
    "LlamaIndexLLMWrapper",
    "aevaluate",
    "convert_to_ragas_messages",
    "evaluate",
    "query_engine_asker",
]
