"""A LlamaIndex function-calling LLM over an assay model, so that the agent runs on the embedded
offline model (or any model string assay knows) too.

With a LlamaIndex LLM of your own (`llama_index.llms.openai.OpenAI`, Gemini, ...), pass that to
`make_agent` instead and leave this file out. Here each turn asks the model for one structured
answer, the tool calls to make or the final answer, built from the tools' own argument schemas.
It covers what `FunctionAgent(streaming=False)` uses: `achat` with tools, and reading the calls.
"""

from __future__ import annotations

import json
import operator
import uuid
from functools import reduce
from typing import Any, Literal

from llama_index.core.llms import ChatMessage, ChatResponse, LLMMetadata
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.llms.llm import ToolSelection
from pydantic import BaseModel, create_model


def _step_schema(tools: list) -> type[BaseModel]:
    calls = [
        create_model(
            f"{tool.metadata.name}_call",
            name=(Literal[tool.metadata.name], ...),
            arguments=(tool.metadata.fn_schema, ...),
        )
        for tool in tools
    ]
    # `done` comes first, so the model decides whether to stop before it writes any call (a
    # small model asked for the calls first keeps calling tools until the iteration limit).
    return create_model(
        "AgentStep",
        done=(bool, ...),  # true: the request is handled, or the user must answer a question
        answer=(str | None, None),  # the reply to the user, when done
        tool_calls=(list[reduce(operator.or_, calls)], []),  # any of the tools, when not done
    )


def _as_chat(message: ChatMessage) -> dict[str, str]:
    """LlamaIndex's messages as plain chat turns: tool calls and results are spelled out."""
    calls = message.additional_kwargs.get("tool_calls")
    if calls:
        text = "; ".join(f"{call['name']}({json.dumps(call['arguments'])})" for call in calls)
        return {"role": "assistant", "content": f"Calling tools: {text}"}
    if message.role.value == "tool":
        return {
            "role": "user",
            "content": f"Tool result: {message.content}\n"
            "If that completes the request, set done and reply to the user.",
        }
    return {"role": message.role.value, "content": message.content or ""}


class AssayLLM(FunctionCallingLLM):
    model: Any  # an assay LLM, e.g. assay.models.llm_factory("local")

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            model_name=str(self.model), is_chat_model=True, is_function_calling_model=True
        )

    def _prepare_chat_with_tools(self, tools, user_msg=None, chat_history=None, **kwargs):
        messages = list(chat_history or [])
        if user_msg is not None:
            messages.append(
                ChatMessage(role="user", content=user_msg)
                if isinstance(user_msg, str)
                else user_msg
            )
        return {"messages": messages, "tools": tools}

    async def achat(self, messages, tools=(), **kwargs) -> ChatResponse:
        chat = [_as_chat(message) for message in messages]
        if not tools:
            reply = await self.model.agenerate(chat)
            return ChatResponse(message=ChatMessage(role="assistant", content=reply.text))
        step = (await self.model.agenerate(chat, schema=_step_schema(list(tools)))).parsed
        calls = [
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "name": c.name,
                "arguments": c.arguments.model_dump(),
            }
            for c in ([] if step.done else step.tool_calls)
        ]
        return ChatResponse(
            message=ChatMessage(
                role="assistant",
                content="" if calls else (step.answer or ""),
                additional_kwargs={"tool_calls": calls} if calls else {},
            )
        )

    def get_tool_calls_from_response(self, response, error_on_no_tool_call=True, **kwargs):
        calls = response.message.additional_kwargs.get("tool_calls", [])
        if not calls and error_on_no_tool_call:
            raise ValueError(f"expected a tool call, got {response.message.content!r}")
        return [
            ToolSelection(tool_id=call["id"], tool_name=call["name"], tool_kwargs=call["arguments"])
            for call in calls
        ]

    # The synchronous and streaming methods: FunctionAgent(streaming=False) never calls them.
    def _async_only(self, *args, **kwargs):
        raise NotImplementedError("AssayLLM serves FunctionAgent(streaming=False): use achat")

    chat = complete = stream_chat = stream_complete = _async_only
    acomplete = astream_chat = astream_complete = _async_only
