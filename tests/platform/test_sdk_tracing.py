"""monitor() and @trace_function_call against the REAL openai / anthropic / litellm clients.

The clients talk to loopback fakes (`tests/models/fake_openai.py`, `tests/models/fake_anthropic.py`);
the traces go through the real exporter to a loopback collector. Every test checks both sides:
the application sees exactly what the SDK returns or raises, and the trace says what happened.
"""

from __future__ import annotations

import asyncio
import gc
import os
import threading

import anthropic
import openai
import pytest

import assay.platform as ragmetrics
from assay.platform import monitor, trace_function_call
from assay.platform.sdk.export import exporter, flush
from tests.models import fake_anthropic, fake_openai
from tests.platform.test_sdk_tracing_export import Collector

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm: no download at import

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


@pytest.fixture
def collector():
    server = Collector().start()
    assert ragmetrics.login("test-key", base_url=server.url) is True
    flush(5)
    try:
        yield server
    finally:
        flush(5)
        server.stop()


@pytest.fixture
def oai():
    yield from fake_openai.serve()


@pytest.fixture
def anth():
    yield from fake_anthropic.serve()


def sent(collector: Collector, n: int) -> list[dict]:
    assert flush(10)
    traces = collector.wait_for(n)
    assert len(traces) == n, traces
    # in the order they were made: batches go out in parallel and may arrive in any order
    return sorted(traces, key=lambda trace: trace["created_at"])


def openai_client(url: str, cls=openai.OpenAI):
    return cls(api_key="sk-test", base_url=url, max_retries=0, timeout=10)


# -- OpenAI --------------------------------------------------------------------------------------
def test_openai_chat_call_is_one_trace_and_the_answer_is_untouched(collector, oai):
    oai.default = fake_openai.ok("Paris.", usage=(12, 3))
    raw = openai_client(oai.url)
    client = monitor(raw, metadata={"user": "u1"})
    assert isinstance(client, openai.OpenAI) and client.base_url == raw.base_url
    messages = list(QUESTION)
    answer = client.chat.completions.create(model="test-model", messages=messages, temperature=0)
    messages.append({"role": "assistant", "content": "later turn"})  # must not change the trace
    assert type(answer) is openai.types.chat.ChatCompletion
    assert answer.choices[0].message.content == "Paris."
    [trace] = sent(collector, 1)
    assert trace["input"] == QUESTION and trace["output"] == "Paris."
    assert trace["model"] == "test-model"
    assert trace["usage"] == {"input_tokens": 12, "output_tokens": 3}
    assert trace["metadata"] == {"user": "u1"} and trace["error"] is None
    assert trace["raw_input"]["temperature"] == 0 and trace["raw_input"]["messages"] == QUESTION
    assert trace["raw_output"]["choices"][0]["message"]["content"] == "Paris."
    assert trace["latency_ms"] > 0 and trace["contexts"] == []
    assert [s["kind"] for s in trace["spans"]] == ["llm"]


def test_with_options_stays_monitored(collector, oai):
    oai.default = fake_openai.ok("Paris.")
    client = monitor(openai_client(oai.url), metadata={"k": 1})
    derived = client.with_options(timeout=5)
    assert isinstance(derived, openai.OpenAI) and derived.timeout == 5
    derived.chat.completions.create(model="m", messages=QUESTION)
    [trace] = sent(collector, 1)
    assert trace["metadata"] == {"k": 1} and trace["output"] == "Paris."


def test_openai_error_passes_through_unchanged_and_is_recorded(collector, oai):
    oai.script(fake_openai.error(400, "the prompt is too long"))
    client = monitor(openai_client(oai.url))
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="test-model", messages=QUESTION)
    assert "the prompt is too long" in str(caught.value)
    [trace] = sent(collector, 1)
    assert trace["error"].startswith("BadRequestError") and trace["output"] is None


def test_openai_stream_passes_chunks_as_they_arrive(collector, anth):
    anth.gate = threading.Event()
    client = monitor(openai_client(anth.openai_url))
    stream = client.chat.completions.create(
        model="test-model",
        messages=QUESTION,
        stream=True,
        stream_options={"include_usage": True},
    )
    assert type(stream) is openai.Stream
    first = next(stream)  # arrives while the server still holds the rest
    assert type(first) is openai.types.chat.ChatCompletionChunk
    assert first.choices[0].delta.content == "Paris "
    assert collector.traces == []  # not recorded before the stream ends
    anth.gate.set()
    rest = [c.choices[0].delta.content for c in stream if c.choices]
    assert "".join([first.choices[0].delta.content, *[r or "" for r in rest]]) == anth.text
    [trace] = sent(collector, 1)
    assert trace["output"] == anth.text and trace["model"] == "test-model"
    assert trace["usage"] == {"input_tokens": 11, "output_tokens": 7}
    assert trace["raw_output"]["stream_chunks"] >= 7


