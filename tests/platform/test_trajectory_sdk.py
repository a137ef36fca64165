"""Traces the real SDK records (a monitored OpenAI client and traced tools, through the real
exporter to a loopback collector) convert to the trajectory the agent ran (#43 §2)."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from assay.integrations.trajectory import to_conversation, trace_to_sample
from assay.platform import monitor, trace_function_call
from assay.schema.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from tests.models.fake_openai import Behaviour, RecordedRequest, Reply, completion_payload
from tests.platform.test_sdk_tracing import collector, sent  # noqa: F401 (the fixture)


class ToolCallingModel(Behaviour):
    """Asks for `get_weather(city)` when the last message is the user's, then answers from the
    tool's output; with `text_with_call`, the call comes with text (kept only in `tool_calls`).
    The model "lazy" answers at once, without the tool."""

    def __init__(self, text_with_call: bool = False) -> None:
        self.text_with_call = text_with_call

    def respond(self, request: RecordedRequest) -> Reply:
        if request.body.get("model") == "lazy":  # a model that answers without the tool
            return Reply(200, completion_payload(request, ["I think it is sunny."], (5, 5), "stop"))
        last = request.messages[-1]
        payload = completion_payload(request, ["x"], (10, 2), "stop")
        if last["role"] == "user":
            city = "Paris" if "Paris" in last["content"] else "Rome"
            payload["choices"][0]["message"] = {
                "role": "assistant",
                "content": "Let me look." if self.text_with_call else None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {
                            "name": "get_weather",
                            "arguments": json.dumps({"city": city}),
                        },
                    }
                ],
            }
            payload["choices"][0]["finish_reason"] = "tool_calls"
        else:
            weather = json.loads(last["content"])
            payload["choices"][0]["message"] = {
                "role": "assistant",
                "content": f"It is {weather['sky']} in {weather['city']}.",
            }
        return Reply(200, payload)


def make_agent(url: str, metadata: dict[str, Any] | None = None) -> Any:
    client = monitor(
        openai.OpenAI(api_key="sk-test", base_url=url, max_retries=0, timeout=10),
        metadata=metadata,
    )

    @trace_function_call
    def get_weather(city: str) -> dict[str, str]:
        return {"city": city, "sky": "sunny" if city == "Paris" else "cloudy"}

    @trace_function_call
    def agent(question: str) -> str:
        messages: list[Any] = [
            {"role": "system", "content": "You answer about the weather."},
            {"role": "user", "content": question},
        ]
        while True:
            reply = client.chat.completions.create(model="app", messages=messages)
            message = reply.choices[0].message
            if not message.tool_calls:
                return message.content or ""
            messages.append(message)
            for call in message.tool_calls:
                result = get_weather(**json.loads(call.function.arguments))
                messages.append(
                    {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
                )

    return agent


@pytest.fixture
def oai():
    from tests.models import fake_openai

    yield from fake_openai.serve()


@pytest.mark.parametrize("text_with_call", [False, True])
def test_a_monitored_agent_trace_is_its_trajectory(collector, oai, text_with_call):  # noqa: F811
    oai.default = ToolCallingModel(text_with_call)
    agent = make_agent(oai.url)
    assert agent("What is the weather in Paris?") == "It is sunny in Paris."
    [trace] = sent(collector, 1)
    sample = trace_to_sample(trace)
    call = ToolCall(name="get_weather", args={"city": "Paris"})
    assert [type(m) for m in sample.user_input] == [HumanMessage, AIMessage, ToolMessage, AIMessage]
    assert sample.user_input[0].content == "What is the weather in Paris?"
    assert sample.user_input[1].tool_calls == [call]
    assert sample.user_input[1].content == ("Let me look." if text_with_call else "")
    assert json.loads(sample.user_input[2].content) == {"city": "Paris", "sky": "sunny"}
    assert sample.user_input[3].content == "It is sunny in Paris."
    assert sample.metadata is not None and sample.metadata["trace_id"] == trace["id"]
    assert sample.metadata["model"] == "app"


def test_an_answer_with_text_and_calls_keeps_its_calls_in_the_span(collector, oai):  # noqa: F811
    oai.default = ToolCallingModel(text_with_call=True)
    client = monitor(openai.OpenAI(api_key="sk-test", base_url=oai.url, max_retries=0))
    client.chat.completions.create(model="app", messages=[{"role": "user", "content": "Paris?"}])
    [trace] = sent(collector, 1)
    [span] = trace["spans"]
    assert trace["output"] == "Let me look."  # the trace's output stays the text
    assert span["attributes"]["tool_calls"] == [
        {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    ]
    [human, answer] = trace_to_sample(trace).user_input
    assert isinstance(human, HumanMessage) and isinstance(answer, AIMessage)
    assert answer.tool_calls == [ToolCall(name="get_weather", args={"city": "Paris"})]


def test_two_traces_of_a_session_join_into_one_conversation(collector, oai):  # noqa: F811
    oai.default = ToolCallingModel()
    agent = make_agent(oai.url, metadata={"session_id": "s-1"})
    agent("What is the weather in Paris?")
    agent("And in Rome?")
    traces = sent(collector, 2)
    sample = to_conversation(list(reversed(traces)))  # ordered by start, whatever the order given
    humans = [m.content for m in sample.user_input if isinstance(m, HumanMessage)]
    assert humans == ["What is the weather in Paris?", "And in Rome?"]
    assert [c.args["city"] for c in sample.tool_calls()] == ["Paris", "Rome"]
    assert sample.user_input[-1].content == "It is cloudy in Rome."
    assert sample.metadata == {
        "session_id": "s-1",
        "model": "app",
        "trace_ids": [traces[0]["id"], traces[1]["id"]],
        "created_at": traces[0]["created_at"],
    }


def test_agents_that_raise_and_loop_keep_the_steps_they_took(collector):  # noqa: F811
    @trace_function_call
    def charge(amount: int) -> str:
        if amount > 100:
            raise ValueError("over the limit")
        return "charged"

    @trace_function_call
    def failing_agent(question: str) -> str:
        charge(50)
        charge(500)  # raises: the agent fails with it
        return "never"

    @trace_function_call
    def looping_agent(question: str) -> str:
        for _ in range(4):
            charge(10)  # the same call again and again
        return "I keep charging."

    with pytest.raises(ValueError):
        failing_agent("Pay 550")
    [failed] = sent(collector, 1)  # sent now: else the next function-only trace would take it in
    looping_agent("Pay 10")
    looped = sent(collector, 2)[1]
    sample = trace_to_sample(failed)
    assert [type(m) for m in sample.user_input] == [
        HumanMessage,
        AIMessage,
        ToolMessage,
        AIMessage,
        ToolMessage,
    ]
    assert sample.user_input[2].content == "charged"
    assert sample.user_input[4].content == "error: ValueError: over the limit"
    assert sample.metadata is not None and sample.metadata["error"] == "ValueError: over the limit"
    repeated = trace_to_sample(looped)
    assert repeated.tool_calls() == [ToolCall(name="charge", args={"amount": 10})] * 4
    assert repeated.user_input[-1].content == "I keep charging."
