"""The two model roles of a simulation: the user who talks, and the judge who decides when the
user's goal is met. Both ask through the model layer with a pydantic schema (its structured-output
ladder, retries, cache, budget and usage meter), with prompts that are YAML data
(`prompts/data/simulated_user.*.yaml`, `simulation_goal.*.yaml`).

The user sees the conversation as a user would: their own messages and the assistant's text,
not the assistant's tool calls. The judge sees everything, tool calls and outputs included.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.metrics.agent._conversation import conversation_text
from assay.metrics.judge import ask_json
from assay.prompts.prompt import Prompt, load_prompt
from assay.schema.messages import AIMessage, HumanMessage, ToolMessage
from assay.simulation.errors import SimulatedUserFailed
from assay.simulation.scenario import Scenario

USER_PROMPT = "simulated_user"
GOAL_PROMPT = "simulation_goal"
NOT_GIVEN = "(not given)"
NOTHING_YET = "(nothing yet: you write the first message)"
# A user message and a verdict are short: a capped answer keeps a runaway model cheap.
USER_MAX_TOKENS = 512
JUDGE_MAX_TOKENS = 256


class UserTurn(BaseModel):
    """What the simulated user does next."""

    action: Literal["continue", "stop"]
    message: str  # required, so a schema-following model always writes one ("" when stopping)
    reason: str = ""


class GoalCheck(BaseModel):
    """The judge's decision on whether the scenario's goal is met."""

    reason: str = Field(default="")
    goal_met: bool


def user_view(conversation: list[HumanMessage | AIMessage | ToolMessage]) -> str:
    """The conversation as its user saw it: their messages and the assistant's text."""
    if not conversation:
        return NOTHING_YET
    lines = []
    for message in conversation:
        if isinstance(message, HumanMessage):
            lines.append(f"User: {message.content}")
        elif isinstance(message, AIMessage) and message.content.strip():
            lines.append(f"Assistant: {message.content}")
    return "\n".join(lines)


def facts_text(scenario: Scenario) -> str:
    if not scenario.facts:
        return "(none)"
    return "\n".join(f"[{i}] {fact}" for i, fact in enumerate(scenario.facts, start=1))


class Roles:
    """The user model and the judge model of one run, with their prompts."""

    def __init__(self, user_llm: Any, judge_llm: Any, language: str = "english") -> None:
        self.user_llm = user_llm
        self.judge_llm = judge_llm
        self.user_prompt: Prompt = load_prompt(USER_PROMPT, language)
        self.goal_prompt: Prompt = load_prompt(GOAL_PROMPT, language)

    def spec(self) -> dict[str, Any]:
        """What decides the conversations: both models and both prompts' wording."""
        return {
            "user_llm": _identity(self.user_llm),
            "judge_llm": _identity(self.judge_llm),
            "prompts": [self.user_prompt.describe(), self.goal_prompt.describe()],
        }

    async def next_user_turn(
        self, scenario: Scenario, conversation: list[HumanMessage | AIMessage | ToolMessage]
    ) -> UserTurn:
        turn = await ask_json(
            self.user_llm,
            self.user_prompt,
            {
                "persona": scenario.persona,
                "goal": scenario.goal,
                "facts": facts_text(scenario),
                "conversation": user_view(conversation),
            },
            UserTurn,
            max_tokens=USER_MAX_TOKENS,
        )
        if turn.action == "continue" and not turn.message.strip():
            raise SimulatedUserFailed(
                "the simulated user chose to continue but wrote an empty message"
            )
        return turn

    async def goal_check(
        self, scenario: Scenario, conversation: list[HumanMessage | AIMessage | ToolMessage]
    ) -> GoalCheck:
        return await ask_json(
            self.judge_llm,
            self.goal_prompt,
            {
                "goal": scenario.goal,
                "reference_outcome": scenario.reference_outcome or NOT_GIVEN,
                "conversation": conversation_text(conversation),
            },
            GoalCheck,
            max_tokens=JUDGE_MAX_TOKENS,
        )


def _identity(llm: Any) -> Any:
    identity = getattr(llm, "identity", None)
    if callable(identity):
        return identity()
    return type(llm).__name__


__all__ = ["GoalCheck", "Roles", "UserTurn", "facts_text", "user_view"]