def test_openai_stream_closed_early_is_recorded_with_what_arrived(collector, anth):
    client = monitor(openai_client(anth.openai_url))
    with client.chat.completions.create(model="m", messages=QUESTION, stream=True) as stream:
        first = next(stream)
    assert first.choices[0].delta.content == "Paris "
    [trace] = sent(collector, 1)
    assert trace["output"] == "Paris "
    assert trace["spans"][0]["attributes"]["stream_closed_early"] is True


def test_async_openai_call_and_stream(collector, oai, anth):
    oai.default = fake_openai.ok("Rome.", usage=(4, 2))

    async def main():
        client = monitor(openai_client(oai.url, openai.AsyncOpenAI))
        assert isinstance(client, openai.AsyncOpenAI)
        answer = await client.chat.completions.create(model="test-model", messages=QUESTION)
        streaming = monitor(openai_client(anth.openai_url, openai.AsyncOpenAI))
        stream = await streaming.chat.completions.create(
            model="test-model", messages=QUESTION, stream=True
        )
        assert type(stream) is openai.AsyncStream
        pieces = [c.choices[0].delta.content async for c in stream if c.choices]
        return answer, "".join(p or "" for p in pieces)

    answer, text = asyncio.run(main())
    assert answer.choices[0].message.content == "Rome." and text == anth.text
    traces = sent(collector, 2)
    assert sorted(t["output"] for t in traces) == sorted(["Rome.", anth.text])


def test_openai_responses_api_plain_and_streamed(collector, anth):
    client = monitor(openai_client(anth.openai_url))
    answer = client.responses.create(model="test-model", input="Capital of France?")
    assert type(answer) is openai.types.responses.Response
    assert answer.output_text == anth.text
    events = list(client.responses.create(model="test-model", input="Again?", stream=True))
    assert events[-1].type == "response.completed"
    plain, streamed = sorted(sent(collector, 2), key=lambda t: t["input"])
    assert streamed["input"] == "Capital of France?" and streamed["output"] == anth.text
    assert plain["input"] == "Again?" and plain["output"] == anth.text
    assert plain["usage"] == {"input_tokens": 11, "output_tokens": 7}


# -- Anthropic -----------------------------------------------------------------------------------
def anthropic_client(url: str, cls=anthropic.Anthropic):
    return cls(api_key="sk-ant-test", base_url=url, max_retries=0, timeout=10)


def test_anthropic_message_stream_and_error(collector, anth):
    client = monitor(anthropic_client(anth.url), metadata={"app": "a"})
    assert isinstance(client, anthropic.Anthropic)
    message = client.messages.create(
        model="claude-test", max_tokens=50, system="Be brief.", messages=QUESTION
    )
    assert type(message) is anthropic.types.Message and message.content[0].text == anth.text
    stream = client.messages.create(
        model="claude-test", max_tokens=50, messages=QUESTION, stream=True
    )
    assert type(stream) is anthropic.Stream
    deltas = [e.delta.text for e in stream if e.type == "content_block_delta"]
    assert "".join(deltas) == anth.text
    anth.fail = (400, "max_tokens is too large")
    with pytest.raises(anthropic.BadRequestError, match="max_tokens is too large"):
        client.messages.create(model="claude-test", max_tokens=10**9, messages=QUESTION)
    plain, streamed, failed = sent(collector, 3)
    assert plain["input"] == [{"role": "system", "content": "Be brief."}, *QUESTION]
    assert plain["output"] == anth.text and plain["model"] == "claude-test"
    assert plain["usage"] == {"input_tokens": 11, "output_tokens": 7}
    assert plain["metadata"] == {"app": "a"}
    assert streamed["output"] == anth.text
    assert streamed["usage"] == {"input_tokens": 11, "output_tokens": 7}
    assert failed["error"].startswith("BadRequestError")


