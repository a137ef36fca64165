"""One simulated conversation, turn by turn, and what it ended as.

Each turn: the simulated user writes a message (or stops, which is giving up: the judge has not
found the goal met), the agent replies (within `agent_timeout`), and the judge decides whether the
goal is met. The conversation ends when the goal is met, the user gives up, or the user has sent
`max_turns` messages without the goal being met.

Whatever goes wrong becomes the conversation's typed `Error`, never an exception out of the run:
the agent raising (`AgentError`, naming the exception), timing out (`AgentTimeout`), answering
something that is not a reply (`UnreadableAgentReply`), repeating itself (`AgentLooped`), an HTTP
agent failing (`AgentEndpointError`), or a model call of the user or the judge failing (the
model error's own type, with "simulated user:" or "goal judge:" before its message). The
messages exchanged before the failure are kept on the record.
"""

from __future__ import annotations

import time
from typing import Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field

from assay.errors import first_leaf
from assay.models.usage import UsageMeter, metering
from assay.schema.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from assay.schema.outcome import Error
from assay.schema.samples import MultiTurnSample
from assay.schema.usage import Usage
from assay.simulation.agents import AgentFunction, read_reply, repeated_call, reply_key
from assay.simulation.errors import (
    AgentEndpointError,
    AgentLooped,
    SimulatedUserFailed,
    UnreadableAgentReply,
)
from assay.simulation.roles import Roles
from assay.simulation.scenario import Scenario

Ending = Literal["goal_met", "gave_up", "max_turns"]
ENDINGS: tuple[Ending, ...] = ("goal_met", "gave_up", "max_turns")


class Conversation(BaseModel):
    """One scenario's conversation and how it ended.

    ended: "goal_met", "gave_up" or "max_turns"; None when it failed (see `error`).
    turns: the user messages sent. reason: the judge's reason (goal met) or the user's (gave up).
    messages: the conversation, tool calls and tool outputs included (up to the failure, if any).
    """

    model_config = ConfigDict(extra="forbid")

    index: int
    scenario: Scenario
    ended: Ending | None = None
    turns: int = 0
    reason: str | None = None
    messages: list[AnyMessage] = Field(default_factory=list)
    error: Error | None = None
    usage: Usage = Field(default_factory=Usage)
    seconds: float = 0.0

    @property
    def name(self) -> str:
        return self.scenario.label(self.index)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def status(self) -> str:
        return self.ended or "error"

    def to_sample(self) -> MultiTurnSample:
        """The conversation as an evaluation sample: the reference is the scenario's reference
        outcome, and metadata says which scenario it was and how it ended."""
        scenario = self.scenario
        metadata: dict[str, Any] = {
            **(scenario.metadata or {}),
            "scenario": self.name,
            "persona": scenario.persona,
            "goal": scenario.goal,
            "ended": self.status,
            "turns": self.turns,
        }
        return MultiTurnSample(
            user_input=list(self.messages),
            reference=scenario.reference_outcome,
            metadata=metadata,
        )

    def __str__(self) -> str:
        how = self.ended or f"error {self.error.error_type if self.error else '?'}"
        return f"{self.name}: {how} after {self.turns} turn(s)"


class _Failed(Exception):
    """Internal: carries a conversation's typed error out of the turn loop."""

    def __init__(self, error: Error) -> None:
        super().__init__(error.message)
        self.error = error


def _from_model(exc: BaseException, who: str) -> Error:
    error = Error.from_exception(exc)
    return error.model_copy(update={"message": f"{who}: {error.message}"})


