"""Scripted booking agents whose outcome is set by construction, for the agent metrics' tests and
benchmark: one that succeeds, one that fails (the booking tool refuses), one that loops (searches
again and again, never books) and one that raises.

Each states its plan ("Plan: 1) ... 2) ... 3) ...") and then acts; the tools' schemas and the
shortest successful trajectory are given beside them. `simulated(...)` runs one of them through
`assay.simulation.simulate` with whatever user and goal judge the caller brings (the user's
messages say nothing of the script, so a judge cannot read the outcome from them).
"""

from __future__ import annotations

from typing import Any

from assay.schema.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from assay.schema.samples import MultiTurnSample
from assay.simulation import Scenario, SimulationResult, simulate

PLAN = "Plan: 1) search for restaurants, 2) book a table, 3) confirm the booking to you."
PLAN_STEPS = ["search for restaurants", "book a table", "confirm the booking to the user"]
TASKS = ["find an Italian restaurant in Turin", "book a table for two at 8 pm"]

TOOLS: dict[str, dict[str, Any]] = {
    "search_restaurants": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "cuisine": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "book_table": {
        "type": "object",
        "properties": {
            "restaurant": {"type": "string"},
            "people": {"type": "integer", "minimum": 1},
            "time": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
        },
        "required": ["restaurant", "people", "time"],
        "additionalProperties": False,
    },
}
SEARCH = ToolCall(name="search_restaurants", args={"city": "Turin", "cuisine": "Italian"})
BOOK = ToolCall(name="book_table", args={"restaurant": "Da Gino", "people": 2, "time": "20:00"})
SHORTEST = [SEARCH, BOOK]
FOUND = ToolMessage(content='{"results": ["Da Gino", "Osteria Rosa"]}')
BOOKED = ToolMessage(content='{"status": "booked", "restaurant": "Da Gino", "time": "20:00"}')
REFUSED = ToolMessage(content='{"error": "no table free at 20:00"}')
LOOPS = 4  # searches the looping agent makes in a turn


def succeeding_agent(messages: list[Any]) -> list[AIMessage | ToolMessage]:
    return [
        AIMessage(content=PLAN, tool_calls=[SEARCH]),
        FOUND,
        AIMessage(content="", tool_calls=[BOOK]),
        BOOKED,
        AIMessage(content="Booked: Da Gino, tonight at 20:00 for two."),
    ]


def failing_agent(messages: list[Any]) -> list[AIMessage | ToolMessage]:
    return [
        AIMessage(content=PLAN, tool_calls=[SEARCH]),
        FOUND,
        AIMessage(content="", tool_calls=[BOOK]),
        REFUSED,
        AIMessage(content="Sorry, Da Gino has no table free at 8 pm, so I could not book."),
    ]


def looping_agent(messages: list[Any]) -> list[AIMessage | ToolMessage]:
    turn: list[AIMessage | ToolMessage] = [AIMessage(content=PLAN, tool_calls=[SEARCH]), FOUND]
    for _ in range(LOOPS - 1):
        turn += [AIMessage(content="", tool_calls=[SEARCH]), FOUND]
    return [*turn, AIMessage(content="I am still looking for the best restaurant for you.")]


def raising_agent(messages: list[Any]) -> list[AIMessage | ToolMessage]:
    raise RuntimeError("the booking service is down")


AGENTS = {
    "succeeds": succeeding_agent,
    "fails": failing_agent,
    "loops": looping_agent,
    "raises": raising_agent,
}
GOAL = "Book a table for two at an Italian restaurant in Turin tonight at 8 pm."


def scripted_run(outcome: str) -> list[HumanMessage | AIMessage | ToolMessage]:
    """One user turn and the agent's reply, as a conversation (no simulation)."""
    return [HumanMessage(content=GOAL), *AGENTS[outcome]([])]


def scenarios(outcome: str, count: int = 1) -> list[Scenario]:
    return [
        Scenario(
            persona="A visitor to Turin who writes short messages.",
            goal=GOAL,
            reference_outcome="A table for two is booked at an Italian restaurant in Turin at 8 pm.",
            name=f"{outcome}-{n}",
        )
        for n in range(count)
    ]


def simulated(
    outcome: str, user_llm: Any, judge_llm: Any, count: int = 1, **options: Any
) -> SimulationResult:
    """`count` simulated conversations with the agent scripted to `outcome`. No loop guard: the
    looping agent's run is kept, to be scored."""
    options = {"max_turns": 1, "loop_limit": None, "show_progress": False, **options}
    return simulate(
        AGENTS[outcome], scenarios(outcome, count), user_llm, judge_llm=judge_llm, **options
    )


def with_shortest(sample: MultiTurnSample) -> MultiTurnSample:
    """The sample with the shortest successful trajectory as its reference calls."""
    return sample.model_copy(update={"reference_tool_calls": list(SHORTEST)})


__all__ = [
    "AGENTS",
    "BOOK",
    "GOAL",
    "LOOPS",
    "PLAN",
    "PLAN_STEPS",
    "SEARCH",
    "SHORTEST",
    "TASKS",
    "TOOLS",
    "scenarios",
    "scripted_run",
    "simulated",
    "with_shortest",
]