def test_async_anthropic_message_and_stream(collector, anth):
    async def main():
        client = monitor(anthropic_client(anth.url, anthropic.AsyncAnthropic))
        message = await client.messages.create(model="c", max_tokens=5, messages=QUESTION)
        stream = await client.messages.create(
            model="c", max_tokens=5, messages=QUESTION, stream=True
        )
        assert type(stream) is anthropic.AsyncStream
        events = [e async for e in stream]
        return message, events

    message, events = asyncio.run(main())
    assert message.content[0].text == anth.text and events[-1].type == "message_stop"
    traces = sent(collector, 2)
    assert [t["output"] for t in traces] == [anth.text, anth.text]


def test_anthropic_stream_helper_sync_and_async(collector, anth):
    client = monitor(anthropic_client(anth.url))
    with client.messages.stream(model="claude-test", max_tokens=50, messages=QUESTION) as stream:
        assert type(stream).__name__ == "MessageStream"
        text = "".join(stream.text_stream)
    assert text == anth.text

    async def main():
        aclient = monitor(anthropic_client(anth.url, anthropic.AsyncAnthropic))
        async with aclient.messages.stream(model="c", max_tokens=5, messages=QUESTION) as s:
            return await s.get_final_message()

    final = asyncio.run(main())
    assert final.content[0].text == anth.text
    anth.fail = (400, "bad request")
    failing = client.messages.stream(model="c", max_tokens=5, messages=QUESTION)
    with pytest.raises(anthropic.BadRequestError), failing:
        pass
    plain, streamed, failed = sent(collector, 3)
    assert plain["output"] == anth.text and streamed["output"] == anth.text
    assert plain["usage"] == {"input_tokens": 11, "output_tokens": 7}
    assert plain["input"] == QUESTION and plain["model"] == "claude-test"
    assert failed["error"].startswith("BadRequestError")


# -- LiteLLM -------------------------------------------------------------------------------------
def test_litellm_completion_acompletion_and_stream(collector, oai, anth):
    import litellm  # in the dev extra; imported here as it takes seconds

    oai.default = fake_openai.ok("Berlin.", usage=(5, 1))
    traced = monitor(litellm)
    kwargs = dict(model="openai/test-model", api_key="sk-test", messages=QUESTION)
    answer = traced.completion(api_base=oai.url, **kwargs)
    assert type(answer) is litellm.ModelResponse
    assert answer.choices[0].message.content == "Berlin."
    again = asyncio.run(traced.acompletion(api_base=oai.url, **kwargs))
    assert again.choices[0].message.content == "Berlin."
    chunks = list(monitor(litellm.completion)(api_base=anth.openai_url, stream=True, **kwargs))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == anth.text
    traces = sent(collector, 3)
    assert [t["output"] for t in traces] == ["Berlin.", "Berlin.", anth.text]
    assert traces[0]["usage"] == {"input_tokens": 5, "output_tokens": 1}
    assert traces[0]["input"] == QUESTION


# -- callback ------------------------------------------------------------------------------------
def test_callback_chooses_what_is_stored_and_a_failing_one_changes_nothing(collector, oai):
    oai.default = fake_openai.ok("Paris.")

    def question_and_answer(raw_input, raw_output):
        return {
            "input": raw_input["messages"][-1]["content"],
            "output": raw_output.choices[0].message.content.upper(),
        }

    def broken(raw_input, raw_output):
        raise ValueError("callback bug")

    good = monitor(openai_client(oai.url), callback=question_and_answer)
    bad = monitor(openai_client(oai.url), callback=broken)
    assert good.chat.completions.create(model="m", messages=QUESTION).choices
    assert bad.chat.completions.create(model="m", messages=QUESTION).choices
    first, second = sent(collector, 2)
    assert first["input"] == "What is the capital of France?" and first["output"] == "PARIS."
    assert second["input"] == QUESTION and second["output"] == "Paris."


def test_monitor_refuses_what_it_cannot_wrap():
    with pytest.raises(TypeError, match="unsupported client"):
        monitor(object())
    with pytest.raises(TypeError, match="metadata must be a dict"):
        monitor(openai.OpenAI(api_key="x"), metadata=["a"])


