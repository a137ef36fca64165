"""Replay (#43 §4) with scripted agents: one that behaves as recorded, one whose new model asks
for other arguments (a typed `ReplayMiss`, or a live call when asked), one that raises, loops,
hangs or swallows a miss; async agents, sessions, repeated calls, the factory's checks."""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest

import assay
from assay.errors import UsageError
from assay.schema.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from assay.schema.samples import MultiTurnSample
from assay.simulation.replay import ReplayMiss, ReplayTools, replay, replay_many
from assay.simulation.replay.tools import recorded_outputs

PARIS = ToolCall(name="get_weather", args={"city": "Paris"})


def recording(*questions: str) -> MultiTurnSample:
    """A conversation recorded with the weather agent: one call per question."""
    messages: list = []
    for question in questions:
        city = question.split()[-1].rstrip("?")
        sky = "sunny" if city == "Paris" else "cloudy"
        messages += [
            HumanMessage(content=question),
            AIMessage(content="", tool_calls=[ToolCall(name="get_weather", args={"city": city})]),
            ToolMessage(content=json.dumps({"sky": sky})),
            AIMessage(content=f"It is {sky} in {city}."),
        ]
    return MultiTurnSample(user_input=messages, metadata={"trace_id": "t-1"})


def make_weather_agent(tools, model=None, system_prompt=None):
    """Asks the weather of the question's city; the "typo-model" asks for "Pari" instead."""

    def agent(messages):
        city = messages[-1].content.split()[-1].rstrip("?")
        if model == "typo-model":
            city = city[:-1]
        sky = json.loads(tools["get_weather"](city=city))["sky"]
        prefix = f"{system_prompt} " if system_prompt else ""
        return f"{prefix}It is {sky} in {city}."

    return agent


def test_an_agent_that_behaves_as_recorded_replays_the_same():
    result = replay(recording("Weather in Paris?"), agent=make_weather_agent)
    assert result.ok and result.tool_call_diff.same and not result.final_answer_changed
    assert result.replayed is not None
    # the agent answered in text only: the calls it made through `tools` are in the trajectory
    assert [type(m) for m in result.replayed.user_input] == [
        HumanMessage,
        AIMessage,
        ToolMessage,
        AIMessage,
    ]
    assert result.replayed.tool_calls() == [PARIS]
    assert [u.source for u in result.uses] == ["recording"]
    assert result.replayed.metadata == {"trace_id": "t-1"}


def test_model_and_system_prompt_reach_the_factory_and_a_miss_is_typed():
    result = replay(recording("Weather in Paris?"), agent=make_weather_agent, model="typo-model")
    assert not result.ok and result.error is not None
    assert result.error.error_type == "ReplayMiss"
    assert result.error.message == (
        'turn 1: get_weather({"city":"Pari"}) is not in the recording '
        '(it holds get_weather with {"city":"Paris"})'
    )
    assert result.misses == [ToolCall(name="get_weather", args={"city": "Pari"})]
    prompted = replay(recording("Weather in Paris?"), make_weather_agent, system_prompt="Hi!")
    assert prompted.replayed_answer == "Hi! It is sunny in Paris."
    assert prompted.final_answer_changed and prompted.tool_call_diff.same


def test_a_miss_goes_live_when_asked():
    live = []

    def get_weather(city):
        live.append(city)
        return {"sky": "foggy"}

    result = replay(
        recording("Weather in Paris?"),
        agent=make_weather_agent,
        model="typo-model",
        tools=[get_weather],
        on_miss="live",
    )
    assert result.ok and live == ["Pari"]
    assert result.live_calls == [ToolCall(name="get_weather", args={"city": "Pari"})]
    assert result.final_answer_changed and result.replayed_answer == "It is foggy in Pari."
    assert str(result.tool_call_diff) == (
        '- get_weather({"city":"Paris"})\n+ get_weather({"city":"Pari"})'
    )
    assert result.tool_call_diff.removed == [PARIS]


def test_an_agent_that_swallows_a_miss_is_still_a_miss():
    def factory(tools):
        def agent(messages):
            with contextlib.suppress(ReplayMiss):
                tools["send_email"](to="ann")
            return "I could not send it."

        return agent

    result = replay(recording("Weather in Paris?"), agent=factory)
    assert result.error is not None and result.error.error_type == "ReplayMiss"
    assert result.error.message == (
        'turn 1: send_email({"to":"ann"}) is not in the recording (it holds no call of send_email)'
    )


def test_an_agent_that_raises_fails_its_replay_with_what_it_said():
    def factory(tools):
        def agent(messages):
            if "Rome" in messages[-1].content:
                raise RuntimeError("rate limit of the new model")
            return make_weather_agent(tools)(messages)

        return agent

    result = replay(recording("Weather in Paris?", "And in Rome?"), agent=factory)
    assert result.error is not None and result.error.error_type == "AgentError"
    assert result.error.message == (
        "turn 2: the agent raised RuntimeError: rate limit of the new model"
    )
    assert result.replayed is not None
    assert [m.content for m in result.replayed.user_input if isinstance(m, HumanMessage)] == [
        "Weather in Paris?",
        "And in Rome?",
    ]


