"""Agents reached other ways than a Python function: over HTTP (OpenAI-compatible and plain JSON,
against loopback servers), a LangGraph-style runnable, and an OpenAI Agents SDK agent."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from assay.errors import UsageError
from assay.schema.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from assay.simulation import HttpAgent, LangGraphAgent, Scenario, SimulationResult, simulate
from assay.simulation.agents import as_agent
from tests.models.fake_openai import (
    Behaviour,
    FakeOpenAI,
    RecordedRequest,
    Reply,
    completion_payload,
    dynamic,
    ok,
    serve,
    server_error,
)
from tests.simulation.scripted import say, scripted_judge, scripted_user


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    yield from serve()


class _JsonAgent(BaseHTTPRequestHandler):
    """A plain JSON agent: answers by the last message's text."""

    bodies: ClassVar[list[Any]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        last = body["messages"][-1]["content"]
        status, payload = 200, {"reply": f"You said: {last}"}
        if last == "tools":
            payload = {
                "messages": [
                    {
                        "type": "ai",
                        "content": "",
                        "tool_calls": [{"name": "find", "args": {"q": 1}}],
                    },
                    {"type": "tool", "content": "found"},
                    {"type": "ai", "content": "Here it is."},
                ]
            }
        elif last == "fail":
            status, payload = 503, {"error": "overloaded"}
        elif last == "odd":
            payload = {"answer": "wrong key"}
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def json_agent() -> Iterator[str]:
    _JsonAgent.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _JsonAgent)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/chat"
    finally:
        server.shutdown()
        server.server_close()


def _simulate(agent: Any, goals: list[str], users: dict[str, list[str]]) -> SimulationResult:
    user, _ = scripted_user(users)
    judge, _ = scripted_judge(lambda goal, text: "AI:" in text)
    result = simulate(
        agent,
        [Scenario(persona="p", goal=goal, name=goal) for goal in goals],
        user_llm=user,
        judge_llm=judge,
        show_progress=False,
    )
    assert isinstance(result, SimulationResult)
    return result


def test_a_plain_json_http_agent(json_agent):
    goals = ["hello", "tools", "fail", "odd"]
    result = _simulate(HttpAgent(json_agent), goals, {g: [say(g)] for g in goals})
    by_name = {c.name: c for c in result.conversations}
    assert by_name["hello"].messages[-1] == AIMessage(content="You said: hello")
    assert by_name["tools"].messages[1:] == [
        AIMessage(content="", tool_calls=[ToolCall(name="find", args={"q": 1})]),
        ToolMessage(content="found"),
        AIMessage(content="Here it is."),
    ]
    fail, odd = by_name["fail"].error, by_name["odd"].error
    assert fail is not None and fail.error_type == "AgentEndpointError"
    assert f"{json_agent} answered HTTP 503" in fail.message and "overloaded" in fail.message
    assert odd is not None and odd.error_type == "UnreadableAgentReply"
    assert "neither 'messages' nor 'reply' (its keys: answer)" in odd.message
    assert {"messages": [{"type": "human", "content": "hello"}]} in _JsonAgent.bodies


def test_an_openai_compatible_http_agent(fake):
    def answer(request: RecordedRequest) -> Behaviour:
        last = request.messages[-1]["content"]
        return server_error(500) if last == "boom" else ok(f"echo: {last}")

    fake.default = dynamic(answer)
    url = f"{fake.url}/chat/completions"
    agent = HttpAgent(url, model="my-agent")
    assert agent.protocol == "openai"
    result = _simulate(agent, ["hi", "boom"], {"hi": [say("hi")], "boom": [say("boom")]})
    good, bad = result.conversations
    assert good.messages == [HumanMessage(content="hi"), AIMessage(content="echo: hi")]
    assert bad.error is not None and bad.error.error_type == "AgentEndpointError"
    assert "answered HTTP 500" in bad.error.message
    sent = [r.body for r in fake.chat_requests]
    assert {"model": "my-agent", "messages": [{"role": "user", "content": "hi"}]} in sent


def test_an_http_agent_that_cannot_be_reached_and_bad_arguments():
    result = _simulate(HttpAgent("http://127.0.0.1:9/chat", timeout=2), ["g"], {"g": [say("x")]})
    error = result.conversations[0].error
    assert error is not None and error.error_type == "AgentEndpointError"
    assert error.message.startswith("turn 1: http://127.0.0.1:9/chat: ConnectError")
    with pytest.raises(UsageError, match="http:// or https:// URL"):
        HttpAgent("localhost:8000")
    with pytest.raises(UsageError, match="protocol must be"):
        HttpAgent("http://x", protocol="grpc")  # type: ignore[arg-type]


