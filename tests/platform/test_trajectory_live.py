"""Trajectories from traces stored by a real `assay serve` (SQLite and PostgreSQL) (#43 §2): an
agent sent over OTLP with the GenAI conventions and with OpenInference's (the real
opentelemetry-sdk exporter), and a session of SDK traces fetched by its id, convert to the
conversations the agents had, tool calls and outputs included."""

from __future__ import annotations

import json

from assay.platform import Trace, flush
from assay.schema.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from tests.platform.test_otlp import assay_id, provider
from tests.platform.test_trajectory_sdk import ToolCallingModel, make_agent

CALL = ToolCall(name="get_weather", args={"city": "Paris"})
KINDS = [HumanMessage, AIMessage, ToolMessage, AIMessage]


def _genai(parts_role: str, *parts: dict) -> dict:
    return {"role": parts_role, "parts": list(parts)}


def test_an_otlp_genai_agent_is_its_trajectory(live, sdk):
    key = live.key()
    sdk.login(key, base_url=live.base_url)
    tracer_provider = provider(live, key, simple=True)
    tracer = tracer_provider.get_tracer("agent")
    question = _genai("user", {"type": "text", "content": "Weather in Paris?"})
    call = {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}
    with tracer.start_as_current_span("invoke_agent weather") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.conversation.id", "conv-9")
        with tracer.start_as_current_span("chat m") as first:
            first.set_attribute("gen_ai.operation.name", "chat")
            first.set_attribute("gen_ai.request.model", "m")
            first.set_attribute("gen_ai.input.messages", json.dumps([question]))
            first.set_attribute("gen_ai.output.messages", json.dumps([_genai("assistant", call)]))
        with tracer.start_as_current_span("execute_tool get_weather") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "get_weather")
            tool.set_attribute("gen_ai.tool.call.arguments", '{"city": "Paris"}')
            tool.set_attribute("gen_ai.tool.call.result", '{"sky": "sunny"}')
        with tracer.start_as_current_span("chat m") as second:
            second.set_attribute("gen_ai.operation.name", "chat")
            second.set_attribute("gen_ai.request.model", "m")
            response = {"type": "tool_call_response", "id": "c1", "response": '{"sky": "sunny"}'}
            sent = [question, _genai("assistant", call), _genai("tool", response)]
            second.set_attribute("gen_ai.input.messages", json.dumps(sent))
            answer = _genai("assistant", {"type": "text", "content": "Sunny in Paris."})
            second.set_attribute("gen_ai.output.messages", json.dumps([answer]))
    assert tracer_provider.force_flush(10_000)
    tracer_provider.shutdown()
    sample = Trace.download(id=assay_id(root)).to_sample()
    assert [type(m) for m in sample.user_input] == KINDS
    assert sample.user_input[1].tool_calls == [CALL]
    assert sample.user_input[2].content == '{"sky": "sunny"}'
    assert sample.user_input[3].content == "Sunny in Paris."
    assert sample.metadata is not None and sample.metadata["session_id"] == "conv-9"


def test_an_openinference_agent_whose_last_tool_no_llm_saw_is_its_trajectory(live, sdk):
    key = live.key()
    sdk.login(key, base_url=live.base_url)
    tracer_provider = provider(live, key, simple=True)
    tracer = tracer_provider.get_tracer("agent")
    with tracer.start_as_current_span("agent") as root:
        root.set_attribute("openinference.span.kind", "AGENT")
        root.set_attribute("session.id", "oi-session")
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attribute("openinference.span.kind", "LLM")
            llm.set_attribute("llm.model_name", "m")
            llm.set_attribute("llm.input_messages.0.message.role", "system")
            llm.set_attribute("llm.input_messages.0.message.content", "Be brief.")
            llm.set_attribute("llm.input_messages.1.message.role", "user")
            llm.set_attribute("llm.input_messages.1.message.content", "Email Ann the report.")
            llm.set_attribute("llm.output_messages.0.message.role", "assistant")
            prefix = "llm.output_messages.0.message.tool_calls.0.tool_call.function"
            llm.set_attribute(f"{prefix}.name", "send_email")
            llm.set_attribute(f"{prefix}.arguments", '{"to": "ann"}')
        with tracer.start_as_current_span("send_email") as tool:
            tool.set_attribute("openinference.span.kind", "TOOL")
            tool.set_attribute("tool.name", "send_email")
            tool.set_attribute("input.value", '{"to": "ann"}')
            tool.set_attribute("output.value", "sent")
        root.set_attribute("output.value", "Done: the report is on its way to Ann.")
    assert tracer_provider.force_flush(10_000)
    tracer_provider.shutdown()
    sample = Trace.download(id=assay_id(root)).to_sample()
    assert [type(m) for m in sample.user_input] == KINDS
    assert sample.user_input[0].content == "Email Ann the report."  # the system prompt left out
    assert sample.user_input[1].tool_calls == [ToolCall(name="send_email", args={"to": "ann"})]
    assert sample.user_input[2].content == "sent"  # from the tool span: no LLM call saw it
    assert sample.user_input[3].content == "Done: the report is on its way to Ann."
    assert sample.metadata is not None and sample.metadata["session_id"] == "oi-session"