def test_an_agent_that_loops_is_stopped():
    def calls_forever(tools):
        def agent(messages):
            while True:
                tools["get_weather"](city="Paris")

        return agent

    endless = replay(recording("Weather in Paris?"), agent=calls_forever, max_tool_calls=5)
    assert endless.error is not None and endless.error.error_type == "AgentLooped"
    assert "more than 5 tool calls" in endless.error.message

    def repeats_itself(tools):
        def agent(messages):
            turn: list = []
            for _ in range(3):
                turn += [AIMessage(content="", tool_calls=[PARIS]), ToolMessage(content="{}")]
            return [*turn, AIMessage(content="Sunny.")]

        return agent

    looped = replay(recording("Weather in Paris?"), agent=repeats_itself)
    assert looped.error is not None and looped.error.error_type == "AgentLooped"
    assert "3 times in a row" in looped.error.message


def test_an_async_agent_that_hangs_times_out_and_one_that_answers_is_replayed():
    def factory(tools):
        async def agent(messages):
            if "Rome" in messages[-1].content:
                await asyncio.sleep(30)
            sky = json.loads(await tools.acall("get_weather", {"city": "Paris"}))["sky"]
            return [
                AIMessage(content="", tool_calls=[PARIS]),
                ToolMessage(content=json.dumps({"sky": sky})),
                AIMessage(content=f"It is {sky} in Paris."),
            ]

        return agent

    done = replay(recording("Weather in Paris?"), agent=factory)
    assert done.ok and done.tool_call_diff.same and not done.final_answer_changed
    hung = replay(recording("Weather in Paris?", "And in Rome?"), agent=factory, agent_timeout=0.3)
    assert hung.error is not None and hung.error.error_type == "AgentTimeout"
    assert hung.error.message == "turn 2: the agent did not reply within 0.3 s"


def test_a_session_replays_turn_by_turn_on_the_replayed_history():
    seen = []

    def factory(tools):
        def agent(messages):
            seen.append(len(messages))
            return make_weather_agent(tools)(messages)

        return agent

    result = replay(recording("Weather in Paris?", "And in Rome?"), agent=factory)
    assert result.ok and result.tool_call_diff.same
    assert seen == [1, 5]  # the second turn sees the first, its tool call and output included
    assert result.replayed_answer == "It is cloudy in Rome."


def test_repeated_calls_are_answered_in_order_then_the_last_again_or_a_miss():
    sample = MultiTurnSample(
        user_input=[
            HumanMessage(content="Roll twice"),
            AIMessage(content="", tool_calls=[ToolCall(name="roll"), ToolCall(name="roll")]),
            ToolMessage(content="3"),
            ToolMessage(content="5"),
            AIMessage(content="3 and 5"),
        ]
    )
    assert recorded_outputs(sample) == {("roll", "{}"): ["3", "5"]}
    tools = ReplayTools(recorded_outputs(sample))
    assert [tools.call("roll") for _ in range(3)] == ["3", "5", "5"]
    assert list(tools) == ["roll"] and "roll" in tools and len(tools) == 1
    strict = ReplayTools(recorded_outputs(sample), repeat_last=False)
    strict.call("roll"), strict.call("roll")
    with pytest.raises(ReplayMiss) as caught:
        strict.call("roll")
    assert caught.value.tool == "roll" and caught.value.arguments == {}
    assert str(caught.value) == (
        "roll({}) is not in the recording (it holds 2 answer(s) of this call, all given already)"
    )


def test_configuration_mistakes_are_refused_before_any_work():
    calls = []

    def no_model(tools):
        calls.append(1)
        return lambda messages: "x"

    with pytest.raises(UsageError, match="takes no 'model' parameter"):
        replay(recording("Weather in Paris?"), agent=no_model, model="m")
    with pytest.raises(UsageError, match="on_miss='live' needs the live tool functions"):
        replay(recording("Weather in Paris?"), agent=no_model, on_miss="live")
    with pytest.raises(UsageError, match="on_miss must be"):
        replay(recording("Weather in Paris?"), agent=no_model, on_miss="skip")
    with pytest.raises(UsageError, match="agent must be a factory"):
        replay(recording("Weather in Paris?"), agent="not an agent")
    assert calls == []


