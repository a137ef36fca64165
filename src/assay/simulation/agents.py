"""The agent under test: anything that takes the conversation so far and returns its next turn.

`as_agent` turns what the caller gives into one shape, an async function from the conversation
(assay messages: `HumanMessage`, `AIMessage` with tool calls, `ToolMessage`) to the agent's raw
reply, plus a name recorded in the run directory's fingerprint:

- a Python callable, sync or async (a sync one runs in a worker thread, so a slow agent does not
  block the other conversations, and is abandoned when its turn times out);
- an `HttpAgent` (`assay.simulation.http_agent`);
- a LangGraph graph, or any LangChain runnable that takes and returns `{"messages": [...]}`
  (`LangGraphAgent`, chosen for objects from `langgraph` or `langchain_core`);
- an OpenAI Agents SDK `Agent` (`OpenAIAgentsAgent`, run with `agents.Runner`).

`read_reply` reads the reply: a string, an `AIMessage`, a message dict (`{"type": "ai", ...}` or
OpenAI's `{"role": "assistant", ...}`), LangChain message objects, or a list of these with tool
calls and tool outputs, ending with the assistant's message. Anything else is an
`UnreadableAgentReply` naming what was returned.
"""

from __future__ import annotations

import functools
import inspect
import itertools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import anyio.to_thread
from pydantic import ValidationError

from assay.schema.messages import (
    AIMessage,
    HumanMessage,
    Message,
    ToolCall,
    ToolMessage,
    check_message_order,
)
from assay.simulation.errors import UnreadableAgentReply

Conversation = list[HumanMessage | AIMessage | ToolMessage]
AgentFunction = Callable[[Conversation], Awaitable[Any]]

_ROLES = {"assistant": "ai", "ai": "ai", "tool": "tool", "user": "human", "human": "human"}


def _module_of(value: Any) -> str:
    return type(value).__module__.split(".")[0]


def agent_name(agent: Any) -> str:
    """A stable name for the agent (its URL, its module and qualified name, or its type)."""
    url = getattr(agent, "url", None)
    if isinstance(url, str):
        return url
    target = agent.func if isinstance(agent, functools.partial) else agent
    qualified = getattr(target, "__qualname__", None)
    module = getattr(target, "__module__", None)
    if isinstance(qualified, str) and isinstance(module, str):
        return f"{module}:{qualified}"
    return f"{type(agent).__module__}:{type(agent).__qualname__}"


def as_agent(agent: Any) -> AgentFunction:
    """The async function that asks `agent` for its next turn (see the module docstring)."""
    from assay.errors import UsageError

    if _module_of(agent) in ("langgraph", "langchain_core", "langchain") and hasattr(
        agent, "ainvoke"
    ):
        return LangGraphAgent(agent)
    if _module_of(agent) == "agents" and type(agent).__name__ == "Agent":
        return OpenAIAgentsAgent(agent)
    if _module_of(agent) == "llama_index" and hasattr(agent, "run"):
        return LlamaIndexAgent(agent)
    if not callable(agent):
        raise UsageError(
            f"agent must be a function taking the conversation (a list of messages), an HttpAgent, "
            f"a LangGraph graph, an OpenAI Agents Agent or a LlamaIndex agent workflow; got "
            f"{type(agent).__name__}"
        )
    call = getattr(agent, "__call__", None)  # noqa: B004 (an object's async __call__)
    if inspect.iscoroutinefunction(agent) or inspect.iscoroutinefunction(call):
        return _awaiting(agent)
    return _threaded(agent)


def _awaiting(agent: Callable[..., Any]) -> AgentFunction:
    async def ask(conversation: Conversation) -> Any:
        return await agent(conversation)

    return ask


def _threaded(agent: Callable[..., Any]) -> AgentFunction:
    async def ask(conversation: Conversation) -> Any:
        reply = await anyio.to_thread.run_sync(agent, conversation, abandon_on_cancel=True)
        if inspect.isawaitable(reply):  # a plain function that returned a coroutine
            reply = await reply
        return reply

    return ask


# -- reading a reply --------------------------------------------------------------------------
def _describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:80]}{'...' if len(text) > 80 else ''}"


