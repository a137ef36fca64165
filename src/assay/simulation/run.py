"""`simulate` / `asimulate`: every scenario's conversation, concurrently, resumable, metered.

The run reuses the engine's pieces: its run directory (`engine.checkpoint.RunDirectory`: one
finished conversation per line of `cells.jsonl`, flushed as it finishes; a killed run resumes and
replays none of the finished ones; failed conversations are tried again), its progress bar, its
budget and usage meters, and its settings checks. Everything a run is given is checked before the
first model call: the scenarios (each row), the agent, the models, the numbers.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, overload

import anyio
from pydantic import ValidationError

from assay._util.sync import run_sync
from assay.engine.checkpoint import RunDirectory, fingerprint
from assay.engine.plan import check_settings
from assay.engine.progress import CellProgress
from assay.errors import UsageError
from assay.models.usage import Budget, budgeting
from assay.schema.outcome import Cell, Error, Ok
from assay.schema.usage import Usage
from assay.simulation.agents import agent_name, as_agent
from assay.simulation.conversation import Conversation, Talk
from assay.simulation.estimate import SimulationEstimate, build_models, estimate_simulation
from assay.simulation.result import SimulationResult
from assay.simulation.roles import Roles
from assay.simulation.scenario import Scenario, load_scenarios

Scenarios = str | Path | Iterable[Scenario | dict[str, Any]]
CELL = "conversation"  # the one "metric" name of a simulation's run directory


def _check_number(name: str, value: Any, *, low: int, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{name} must be a whole number, got {value!r}")
    if value < low:
        raise UsageError(f"{name} must be at least {low}, got {value}")


@overload
async def asimulate(
    agent: Any,
    scenarios: Scenarios,
    user_llm: Any = None,
    max_turns: int = 10,
    judge_llm: Any = None,
    *,
    concurrency: int = 4,
    run_dir: str | Path | None = None,
    show_progress: bool = True,
    budget: float | None = None,
    estimate: Literal[True],
    loop_limit: int | None = 3,
    agent_timeout: float | None = 300.0,
    language: str = "english",
) -> SimulationEstimate: ...


@overload
async def asimulate(
    agent: Any,
    scenarios: Scenarios,
    user_llm: Any = None,
    max_turns: int = 10,
    judge_llm: Any = None,
    *,
    concurrency: int = 4,
    run_dir: str | Path | None = None,
    show_progress: bool = True,
    budget: float | None = None,
    estimate: Literal[False] = False,
    loop_limit: int | None = 3,
    agent_timeout: float | None = 300.0,
    language: str = "english",
) -> SimulationResult: ...


@overload
async def asimulate(
    agent: Any,
    scenarios: Scenarios,
    user_llm: Any = None,
    max_turns: int = 10,
    judge_llm: Any = None,
    *,
    concurrency: int = 4,
    run_dir: str | Path | None = None,
    show_progress: bool = True,
    budget: float | None = None,
    estimate: bool = False,
    loop_limit: int | None = 3,
    agent_timeout: float | None = 300.0,
    language: str = "english",
) -> SimulationResult | SimulationEstimate: ...


async def asimulate(
    agent: Any,
    scenarios: Scenarios,
    user_llm: Any = None,
    max_turns: int = 10,
    judge_llm: Any = None,
    *,
    concurrency: int = 4,
    run_dir: str | Path | None = None,
    show_progress: bool = True,
    budget: float | None = None,
    estimate: bool = False,
    loop_limit: int | None = 3,
    agent_timeout: float | None = 300.0,
    language: str = "english",
) -> SimulationResult | SimulationEstimate:
    """Simulate a conversation with `agent` for every scenario.

    agent: a function (sync or async) taking the conversation so far (a list of `HumanMessage`,
        `AIMessage`, `ToolMessage`) and returning its reply: a string, an `AIMessage`, or a list of
        messages (an `AIMessage` with tool calls, `ToolMessage`s, then the final `AIMessage`); an
        `HttpAgent(url)`; a LangGraph graph; or an OpenAI Agents SDK `Agent`.
    scenarios: `Scenario`s or dicts, or a .jsonl / .json / .csv file of them.
    user_llm: the model that plays the user (a model string or an `LLM`); None: the configured
        default judge (ASSAY_LLM, else the embedded one).
    max_turns: the most user messages per conversation (a scenario's own `max_turns` wins).
    judge_llm: the model that decides after each agent reply whether the goal is met; None: the
        user's model.
    concurrency: conversations in flight at once (turns within one are in order).
    run_dir: a directory where each finished conversation is saved; running again with it resumes,
        replaying none of the finished conversations (failed ones are tried again).
    show_progress: a progress bar of conversations on stderr.
    budget: a spending cap in USD for the user's and the judge's calls; conversations not started
        when it is reached end as `BudgetExhausted` errors (a resumed run picks them up).
    estimate: return a `SimulationEstimate` (an upper bound on calls, tokens and cost) and call
        nothing.
    loop_limit: the same agent reply this many turns in a row, or the same tool call this many
        times in a row within a turn, ends the conversation as `AgentLooped` (None: never).
    agent_timeout: seconds allowed for one agent reply (None: no limit).
    language: the language of the user's and the judge's prompts ("english", "chinese").
    """
    _check_number("max_turns", max_turns, low=1)
    _check_number("concurrency", concurrency, low=1)
    _check_number("loop_limit", loop_limit, low=2, allow_none=True)
    check_settings(agent_timeout, budget)
    if estimate:
        return estimate_simulation(
            scenarios,
            user_llm=user_llm,
            judge_llm=judge_llm,
            max_turns=max_turns,
            language=language,
        )
    items = load_scenarios(scenarios)
    ask = as_agent(agent)
    user, judge = build_models(user_llm, judge_llm)
    roles = Roles(user, judge, language)
    talk = Talk(ask, roles, max_turns=max_turns, loop_limit=loop_limit, agent_timeout=agent_timeout)
    spec = {
        "kind": "simulation",
        "agent": agent_name(agent),
        "max_turns": max_turns,
        "loop_limit": loop_limit,
        "language": language,
        **roles.spec(),
    }
    return await _run(items, talk, spec, run_dir, show_progress, budget, concurrency)


async def _run(
    items: list[Scenario],
    talk: Talk,
    spec: dict[str, Any],
    run_dir: str | Path | None,
    show_progress: bool,
    budget: float | None,
    concurrency: int,
) -> SimulationResult:
    done: dict[int, Conversation] = {}
    checkpoint = RunDirectory(run_dir) if run_dir is not None else None
    if checkpoint is not None:
        kept = checkpoint.open(
            run_fingerprint=fingerprint([s.model_dump(mode="json") for s in items], [spec], {}),
            description={"n_rows": len(items), "simulation": spec},
            n_rows=len(items),
            metric_names=[CELL],
        )
        for (row, _), cell in kept.items():
            conversation = _from_cell(cell, items[row])
            if conversation is not None:
                done[row] = conversation
    resumed = len(done)
    pending = iter([index for index in range(len(items)) if index not in done])
    spending = Budget(budget) if budget is not None else None
    started = time.perf_counter()
    try:
        with CellProgress(
            len(items),
            done=resumed,
            enabled=show_progress,
            title="Simulating",
            unit="conversations",
        ) as progress:

            async def worker() -> None:
                for index in pending:
                    if spending is not None and spending.exhausted:
                        conversation = Conversation(
                            index=index,
                            scenario=items[index],
                            error=Error(
                                error_type="BudgetExhausted",
                                message=f"not started: the budget of ${spending.limit:g} was reached",
                                attempts=0,
                            ),
                        )
                    else:
                        conversation = await talk.run(index, items[index])
                    done[index] = conversation
                    if checkpoint is not None:
                        checkpoint.append(_to_cell(conversation))
                    progress.advance(failed=not conversation.ok)

            with budgeting(spending):
                async with anyio.create_task_group() as group:
                    for _ in range(min(concurrency, len(items) - resumed)):
                        group.start_soon(worker)
    finally:
        if checkpoint is not None:
            checkpoint.close()
    return SimulationResult(
        conversations=[done[index] for index in range(len(items))],
        seconds=time.perf_counter() - started,
        run_dir=str(run_dir) if run_dir is not None else None,
        resumed=resumed,
    )


def _to_cell(conversation: Conversation) -> Cell:
    outcome: Ok | Error
    if conversation.error is not None:
        outcome = conversation.error
    else:
        outcome = Ok(
            value=conversation.status,
            reason=conversation.reason,
            details={
                "turns": conversation.turns,
                "messages": [m.model_dump(mode="json") for m in conversation.messages],
            },
        )
    return Cell(
        row=conversation.index,
        metric=CELL,
        outcome=outcome,
        seconds=conversation.seconds,
        usage=conversation.usage,
    )


def _from_cell(cell: Cell, scenario: Scenario) -> Conversation | None:
    """A finished conversation read back; None (simulate it again) when the record is not one."""
    outcome = cell.outcome
    if not isinstance(outcome, Ok) or not isinstance(outcome.details, dict):
        return None
    try:
        return Conversation(
            index=cell.row,
            scenario=scenario,
            ended=outcome.value,
            reason=outcome.reason,
            turns=outcome.details.get("turns", 0),
            messages=outcome.details.get("messages", []),
            usage=cell.usage or Usage(),
            seconds=cell.seconds,
        )
    except ValidationError:
        return None


@overload
def simulate(
    agent: Any,
    scenarios: Scenarios,
    user_llm: Any = None,
    max_turns: int = 10,
    judge_llm: Any = None,
    *,
    concurrency: int = 4,
    run_dir: str | Path | None = None,
    show_progress: bool = True,
    budget: float | None = None,
    estimate: Literal[True],
    loop_limit: int | None = 3,
    agent_timeout: float | None = 300.0,
    language: str = "english",
) -> SimulationEstimate: ...


@overload
def simulate(
    agent: Any,
    scenarios: Scenarios,
    user_llm: Any = None,
    max_turns: int = 10,
    judge_llm: Any = None,
    *,
    concurrency: int = 4,
    run_dir: str | Path | None = None,
    show_progress: bool = True,
    budget: float | None = None,
    estimate: Literal[False] = False,
    loop_limit: int | None = 3,
    agent_timeout: float | None = 300.0,
    language: str = "english",
) -> SimulationResult: ...


@overload
def simulate(
    agent: Any,
    scenarios: Scenarios,
    user_llm: Any = None,
    max_turns: int = 10,
    judge_llm: Any = None,
    *,
    concurrency: int = 4,
    run_dir: str | Path | None = None,
    show_progress: bool = True,
    budget: float | None = None,
    estimate: bool = False,
    loop_limit: int | None = 3,
    agent_timeout: float | None = 300.0,
    language: str = "english",
) -> SimulationResult | SimulationEstimate: ...


def simulate(*args: Any, **kwargs: Any) -> SimulationResult | SimulationEstimate:
    """Synchronous twin of `asimulate` (same parameters); works inside a running event loop too."""
    return run_sync(asimulate(*args, **kwargs))


__all__ = ["SimulationEstimate", "asimulate", "estimate_simulation", "simulate"]