def test_many_replays_make_a_regression_set_and_assay_replay_is_the_function():
    recordings = [recording("Weather in Paris?"), recording("Weather in Rome?")]

    def factory(tools, model=None):
        def agent(messages):
            if "Rome" in messages[-1].content:
                return "I cannot tell."  # the new model stops calling the tool
            return make_weather_agent(tools)(messages)

        return agent

    replays = replay_many(recordings, agent=factory, model="new", concurrency=2)
    assert replays.counts() == {"same": 1, "changed": 1, "error": 0}
    [same, changed] = replays.dataset
    assert same.reference_tool_calls == [PARIS] and same.metadata["tool_calls_same"] is True
    assert changed.reference == "It is cloudy in Rome."
    assert changed.reference_tool_calls == [ToolCall(name="get_weather", args={"city": "Rome"})]
    assert changed.metadata is not None and changed.metadata["final_answer_changed"] is True
    scored = assay.evaluate(
        replays.dataset, metrics=[assay.ToolCallAccuracy()], show_progress=False
    )
    assert scored["tool_call_accuracy"] == [1.0, 0.0]
    assert len(replays.originals) == 2
    assert assay.replay(recordings[0], agent=make_weather_agent).tool_call_diff.same


def test_both_trajectories_are_scored_by_a_loopback_judge():
    """AgentGoalAccuracyWithReference through `evaluate` on a loopback judge that says yes when
    the conversation holds the reference's last word: the recording ends on "Paris.", the replay
    whose agent gives up does not, and a failed replay has only its recording scored."""
    from assay import AgentGoalAccuracyWithReference
    from assay.models.factory import llm_factory
    from tests.models.fake_openai import serve
    from tests.simulation.test_end_to_end import world

    def gloomy(tools, model=None):
        def agent(messages):
            tools["get_weather"](city="Paris")
            return "I cannot tell." if model == "gloomy" else "It is sunny in Paris."

        return agent

    for fake in serve():
        fake.default = world()
        llm = llm_factory(fake.model_string(), cache=False)
        metric = AgentGoalAccuracyWithReference()
        sample = recording("Weather in Paris?")
        result = replay(
            sample, gloomy, model="gloomy", metrics=[metric], llm=llm, reference="Sunny in Paris."
        )
        assert result.ok and result.final_answer_changed and result.tool_call_diff.same
        assert result.scores["original"]["agent_goal_accuracy"].value == 1.0
        assert result.scores["replayed"]["agent_goal_accuracy"].value == 0.0
        assert result.score_change() == {"agent_goal_accuracy": -1.0}
        assert "replayed agent_goal_accuracy: 0.0" in str(result)
        failed = replay(
            sample,
            make_weather_agent,
            model="typo-model",
            metrics=[metric],
            llm=llm,
            reference="Paris.",
        )
        assert not failed.ok and list(failed.scores) == ["original"]
        with pytest.raises(UsageError, match="needs reference"):  # before any replay runs
            replay(sample, gloomy, metrics=[metric], llm=llm)
        assert fake.count == 3  # the two replays' scores, one call each


def test_an_async_live_tool_serves_sync_and_async_agents():
    async def get_weather(city):
        await asyncio.sleep(0)
        return {"sky": "windy"}

    def sync_factory(tools):
        def agent(messages):  # runs in a worker thread: the async tool runs on the replay's loop
            return f"It is {json.loads(tools['get_weather'](city='Lyon'))['sky']} in Lyon."

        return agent

    def async_factory(tools):
        async def agent(messages):
            sky = json.loads(await tools.acall("get_weather", {"city": "Lyon"}))["sky"]
            return f"It is {sky} in Lyon."

        return agent

    for factory in (sync_factory, async_factory):
        result = replay(
            recording("Weather in Paris?"),
            agent=factory,
            tools={"get_weather": get_weather},
            on_miss="live",
        )
        assert result.ok, result.error
        assert result.replayed_answer == "It is windy in Lyon."
        assert result.live_calls == [ToolCall(name="get_weather", args={"city": "Lyon"})]


def test_a_session_of_traces_replays_as_one_conversation():
    from tests.integrations.test_trajectory import span, trace

    def turn(ident, created, question, city, sky):
        call = {
            "id": ident,
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": city})},
        }
        sent = [
            {"role": "user", "content": question},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": ident, "content": json.dumps({"sky": sky})},
        ]
        return trace(
            span(ident, "llm", input=sent, output=f"It is {sky} in {city}."),
            ident=ident,
            metadata={"session_id": "s-7"},
            created=created,
        )

    session = [
        turn("b", 2, "And in Rome?", "Rome", "cloudy"),
        turn("a", 1, "Weather in Paris?", "Paris", "sunny"),
    ]
    result = replay(session, agent=make_weather_agent)
    assert result.ok and result.tool_call_diff.same and not result.final_answer_changed
    assert [c.args["city"] for c in result.original.tool_calls()] == ["Paris", "Rome"]
    assert result.original.metadata is not None and result.original.metadata["trace_ids"] == [
        "a",
        "b",
    ]


def test_the_async_twins_run_inside_an_event_loop():
    from assay.simulation.replay import areplay, areplay_many

    async def main():
        one = await areplay(recording("Weather in Paris?"), make_weather_agent)
        many = await areplay_many(
            [recording("Weather in Paris?"), recording("Weather in Rome?")], make_weather_agent
        )
        return one, many

    one, many = asyncio.run(main())
    assert one.ok and one.tool_call_diff.same
    assert repr(many) == "ReplaySet(2 replays: same=2, changed=0, error=0)"