def _one_message(item: Any, position: int) -> AIMessage | ToolMessage | HumanMessage:
    if isinstance(item, (AIMessage, ToolMessage, HumanMessage)):
        return item
    if isinstance(item, str):
        return AIMessage(content=item)
    if isinstance(item, Mapping):
        data = dict(item)
        if "type" not in data and data.get("role") in _ROLES:
            data = _from_openai(data)
        try:
            message = Message.model_validate(data)
        except ValidationError as exc:
            raise UnreadableAgentReply(
                f"item {position} of the reply is not a message: {exc.errors()[0]['msg']}"
            ) from None
        if isinstance(message, (AIMessage, ToolMessage, HumanMessage)):
            return message
    if _module_of(item) in ("langchain_core", "langchain") and hasattr(item, "type"):
        from assay.integrations.langgraph import convert_to_ragas_messages

        converted = convert_to_ragas_messages([item])
        if len(converted) == 1:
            return converted[0]
    raise UnreadableAgentReply(
        f"item {position} of the reply is a {_describe(item)}; a reply is a string, an AIMessage, "
        "a message dict or a list of messages"
    )


def _from_openai(data: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's chat shape to assay's: role -> type, tool_calls' function name and arguments."""
    import json

    kind = _ROLES[data["role"]]
    out: dict[str, Any] = {"type": kind, "content": data.get("content") or ""}
    calls = []
    for call in data.get("tool_calls") or []:
        function = call.get("function", call) if isinstance(call, Mapping) else {}
        arguments = function.get("arguments", function.get("args", {}))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                raise UnreadableAgentReply(
                    f"tool call {function.get('name')!r} has arguments that are not JSON: "
                    f"{arguments[:80]!r}"
                ) from None
        calls.append({"name": function.get("name"), "args": arguments})
    if calls and kind == "ai":
        out["tool_calls"] = calls
    return out


def read_reply(reply: Any) -> list[AIMessage | ToolMessage]:
    """The agent's turn as messages; `UnreadableAgentReply` when it is not one."""
    if isinstance(reply, (str, AIMessage, Mapping)):
        items: Sequence[Any] = [reply]
    elif isinstance(reply, (list, tuple)):
        items = reply
    else:
        raise UnreadableAgentReply(
            f"the agent returned a {_describe(reply)}; return a string, an AIMessage or a list "
            "of messages (AIMessage with tool_calls, ToolMessage, then the final AIMessage)"
        )
    if not items:
        raise UnreadableAgentReply("the agent returned an empty list of messages")
    messages = [_one_message(item, position) for position, item in enumerate(items)]
    turn: list[AIMessage | ToolMessage] = []
    for position, message in enumerate(messages):
        if isinstance(message, HumanMessage):
            raise UnreadableAgentReply(
                f"item {position} of the reply is a user message; the agent writes only its own "
                "messages and tool outputs"
            )
        turn.append(message)
    try:
        check_message_order(list(turn))
    except ValueError as exc:
        raise UnreadableAgentReply(f"the reply's messages are out of order: {exc}") from None
    last = turn[-1]
    if not isinstance(last, AIMessage):
        raise UnreadableAgentReply(
            "the reply ends with a tool output; it must end with the agent's own message"
        )
    if not last.content.strip() and not last.tool_calls:
        raise UnreadableAgentReply("the agent's reply is empty (no text and no tool call)")
    return turn


def reply_key(turn: list[AIMessage | ToolMessage]) -> str:
    """What makes two turns the same reply: the final text and every tool call."""
    calls = [
        (call.name, sorted(call.args.items(), key=lambda kv: kv[0]))
        for message in turn
        if isinstance(message, AIMessage)
        for call in message.tool_calls or []
    ]
    return repr((turn[-1].content.strip(), calls))


def repeated_call(turn: list[AIMessage | ToolMessage], limit: int) -> ToolCall | None:
    """A tool call made `limit` times in a row within one turn (same name and arguments)."""
    calls = [
        call
        for message in turn
        if isinstance(message, AIMessage)
        for call in message.tool_calls or []
    ]
    run = 1
    for previous, call in itertools.pairwise(calls):
        run = run + 1 if call == previous else 1
        if run >= limit:
            return call
    return None


# -- framework agents -------------------------------------------------------------------------
def _ids_for(conversation: Conversation) -> list[str]:
    return [f"assay-{index}" for index in range(len(conversation))]


class LangGraphAgent:
    """A LangGraph graph (or a LangChain runnable) with a `messages` state: each turn it is
    invoked with the whole conversation as LangChain message dicts and the messages it adds are
    read with `assay.integrations.langgraph.convert_to_ragas_messages`.

    Give the graph no checkpointer (or a fresh thread per conversation): the conversation is
    passed in full every turn."""

    def __init__(
        self, graph: Any, *, input_key: str = "messages", config: dict[str, Any] | None = None
    ) -> None:
        self.graph = graph
        self.input_key = input_key
        self.config = config
        self.__qualname__ = f"LangGraphAgent({type(graph).__name__})"
        self.__module__ = type(graph).__module__

    def _inputs(self, conversation: Conversation) -> list[dict[str, Any]]:
        ids = _ids_for(conversation)
        out: list[dict[str, Any]] = []
        pending: list[str] = []
        for index, message in enumerate(conversation):
            if isinstance(message, HumanMessage):
                out.append({"role": "user", "content": message.content, "id": ids[index]})
            elif isinstance(message, AIMessage):
                calls: list[dict[str, Any]] = [
                    {"name": c.name, "args": c.args, "id": f"{ids[index]}-{n}", "type": "tool_call"}
                    for n, c in enumerate(message.tool_calls or [])
                ]
                pending = [call["id"] for call in calls]
                entry: dict[str, Any] = {
                    "role": "assistant",
                    "content": message.content,
                    "id": ids[index],
                }
                if calls:
                    entry["tool_calls"] = calls
                out.append(entry)
            else:
                call_id = pending.pop(0) if pending else f"{ids[index]}-orphan"
                out.append(
                    {
                        "role": "tool",
                        "content": message.content,
                        "tool_call_id": call_id,
                        "id": ids[index],
                    }
                )
        return out

    async def __call__(self, conversation: Conversation) -> list[Any]:
        from assay.integrations.langgraph import convert_to_ragas_messages

        state = await self.graph.ainvoke({self.input_key: self._inputs(conversation)}, self.config)
        if not isinstance(state, Mapping) or not isinstance(state.get(self.input_key), list):
            raise UnreadableAgentReply(
                f"the graph returned a {type(state).__name__} without a {self.input_key!r} list"
            )
        given = set(_ids_for(conversation))
        added = [m for m in state[self.input_key] if getattr(m, "id", None) not in given]
        return list(convert_to_ragas_messages(added))


class OpenAIAgentsAgent:
    """An OpenAI Agents SDK `Agent`, run with `agents.Runner.run` on the conversation's text
    (user and assistant messages); the items of the run are read with
    `assay.integrations.openai_agents.convert_to_ragas_messages`, tool calls included."""

    def __init__(self, agent: Any, *, max_turns: int = 10) -> None:
        self.agent = agent
        self.max_turns = max_turns
        self.__qualname__ = f"OpenAIAgentsAgent({getattr(agent, 'name', '?')})"
        self.__module__ = "agents"

    async def __call__(self, conversation: Conversation) -> list[Any]:
        from agents import Runner

        from assay.integrations.openai_agents import convert_to_ragas_messages

        items: list[Any] = [
            {"role": "user" if isinstance(m, HumanMessage) else "assistant", "content": m.content}
            for m in conversation
            if not isinstance(m, ToolMessage) and m.content
        ]
        result = await Runner.run(self.agent, items, max_turns=self.max_turns)
        return list(convert_to_ragas_messages(result.new_items))


class LlamaIndexAgent:
    """A LlamaIndex agent workflow (`FunctionAgent`, `ReActAgent`, `AgentWorkflow`): each turn it
    is run with the user's last message as `user_msg` and the earlier user and assistant text as
    `chat_history`, and the run's events are read with
    `assay.integrations.llama_index.convert_to_ragas_messages`, tool calls and results included.

    The workflow keeps no memory between turns here (each run is given the conversation so far),
    so the same agent object serves every conversation of a simulation."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.__qualname__ = f"LlamaIndexAgent({getattr(agent, 'name', type(agent).__name__)})"
        self.__module__ = type(agent).__module__

    async def __call__(self, conversation: Conversation) -> list[Any]:
        from llama_index.core.llms import ChatMessage

        from assay.integrations.llama_index import convert_to_ragas_messages

        texts = [m for m in conversation if not isinstance(m, ToolMessage) and m.content]
        if not texts or not isinstance(texts[-1], HumanMessage):
            raise UnreadableAgentReply("a LlamaIndex agent is run on the user's last message")
        history = [
            ChatMessage(
                role="user" if isinstance(m, HumanMessage) else "assistant", content=m.content
            )
            for m in texts[:-1]
        ]
        handler = self.agent.run(user_msg=texts[-1].content, chat_history=history)
        events = [event async for event in handler.stream_events()]
        await handler
        # the run's own AgentInput repeats the user's message: the agent's turn is what follows
        return [m for m in convert_to_ragas_messages(events) if not isinstance(m, HumanMessage)]


__all__ = [
    "AgentFunction",
    "LangGraphAgent",
    "LlamaIndexAgent",
    "OpenAIAgentsAgent",
    "agent_name",
    "as_agent",
    "read_reply",
    "repeated_call",
    "reply_key",
]