class Talk:
    """The settings every conversation of a run shares."""

    def __init__(
        self,
        agent: AgentFunction,
        roles: Roles,
        *,
        max_turns: int,
        loop_limit: int | None,
        agent_timeout: float | None,
    ) -> None:
        self.agent = agent
        self.roles = roles
        self.max_turns = max_turns
        self.loop_limit = loop_limit
        self.agent_timeout = agent_timeout

    async def run(self, index: int, scenario: Scenario) -> Conversation:
        """Simulate one scenario; never raises for a failure of the agent or of a model."""
        record = Conversation(index=index, scenario=scenario)
        meter = UsageMeter()
        started = time.perf_counter()
        with metering(meter):
            try:
                await self._talk(record)
            except _Failed as failed:
                record.error = failed.error
                record.ended = None
        record.usage = meter.usage
        record.seconds = time.perf_counter() - started
        return record

    async def _talk(self, record: Conversation) -> None:
        scenario = record.scenario
        limit = scenario.max_turns or self.max_turns
        replies: list[str] = []
        while record.turns < limit:
            try:
                user = await self.roles.next_user_turn(scenario, record.messages)
            except Exception as exc:
                raise _Failed(_from_model(exc, "simulated user")) from None
            if user.action == "stop":
                if not record.turns:
                    error = SimulatedUserFailed("stopped before writing its first message")
                    raise _Failed(_from_model(error, "simulated user"))
                record.ended, record.reason = "gave_up", user.reason or None
                return
            record.messages.append(HumanMessage(content=user.message))
            record.turns += 1
            turn = await self._agent_turn(record)
            record.messages.extend(turn)
            replies.append(reply_key(turn))
            self._check_loops(record, turn, replies)
            try:
                check = await self.roles.goal_check(scenario, record.messages)
            except Exception as exc:
                raise _Failed(_from_model(exc, "goal judge")) from None
            if check.goal_met:
                record.ended, record.reason = "goal_met", check.reason or None
                return
        record.ended = "max_turns"

    async def _agent_turn(self, record: Conversation) -> list[AIMessage | ToolMessage]:
        where = f"turn {record.turns}"
        conversation = list(record.messages)  # the agent gets a copy it may change freely
        reply: Any = None
        scope: anyio.CancelScope | None = None
        try:
            with anyio.fail_after(self.agent_timeout) as scope:
                reply = await self.agent(conversation)
            return read_reply(reply)
        except TimeoutError as exc:
            if scope is None or not scope.cancel_called:  # the agent's own timeout
                raise _Failed(
                    Error(
                        error_type="AgentError",
                        message=f"{where}: the agent raised {type(exc).__name__}: {exc or 'timed out'}",
                    )
                ) from None
            raise _Failed(
                Error(
                    error_type="AgentTimeout",
                    message=f"{where}: the agent did not reply within {self.agent_timeout:g} s",
                )
            ) from None
        except (UnreadableAgentReply, AgentEndpointError) as exc:
            raw = None if reply is None else repr(reply)[:1000]
            raise _Failed(
                Error(error_type=type(exc).__name__, message=f"{where}: {exc}", raw=raw)
            ) from None
        except Exception as exc:
            leaf = first_leaf(exc)
            if isinstance(leaf, (UnreadableAgentReply, AgentEndpointError)):
                raise _Failed(
                    Error(error_type=type(leaf).__name__, message=f"{where}: {leaf}")
                ) from None
            raise _Failed(
                Error(
                    error_type="AgentError",
                    message=f"{where}: the agent raised {type(leaf).__name__}: {leaf or repr(leaf)}",
                )
            ) from None

    def _check_loops(
        self, record: Conversation, turn: list[AIMessage | ToolMessage], replies: list[str]
    ) -> None:
        limit = self.loop_limit
        if limit is None:
            return
        where = f"turn {record.turns}"
        call = repeated_call(turn, limit)
        if call is not None:
            looped = AgentLooped(
                f"{where}: the agent called {call.name}({call.args}) {limit} times in a row"
            )
            raise _Failed(Error(error_type="AgentLooped", message=str(looped)))
        if len(replies) >= limit and len(set(replies[-limit:])) == 1:
            text = turn[-1].content.strip()
            looped = AgentLooped(
                f"{where}: the agent gave the same reply {limit} times in a row: {text[:120]!r}"
            )
            raise _Failed(Error(error_type="AgentLooped", message=str(looped)))


__all__ = ["ENDINGS", "Conversation", "Ending", "Talk"]