def test_a_langgraph_style_runnable_is_called_with_the_conversation():
    from langchain_core.messages import AIMessage as LcAI
    from langchain_core.messages import ToolMessage as LcTool
    from langchain_core.messages import convert_to_messages
    from langchain_core.runnables import RunnableLambda

    seen: list[list[Any]] = []

    def graph(state: dict[str, Any]) -> dict[str, Any]:
        messages = convert_to_messages(state["messages"])
        seen.append(messages)
        added = [
            LcAI(
                content="", tool_calls=[{"name": "weather", "args": {"city": "Oslo"}, "id": "c1"}]
            ),
            LcTool(content="rain", tool_call_id="c1"),
            LcAI(content=f"Rain in Oslo ({len(messages)} messages so far)."),
        ]
        return {"messages": [*messages, *added]}

    runnable = RunnableLambda(graph)
    assert isinstance(as_agent(runnable), LangGraphAgent)
    user, _ = scripted_user({"g": [say("Weather?"), say("And tomorrow?")]})
    judge, _ = scripted_judge(lambda goal, text: text.count("Rain in Oslo") == 2)
    result = simulate(
        runnable,
        [Scenario(persona="p", goal="g")],
        user_llm=user,
        judge_llm=judge,
        show_progress=False,
    )
    conversation = result.conversations[0]
    assert conversation.ended == "goal_met" and conversation.turns == 2
    assert conversation.messages[1:4] == [
        AIMessage(content="", tool_calls=[ToolCall(name="weather", args={"city": "Oslo"})]),
        ToolMessage(content="rain"),
        AIMessage(content="Rain in Oslo (1 messages so far)."),
    ]
    second = seen[1]  # the whole conversation, tool call and output paired by id
    assert [m.type for m in second] == ["human", "ai", "tool", "ai", "human"]
    assert second[2].tool_call_id == second[1].tool_calls[0]["id"]


class _ToolThenText(Behaviour):
    """An OpenAI chat model that calls `lookup` once, then answers from its output."""

    def respond(self, request: RecordedRequest) -> Reply:
        if any(m.get("role") == "tool" for m in request.messages):
            return ok("The order ships Monday.").respond(request)
        payload = completion_payload(request, [""], (5, 5), "tool_calls")
        payload["choices"][0]["message"] = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"order": "5521"}'},
                }
            ],
        }
        return Reply(200, payload)


def test_an_openai_agents_sdk_agent_runs_with_its_tools(fake):
    agents = pytest.importorskip("agents")
    from openai import AsyncOpenAI

    agents.set_tracing_disabled(True)

    @agents.function_tool
    def lookup(order: str) -> str:
        """Find an order's shipping date."""
        return f"order {order} ships Monday"

    fake.default = _ToolThenText()
    model = agents.OpenAIChatCompletionsModel(
        model="agent-model", openai_client=AsyncOpenAI(base_url=fake.url, api_key="test")
    )
    agent = agents.Agent(name="shop", instructions="Help with orders.", tools=[lookup], model=model)
    user, _ = scripted_user({"g": [say("When does order 5521 ship?")]})
    judge, _ = scripted_judge(lambda goal, text: "Monday" in text)
    result = simulate(
        agent,
        [Scenario(persona="p", goal="g")],
        user_llm=user,
        judge_llm=judge,
        show_progress=False,
    )
    conversation = result.conversations[0]
    assert conversation.error is None, conversation.error
    assert conversation.messages == [
        HumanMessage(content="When does order 5521 ship?"),
        AIMessage(content="", tool_calls=[ToolCall(name="lookup", args={"order": "5521"})]),
        ToolMessage(content="order 5521 ships Monday"),
        AIMessage(content="The order ships Monday."),
    ]
    assert conversation.ended == "goal_met"


def _template_llm(answers: list[str]) -> Any:
    """The LlamaIndex function-calling LLM the `llamaIndex_agent_evals` quickstart ships, over a
    scripted assay model answering `answers` in turn (each an AgentStep JSON)."""
    import importlib.util
    from pathlib import Path

    import assay.quickstart
    from assay.models import LLM, ScriptedProvider

    path = Path(assay.quickstart.__file__).parent / "templates/llamaIndex_agent_evals/assay_llm.py"
    spec = importlib.util.spec_from_file_location("assay_llm_for_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the model's annotations through it
    spec.loader.exec_module(module)
    return module.AssayLLM(model=LLM(ScriptedProvider(answers)))


def test_a_llamaindex_function_agent_runs_with_its_tools_turn_after_turn():
    pytest.importorskip("llama_index.core")
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.tools import FunctionTool

    from assay.simulation import LlamaIndexAgent

    asked: list[str] = []

    def lookup(order: str) -> str:
        """Find an order's shipping date."""
        asked.append(order)
        return f"order {order} ships Monday"

    step = json.dumps
    llm = _template_llm(
        [
            step(
                {"done": False, "tool_calls": [{"name": "lookup", "arguments": {"order": "5521"}}]}
            ),
            step({"done": True, "answer": "Which order do you mean?"}),  # after the tool: turn 1
            step({"done": True, "answer": "The order ships Monday."}),  # turn 2, no tool
        ]
    )
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(lookup)], llm=llm, streaming=False)
    assert isinstance(as_agent(agent), LlamaIndexAgent)
    user, _ = scripted_user({"g": [say("When does order 5521 ship?"), say("5521, please.")]})
    judge, _ = scripted_judge(lambda goal, text: "ships Monday." in text)
    result = simulate(
        agent,
        [Scenario(persona="p", goal="g")],
        user_llm=user,
        judge_llm=judge,
        show_progress=False,
    )
    conversation = result.conversations[0]
    assert conversation.error is None, conversation.error
    assert conversation.messages == [
        HumanMessage(content="When does order 5521 ship?"),
        AIMessage(content="", tool_calls=[ToolCall(name="lookup", args={"order": "5521"})]),
        ToolMessage(content="order 5521 ships Monday"),
        AIMessage(content="Which order do you mean?"),
        HumanMessage(content="5521, please."),
        AIMessage(content="The order ships Monday."),
    ]
    assert asked == ["5521"] and conversation.ended == "goal_met"
