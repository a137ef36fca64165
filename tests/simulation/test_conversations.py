"""Simulated conversations with a scripted user, a scripted judge and deterministic agents: the
exact messages exchanged, each way a conversation ends, and each way an agent fails (as that
conversation's typed error, while the others finish)."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

from assay.errors import OutputParseError, UsageError
from assay.models.llm import LLM
from assay.models.providers.scripted import ScriptedProvider
from assay.models.usage import Price
from assay.schema.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from assay.simulation import Scenario, SimulationResult, asimulate, simulate
from tests.simulation.scripted import (
    fenced,
    say,
    scripted_judge,
    scripted_user,
    stop,
    verdict,
)

BOOK = "Book a table for two at 7 pm"


def booking_agent(messages):
    """Asks for the time, then books with a tool call and confirms."""
    last = messages[-1].content
    if "7 pm" in last:
        return [
            AIMessage(content="", tool_calls=[ToolCall(name="book", args={"time": "19:00"})]),
            ToolMessage(content='{"status": "booked"}'),
            AIMessage(content="Booked: a table for two at 7 pm."),
        ]
    return "For what time?"


def run(agent, scenarios, users, decide=lambda goal, text: False, **options) -> SimulationResult:
    user, _ = scripted_user(users)
    judge, _ = scripted_judge(decide)
    options.setdefault("show_progress", False)
    result = simulate(agent, scenarios, user_llm=user, judge_llm=judge, **options)
    assert isinstance(result, SimulationResult)
    return result


def test_a_conversation_is_exactly_what_the_user_and_the_agent_said():
    result = run(
        booking_agent,
        [Scenario(persona="a busy parent", goal=BOOK, reference_outcome="A 7 pm table is booked")],
        {BOOK: [say("Hi, I need a table for two."), say("At 7 pm tonight.")]},
        decide=lambda goal, text: '"booked"' in text,
    )
    (conversation,) = result.conversations
    assert conversation.messages == [
        HumanMessage(content="Hi, I need a table for two."),
        AIMessage(content="For what time?"),
        HumanMessage(content="At 7 pm tonight."),
        AIMessage(content="", tool_calls=[ToolCall(name="book", args={"time": "19:00"})]),
        ToolMessage(content='{"status": "booked"}'),
        AIMessage(content="Booked: a table for two at 7 pm."),
    ]
    assert (conversation.ended, conversation.turns) == ("goal_met", 2)
    assert conversation.reason == "the booking is confirmed"
    assert conversation.usage.requests == 4  # two user turns, two judge calls
    (sample,) = result.dataset
    assert sample.reference == "A 7 pm table is booked"
    assert sample.tool_calls() == [ToolCall(name="book", args={"time": "19:00"})]
    assert sample.metadata == {
        "scenario": "#1",
        "persona": "a busy parent",
        "goal": BOOK,
        "ended": "goal_met",
        "turns": 2,
    }


def test_the_user_sees_the_assistants_text_and_the_judge_sees_the_tool_calls():
    user, user_model = scripted_user({BOOK: [say("A table please."), say("7 pm.")]})
    judge, judge_model = scripted_judge(lambda goal, text: '"booked"' in text)
    simulate(
        booking_agent,
        [Scenario(persona="p", goal=BOOK, facts=["It is for 2 people"])],
        user_llm=user,
        judge_llm=judge,
        show_progress=False,
    )
    last_user = user_model.requests[-1]
    assert fenced(last_user, "conversation") == "User: A table please.\nAssistant: For what time?"
    assert fenced(last_user, "facts") == "[1] It is for 2 people"
    assert fenced(last_user, "persona") == "p"
    last_judge = fenced(judge_model.requests[-1], "conversation")
    assert 'AI: [tool call] book({"time": "19:00"})' in last_judge
    assert 'ToolOutput: {"status": "booked"}' in last_judge
    assert fenced(judge_model.requests[0], "reference_outcome") == "(not given)"


def test_the_user_giving_up_ends_the_conversation():
    result = run(
        lambda messages: "I only sell train tickets.",
        [Scenario(persona="p", goal="Refund my concert ticket")],
        {
            "Refund my concert ticket": [
                say("Refund my ticket, please."),
                stop("it only sells trains"),
            ]
        },
    )
    (conversation,) = result.conversations
    assert (conversation.ended, conversation.turns) == ("gave_up", 1)
    assert conversation.reason == "it only sells trains"
    assert [type(m).__name__ for m in conversation.messages] == ["HumanMessage", "AIMessage"]
    assert result.counts() == {"goal_met": 0, "gave_up": 1, "max_turns": 0, "error": 0}


def test_max_turns_ends_it_and_a_scenario_can_set_its_own():
    replies = iter(f"Answer {n}" for n in range(100))  # never the same reply twice
    users = {"g1": [say(f"question {n}") for n in range(9)], "g2": [say("again?")]}
    result = run(
        lambda messages: next(replies),
        [Scenario(persona="p", goal="g1"), Scenario(persona="p", goal="g2", max_turns=2)],
        users,
        max_turns=3,
        concurrency=1,
    )
    first, second = result.conversations
    assert (first.ended, first.turns, second.ended, second.turns) == (
        "max_turns",
        3,
        "max_turns",
        2,
    )
    assert [m.content for m in first.messages if isinstance(m, HumanMessage)] == [
        "question 0",
        "question 1",
        "question 2",
    ]


def _misbehaving(messages):
    goal_hint = messages[0].content
    if goal_hint == "raise":
        raise ValueError("the booking service is down")
    if goal_hint == "loop":
        return "Let me check that for you."
    if goal_hint == "none":
        return None
    if goal_hint == "human":
        return [HumanMessage(content="I am the user now")]
    if goal_hint == "tool-last":
        return [
            AIMessage(content="", tool_calls=[ToolCall(name="look", args={})]),
            ToolMessage(content="{}"),
        ]
    if goal_hint == "same-call":
        call = ToolCall(name="search", args={"q": "x"})
        return [
            AIMessage(content="", tool_calls=[call]),
            ToolMessage(content="[]"),
            AIMessage(content="", tool_calls=[call]),
            ToolMessage(content="[]"),
            AIMessage(content="", tool_calls=[call]),
            ToolMessage(content="[]"),
            AIMessage(content="Nothing found."),
        ]
    return "Done, it is booked."


def test_a_failing_agent_is_a_typed_error_of_its_conversation_while_the_others_finish():
    kinds = ["raise", "loop", "none", "human", "tool-last", "same-call", "fine"]
    scenarios = [Scenario(persona="p", goal=kind, name=kind) for kind in kinds]
    users = {kind: [say(kind)] for kind in kinds}
    result = run(
        _misbehaving,
        scenarios,
        users,
        decide=lambda goal, text: "booked" in text,
        concurrency=4,
        max_turns=5,
    )
    by_name = {c.name: c for c in result.conversations}
    errors = {name: c.error for name, c in by_name.items() if c.error is not None}
    assert {name: e.error_type for name, e in errors.items()} == {
        "raise": "AgentError",
        "loop": "AgentLooped",
        "none": "UnreadableAgentReply",
        "human": "UnreadableAgentReply",
        "tool-last": "UnreadableAgentReply",
        "same-call": "AgentLooped",
    }
    assert errors["raise"].message == (
        "turn 1: the agent raised ValueError: the booking service is down"
    )
    assert errors["loop"].message.startswith("turn 3: the agent gave the same reply 3 times")
    assert by_name["loop"].turns == 3  # the messages before the failure are kept
    assert "NoneType" in errors["none"].message
    assert "user message" in errors["human"].message
    assert "ends with a tool output" in errors["tool-last"].message
    assert "search({'q': 'x'}) 3 times in a row" in errors["same-call"].message
    assert by_name["fine"].ended == "goal_met"
    assert [sample.metadata["scenario"] for sample in result.dataset] == ["fine"]
    assert result.counts()["error"] == 6


def test_replies_in_many_shapes_are_read():
    shapes = {
        "text": "plain text",
        "ai": AIMessage(content="an AIMessage"),
        "dict": {"type": "ai", "content": "an assay dict"},
        "openai": {
            "role": "assistant",
            "content": "an OpenAI dict",
            "tool_calls": [{"function": {"name": "f", "arguments": '{"a": 1}'}}],
        },
    }
    result = run(
        lambda messages: shapes[messages[0].content],
        [Scenario(persona="p", goal=name, name=name) for name in shapes],
        {name: [say(name)] for name in shapes},
        decide=lambda goal, text: True,
    )
    replies = {c.name: c.messages[1] for c in result.conversations}
    assert replies["text"] == AIMessage(content="plain text")
    assert replies["dict"] == AIMessage(content="an assay dict")
    assert replies["openai"] == AIMessage(
        content="an OpenAI dict", tool_calls=[ToolCall(name="f", args={"a": 1})]
    )


def test_an_async_agent_and_a_slow_agent_that_times_out():
    async def fast(messages):
        await asyncio.sleep(0)
        return "Booked."

    async def slow(messages):
        await asyncio.sleep(5)
        return "too late"

    users = {"g": [say("book it")]}
    done = run(fast, [Scenario(persona="p", goal="g")], users, decide=lambda g, t: True)
    assert done.conversations[0].ended == "goal_met"
    began = time.monotonic()
    late = run(slow, [Scenario(persona="p", goal="g")], users, agent_timeout=0.2)
    assert time.monotonic() - began < 3
    error = late.conversations[0].error
    assert error is not None and error.error_type == "AgentTimeout"
    assert error.message == "turn 1: the agent did not reply within 0.2 s"


def test_sync_agents_run_in_threads_so_conversations_overlap():
    in_flight, peak, lock = [0], [0], threading.Lock()

    def agent(messages):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.2)
        with lock:
            in_flight[0] -= 1
        return "Done."

    scenarios = [Scenario(persona="p", goal=f"g{n}") for n in range(4)]
    users = {f"g{n}": [say("hello")] for n in range(4)}
    run(agent, scenarios, users, decide=lambda g, t: True, concurrency=4)
    assert peak[0] == 4


def test_the_user_stopping_before_its_first_message_or_failing_is_a_typed_error():
    result = run(booking_agent, [Scenario(persona="p", goal="g")], {"g": [stop()]})
    error = result.conversations[0].error
    assert error is not None and error.error_type == "SimulatedUserFailed"
    assert error.message == "simulated user: stopped before writing its first message"
    broken = LLM(ScriptedProvider(["not json at all"], repeat_last=True))
    judge, _ = scripted_judge(lambda g, t: True)
    failed = simulate(
        booking_agent,
        [Scenario(persona="p", goal="g")],
        user_llm=broken,
        judge_llm=judge,
        show_progress=False,
    )
    error = failed.conversations[0].error
    assert error is not None and error.error_type == OutputParseError.__name__
    assert error.message.startswith("simulated user: ")


def test_a_judge_failure_names_the_judge():
    user, _ = scripted_user({"g": [say("hi")]})
    judge = LLM(ScriptedProvider([RuntimeError("judge down")], repeat_last=True))
    result = simulate(
        booking_agent,
        [Scenario(persona="p", goal="g")],
        user_llm=user,
        judge_llm=judge,
        show_progress=False,
    )
    error = result.conversations[0].error
    assert error is not None and error.message == "goal judge: judge down"
    assert result.conversations[0].messages[-1] == AIMessage(content="For what time?")


def test_the_user_model_also_judges_when_no_judge_is_given():
    def both(request):
        if "goal_met" in str(request.messages[0].content):  # the judge's instruction
            return verdict(True)
        return say("hello")

    model = LLM(ScriptedProvider([both], repeat_last=True))
    result = simulate(
        booking_agent, [Scenario(persona="p", goal="g")], user_llm=model, show_progress=False
    )
    assert result.conversations[0].ended == "goal_met"


def test_bad_settings_are_refused_before_any_call():
    user, provider = scripted_user({"g": [say("hi")]})
    scenarios = [Scenario(persona="p", goal="g")]
    for options, message in [
        ({"max_turns": 0}, "max_turns must be at least 1"),
        ({"concurrency": 0}, "concurrency must be at least 1"),
        ({"loop_limit": 1}, "loop_limit must be at least 2"),
        ({"agent_timeout": -1}, "timeout must be more than 0"),
        ({"budget": -1.0}, "budget must be 0 USD or more"),
    ]:
        with pytest.raises(UsageError, match=message):
            simulate(booking_agent, scenarios, user_llm=user, judge_llm=user, **options)
    with pytest.raises(UsageError, match="agent must be a function"):
        simulate(42, scenarios, user_llm=user, judge_llm=user)
    with pytest.raises(UsageError, match="user_llm="):
        simulate(booking_agent, scenarios, user_llm=object(), judge_llm=user)
    assert provider.requests == []


def test_a_spent_budget_leaves_the_remaining_conversations_as_errors():
    user, _ = scripted_user({f"g{n}": [say("hi")] for n in range(3)})
    # the judge's one call costs far more than the budget: after the first conversation, no more
    judge = LLM(ScriptedProvider([verdict(True)], repeat_last=True), price=Price(1_000_000.0, 0.0))
    scenarios = [Scenario(persona="p", goal=f"g{n}") for n in range(3)]
    result = simulate(
        booking_agent,
        scenarios,
        user_llm=user,
        judge_llm=judge,
        budget=0.01,
        concurrency=1,
        show_progress=False,
    )
    assert result.conversations[0].ended == "goal_met"
    assert [c.error.error_type for c in result.conversations[1:] if c.error] == [
        "BudgetExhausted",
        "BudgetExhausted",
    ]


def test_asimulate_runs_on_the_callers_loop():
    user, _ = scripted_user({"g": [say("hi")]})
    judge, _ = scripted_judge(lambda g, t: True)

    async def main():
        return await asimulate(
            booking_agent,
            [{"persona": "p", "goal": "g"}],
            user,
            judge_llm=judge,
            show_progress=False,
        )

    result = asyncio.run(main())
    assert isinstance(result, SimulationResult) and result.counts()["goal_met"] == 1
    assert json.loads(result.conversations[0].model_dump_json())["ended"] == "goal_met"


def test_the_prompts_follow_the_language():
    user, user_model = scripted_user({"订餐": [say("你好")]})
    judge, judge_model = scripted_judge(lambda goal, text: True)
    simulate(
        booking_agent,
        [Scenario(persona="一位学生", goal="订餐")],
        user_llm=user,
        judge_llm=judge,
        language="chinese",
        show_progress=False,
    )
    assert "你扮演一位正在与 AI 助手对话的用户" in str(user_model.requests[0].messages[0].content)
    assert "判断到目前为止目标是否已经达成" in str(judge_model.requests[0].messages[0].content)