def test_a_session_of_sdk_traces_is_fetched_and_joined(sdk, fake):
    fake.default = ToolCallingModel()
    agent = make_agent(fake.url, metadata={"session_id": "chat-42"})
    other = make_agent(fake.url, metadata={"session_id": "chat-43"})
    agent("What is the weather in Paris?")
    other("What is the weather in Paris?")
    agent("And in Rome?")
    assert flush(10)
    traces = Trace.session("chat-42")
    assert len(traces) == 2 and traces[0].created_at < traces[1].created_at
    sample = Trace.to_conversation(traces)
    humans = [m.content for m in sample.user_input if isinstance(m, HumanMessage)]
    assert humans == ["What is the weather in Paris?", "And in Rome?"]
    assert [c.args["city"] for c in sample.tool_calls()] == ["Paris", "Rome"]
    assert sample.metadata is not None and sample.metadata["trace_ids"] == [t.id for t in traces]
    assert Trace.session("no-such-session") == []


def replayable(url):
    """The weather agent as a replay factory: its model and system prompt chosen by the
    replay, its tool answered by the replay's registry."""
    import openai

    def factory(tools, model="app", system_prompt="You answer about the weather."):
        client = openai.OpenAI(api_key="sk-test", base_url=url, max_retries=0, timeout=10)

        def agent(messages):
            chat = [{"role": "system", "content": system_prompt}]
            chat += [{"role": "user", "content": m.content} for m in messages[-1:]]
            turn = []
            while True:
                reply = client.chat.completions.create(model=model, messages=chat)
                message = reply.choices[0].message
                if not message.tool_calls:
                    return [*turn, AIMessage(content=message.content or "")]
                chat.append(message)
                calls = [
                    ToolCall(name=c.function.name, args=json.loads(c.function.arguments))
                    for c in message.tool_calls
                ]
                turn.append(AIMessage(content="", tool_calls=calls))
                for raw, call in zip(message.tool_calls, calls, strict=True):
                    output = tools[call.name](**call.args)
                    chat.append({"role": "tool", "tool_call_id": raw.id, "content": output})
                    turn.append(ToolMessage(content=output))

        return agent

    return factory


def test_a_stored_trace_is_replayed_with_another_model(sdk, fake):
    """Recorded by the SDK on the server, downloaded, replayed: the same model makes the same
    call with the tool answered from the recording (the tool never runs); a model that answers
    without calling the tool shows as a removed call and a changed answer."""
    from assay import replay

    fake.default = ToolCallingModel()
    make_agent(fake.url)("What is the weather in Paris?")
    assert flush(10)
    [stored] = Trace.list()
    same = replay(stored, agent=replayable(fake.url))
    assert same.ok and same.tool_call_diff.same and not same.final_answer_changed
    assert [u.source for u in same.uses] == ["recording"]
    lazy = replay(stored, agent=replayable(fake.url), model="lazy")
    assert lazy.ok and lazy.final_answer_changed
    assert str(lazy.tool_call_diff) == '- get_weather({"city":"Paris"})'
    assert lazy.replayed_answer == "I think it is sunny."