# -- @trace_function_call ------------------------------------------------------------------------
def test_functions_nest_into_one_trace_with_contexts(collector, oai):
    oai.default = fake_openai.ok("Paris.")
    client = monitor(openai_client(oai.url))

    @trace_function_call
    def retrieve(query: str) -> list[str]:
        return ["Paris is the capital of France.", "France is in Europe."]

    @trace_function_call
    def build_prompt(query: str, docs: list[str]) -> str:
        return f"{docs[0]}\n\n{query}"

    @trace_function_call
    def answer(query: str) -> str:
        docs = retrieve(query)
        prompt = build_prompt(query, docs)
        reply = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": prompt}]
        )
        return reply.choices[0].message.content

    assert answer("Capital of France?") == "Paris."
    [trace] = sent(collector, 1)
    assert trace["input"] == "Capital of France?" and trace["output"] == "Paris."
    assert trace["contexts"] == ["Paris is the capital of France.", "France is in Europe."]
    spans = {
        s["name"] if s["kind"] == "llm" else s["name"].rsplit(".", 1)[-1]: s for s in trace["spans"]
    }
    root = spans["answer"]
    assert root["parent_id"] is None
    assert {spans[n]["parent_id"] for n in ("retrieve", "build_prompt", "chat.completions")} == {
        root["id"]
    }
    assert spans["retrieve"]["kind"] == "retrieval" and spans["build_prompt"]["kind"] == "function"
    assert spans["chat.completions"]["attributes"]["contexts"] == trace["contexts"]
    assert trace["model"] == "m" and trace["usage"]["input_tokens"] == 10


def test_retrieval_before_a_plain_call_joins_its_trace(collector, oai):
    oai.default = fake_openai.ok("Paris.")
    client = monitor(openai_client(oai.url))

    @trace_function_call(kind="retrieval")
    def search(query: str) -> str:
        return "Paris is the capital of France."

    search("capital")
    client.chat.completions.create(model="m", messages=QUESTION)
    [trace] = sent(collector, 1)
    assert trace["contexts"] == ["Paris is the capital of France."]
    assert [s["kind"] for s in trace["spans"]] == ["retrieval", "llm"]
    assert trace["input"] == QUESTION


def test_exceptions_are_recorded_and_reraised_sync_and_async(collector):
    @trace_function_call
    def fails(x: int) -> int:
        raise KeyError(x)

    @trace_function_call
    async def doubles(x: int) -> int:
        await asyncio.sleep(0)
        return 2 * x

    @trace_function_call
    async def outer() -> list[int]:
        return [await doubles(1), await doubles(2)]

    with pytest.raises(KeyError):
        fails(3)
    assert asyncio.run(outer()) == [2, 4]
    # function-only traces are held a moment for an LLM call to take in; flush sends them
    failed, nested = sent(collector, 2)
    assert failed["error"] == "KeyError: 3" and failed["input"] == 3
    assert failed["spans"][0]["input"] == {"x": 3}
    assert failed["spans"][0]["error"] == "KeyError: 3"
    assert nested["output"] == [2, 4] and len(nested["spans"]) == 3


def test_async_function_spans_form_a_tree(collector, oai):
    oai.default = fake_openai.ok("ok")
    client = monitor(openai_client(oai.url, openai.AsyncOpenAI))

    @trace_function_call
    async def step(n: int) -> int:
        return n

    @trace_function_call
    async def pipeline() -> str:
        await asyncio.gather(step(1), step(2))
        reply = await client.chat.completions.create(model="m", messages=QUESTION)
        return reply.choices[0].message.content

    assert asyncio.run(pipeline()) == "ok"
    [trace] = sent(collector, 1)
    by_name = {s["name"].rsplit(".", 1)[-1]: s for s in trace["spans"]}
    root_id = by_name["pipeline"]["id"]
    steps = [s for s in trace["spans"] if s["name"].endswith("step")]
    assert len(steps) == 2 and all(s["parent_id"] == root_id for s in steps)
    assert sorted(s["output"] for s in steps) == [1, 2]


def test_login_off_sends_nothing(oai):
    server = Collector().start()
    try:
        assert ragmetrics.login(off=True) is True
        before = exporter().stats()["queued"]
        client = monitor(openai_client(oai.url))

        @trace_function_call
        def retrieve(q: str) -> list[str]:
            return ["a passage"]

        assert retrieve("q") == ["a passage"]
        assert client.chat.completions.create(model="m", messages=QUESTION).choices
        assert exporter().stats()["queued"] == before
        assert server.attempts == 0
    finally:
        server.stop()


def test_a_stream_dropped_unread_is_still_recorded(collector, anth):
    client = monitor(openai_client(anth.openai_url))
    stream = client.chat.completions.create(model="m", messages=QUESTION, stream=True)
    stream.response.close()
    del stream
    gc.collect()  # openai's own stream holds a cycle (its generator refers to it)
    [trace] = sent(collector, 1)
    assert trace["output"] == "" and trace["spans"][0]["attributes"]["stream_closed_early"] is True
