"""Calling a real AG-UI agent over HTTP: a Starlette app served by uvicorn on 127.0.0.1 streams
real AG-UI events (encoded with the protocol's own EventEncoder) as server-sent events."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from ag_ui.core import (
    AssistantMessage,
    MessagesSnapshotEvent,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.encoder import EventEncoder
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, StreamingResponse
from starlette.routing import Route

from assay import AIMessage, DataError, HumanMessage, ToolCall, ToolMessage
from assay.experiments import Dataset, experiment
from assay.integrations.ag_ui import (
    AgentRunFailed,
    call_ag_ui_endpoint,
    convert_to_ragas_messages,
    run_ag_ui_row,
)

RECEIVED: list[dict] = []  # what the agent was sent: the run input and the headers


def agent_events(run: RunAgentInput, text: str):
    started = RunStartedEvent(thread_id=run.thread_id, run_id=run.run_id)
    finished = RunFinishedEvent(thread_id=run.thread_id, run_id=run.run_id)
    if "fail" in text:
        return [started, RunErrorEvent(message="weather backend down", code="backend")]
    if "snapshot" in text:
        answer = AssistantMessage(id="a1", content="Echoed.")
        return [started, MessagesSnapshotEvent(messages=[*run.messages, answer]), finished]
    return [
        started,
        TextMessageStartEvent(message_id="m1", role="assistant"),
        TextMessageContentEvent(message_id="m1", delta="Let me check."),
        TextMessageEndEvent(message_id="m1"),
        ToolCallStartEvent(tool_call_id="c1", tool_call_name="get_weather", parent_message_id="m1"),
        ToolCallArgsEvent(tool_call_id="c1", delta='{"location": "SF"}'),
        ToolCallEndEvent(tool_call_id="c1"),
        ToolCallResultEvent(
            message_id="t1", tool_call_id="c1", content="Sunny, 72F in San Francisco"
        ),
        TextMessageStartEvent(message_id="m2", role="assistant"),
        TextMessageContentEvent(message_id="m2", delta="It is sunny."),
        TextMessageEndEvent(message_id="m2"),
        finished,
    ]


async def agent(request: Request) -> StreamingResponse:
    run = RunAgentInput.model_validate(await request.json())
    RECEIVED.append({"run": run, "headers": dict(request.headers)})
    text = run.messages[-1].content
    encoder = EventEncoder(accept=request.headers.get("accept"))

    async def stream():
        if "garbage" in text:
            yield 'data: {"type": "TEXT_MESSAGE_CONTENT", "delta": "no message id"}\n\n'
            return
        if "hang" in text:  # starts, then never finishes
            yield encoder.encode(RunStartedEvent(thread_id=run.thread_id, run_id=run.run_id))
            await asyncio.sleep(30)
        for event in agent_events(run, text):
            yield encoder.encode(event)

    return StreamingResponse(stream(), media_type=encoder.get_content_type())


async def broken(request: Request) -> PlainTextResponse:
    return PlainTextResponse("kaput", status_code=500)


async def not_a_stream(request: Request) -> JSONResponse:
    return JSONResponse({"answer": "plain JSON"})


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    import uvicorn

    app = Starlette(
        routes=[
            Route("/agent", agent, methods=["POST"]),
            Route("/broken", broken, methods=["POST"]),
            Route("/json", not_a_stream, methods=["POST"]),
        ]
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def test_an_endpoint_run_streams_events_that_convert(base_url):
    events = asyncio.run(
        call_ag_ui_endpoint(
            endpoint_url=f"{base_url}/agent",
            user_input="Weather in SF?",
            agent_config={"units": "F"},
            extra_headers={"X-Team": "evals"},
            timeout=10.0,
        )
    )
    sent = RECEIVED[-1]
    assert sent["run"].messages[0].content == "Weather in SF?"
    assert sent["run"].forwarded_props == {"units": "F"}
    assert sent["headers"]["x-team"] == "evals"
    assert sent["headers"]["accept"] == "text/event-stream"
    assert type(events[0]).__name__ == "RunStartedEvent" and events[0].run_id == sent["run"].run_id
    assert convert_to_ragas_messages(events) == [
        AIMessage(
            content="Let me check.",
            tool_calls=[ToolCall(name="get_weather", args={"location": "SF"})],
        ),
        ToolMessage(content="Sunny, 72F in San Francisco"),
        AIMessage(content="It is sunny."),
    ]


def test_run_ag_ui_row_fills_the_row(base_url):
    row = {"user_input": "Weather in SF?", "reference": "sunny"}
    filled = asyncio.run(run_ag_ui_row(row, f"{base_url}/agent", timeout=10.0))
    assert filled["reference"] == "sunny"
    assert filled["response"] == "Let me check. It is sunny."
    assert filled["tool_calls"] == [ToolCall(name="get_weather", args={"location": "SF"})]
    assert filled["contexts"] == ["Sunny, 72F in San Francisco"]
    assert filled["messages"][0] == HumanMessage(content="Weather in SF?")


def test_a_multi_turn_input_is_sent_as_ag_ui_messages_and_a_snapshot_echoes_it(base_url):
    conversation = [
        HumanMessage(content="Hi"),
        AIMessage(content="Hello, how can I help?"),
        HumanMessage(content="Send a snapshot please"),
    ]
    filled = asyncio.run(
        run_ag_ui_row({"user_input": conversation}, f"{base_url}/agent", timeout=10.0)
    )
    sent = RECEIVED[-1]["run"].messages
    assert [m.role for m in sent] == ["user", "assistant", "user"]
    assert filled["messages"] == [*conversation, AIMessage(content="Echoed.")]  # not doubled
    assert filled["response"] == "Hello, how can I help? Echoed."
    # a conversation read back from a file is a list of dicts
    as_dicts = [message.model_dump() for message in conversation]
    again = asyncio.run(run_ag_ui_row({"user_input": as_dicts}, f"{base_url}/agent", timeout=10.0))
    assert again["messages"] == filled["messages"]


def test_a_run_error_fails_the_row_and_an_experiment_records_it(base_url, tmp_path):
    with pytest.raises(AgentRunFailed, match="weather backend down") as caught:
        asyncio.run(run_ag_ui_row({"user_input": "please fail"}, f"{base_url}/agent", timeout=10.0))
    assert caught.value.code == "backend" and caught.value.run.startswith("run-")

    @experiment(root_dir=tmp_path, show_progress=False)
    async def ask(row):
        return await run_ag_ui_row(row, f"{base_url}/agent", timeout=10.0)

    data = [{"user_input": "Weather?"}, {"user_input": "now fail"}]
    result = asyncio.run(
        ask.arun(Dataset("rows", backend="inmemory", root_dir=tmp_path, data=data), name="agui")
    )
    by_status = {record["status"]: record for record in result.records}
    assert by_status["error"]["error"]["type"] == "AgentRunFailed"
    assert by_status["ok"]["result"]["response"] == "Let me check. It is sunny."


@pytest.mark.parametrize(
    ("path", "text", "code", "message"),
    [
        ("/broken", "hi", "http_status", "answered HTTP 500: kaput"),
        ("/json", "hi", "not_event_stream", "did not answer with an event stream"),
        ("/agent", "hang", "timeout", "no end of run within 1.0 s"),
    ],
)
def test_endpoint_failures_are_typed_and_name_the_endpoint(base_url, path, text, code, message):
    with pytest.raises(AgentRunFailed) as caught:
        asyncio.run(
            call_ag_ui_endpoint(endpoint_url=f"{base_url}{path}", user_input=text, timeout=1.0)
        )
    assert caught.value.code == code and message in str(caught.value)
    assert f"{base_url}{path}" in str(caught.value)


def test_an_unreachable_endpoint_and_an_invalid_event(base_url):
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        closed_port = unused.getsockname()[1]
    with pytest.raises(AgentRunFailed, match="could not be read: ConnectError"):
        asyncio.run(
            call_ag_ui_endpoint(
                endpoint_url=f"http://127.0.0.1:{closed_port}/agent", user_input="x", timeout=5.0
            )
        )
    with pytest.raises(DataError, match=r"index 0: AG-UI event: field .*messageId.* is invalid"):
        asyncio.run(
            call_ag_ui_endpoint(endpoint_url=f"{base_url}/agent", user_input="garbage", timeout=5.0)
        )
    with pytest.raises(DataError, match="user_input"):
        asyncio.run(run_ag_ui_row({"question": "no user_input"}, f"{base_url}/agent"))
