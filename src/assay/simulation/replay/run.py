"""`replay` / `areplay`: run the agent again on a recorded conversation, its tools answered from
the recording; `replay_many`: many recordings, concurrently, as a regression set.

The agent is given as a factory, called once per replay with keyword arguments:

    def make_agent(tools, model=None, system_prompt=None):
        ...            # build the agent with this model and prompt, calling tools through `tools`
        return agent   # a callable as `simulate` takes: the conversation in, the reply out

`tools` is the replay's `ReplayTools`; `model` and `system_prompt` are passed only when given to
`replay`, so a factory that takes neither is fine until they are asked for. The recording's user
messages are sent turn by turn (the same words, whatever the agent answers), the agent's replies
read as in `simulate`. A reply that shows no tool calls of its own gets the calls the agent made
through `tools` in that turn, so the replayed trajectory always holds them.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import anyio

from assay._util.sync import run_sync
from assay.engine.plan import check_metric_fits, coerce_metrics
from assay.errors import DataError, UsageError, first_leaf
from assay.integrations._messages import ConvertedMessage
from assay.schema.dataset import EvaluationDataset
from assay.schema.messages import AIMessage, HumanMessage, ToolMessage
from assay.schema.outcome import Error
from assay.schema.samples import MultiTurnSample
from assay.simulation.agents import AgentFunction, as_agent, read_reply, repeated_call
from assay.simulation.errors import AgentEndpointError, AgentLooped, UnreadableAgentReply
from assay.simulation.replay.diff import ToolCallDiff, answer_changed
from assay.simulation.replay.result import ReplayResult, ReplaySet
from assay.simulation.replay.scoring import score_replays
from assay.simulation.replay.tools import (
    OnMiss,
    ReplayMiss,
    ReplayTools,
    live_tools,
    recorded_outputs,
)

_TYPED = (ReplayMiss, AgentLooped, UnreadableAgentReply, AgentEndpointError)


def as_recording(recording: Any, reference: str | None = None) -> MultiTurnSample:
    """What can be replayed: a `MultiTurnSample`, a trace (its JSON dict or a platform `Trace`),
    or the traces of one session (a list)."""
    from assay.integrations.trajectory import to_conversation, trace_to_sample

    if isinstance(recording, MultiTurnSample):
        sample = recording
    elif isinstance(recording, (list, tuple)):
        sample = to_conversation(recording)
    else:
        sample = trace_to_sample(recording)
    if reference is not None:
        sample = sample.model_copy(update={"reference": reference})
    if not any(isinstance(m, HumanMessage) for m in sample.user_input):
        raise DataError("the recording holds no user message to replay", field="user_input")
    return sample


def check_factory(factory: Any, options: dict[str, Any]) -> None:
    """Refuse, before any work, a factory that cannot take what replay will pass it."""
    if not callable(factory):
        raise UsageError(
            f"agent must be a factory: a function taking tools= (and model=, system_prompt= "
            f"when given) that returns the agent; got {type(factory).__name__}"
        )
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a builtin or C callable: nothing to check
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return
    for name in ("tools", *options):
        if name not in parameters:
            raise UsageError(
                f"the agent factory {getattr(factory, '__name__', factory)!r} takes no {name!r} "
                f"parameter; replay calls it as factory(tools=..., model=..., system_prompt=...)"
            )


def _failure(exc: Exception, where: str) -> Error:
    leaf = first_leaf(exc)
    if isinstance(leaf, _TYPED):
        return Error(error_type=type(leaf).__name__, message=f"{where}: {leaf}")
    return Error(
        error_type="AgentError",
        message=f"{where}: the agent raised {type(leaf).__name__}: {leaf or repr(leaf)}",
    )


async def _run(
    original: MultiTurnSample,
    agent: AgentFunction,
    tools: ReplayTools,
    *,
    timeout: float | None,
    loop_limit: int | None,
) -> tuple[list[ConvertedMessage], Error | None]:
    history: list[ConvertedMessage] = []
    turn_number = 0
    pending_humans: list[HumanMessage] = []
    messages = list(original.user_input)
    for index, message in enumerate(messages):
        if not isinstance(message, HumanMessage):
            if turn_number == 0 and not pending_humans:
                history.append(message)  # what the agent said before the user's first message
            continue
        pending_humans.append(message)
        following = messages[index + 1] if index + 1 < len(messages) else None
        if isinstance(following, HumanMessage):
            continue  # the user's next message belongs to the same turn
        turn_number += 1
        history.extend(pending_humans)
        pending_humans = []
        where = f"turn {turn_number}"
        before = len(tools.uses)
        scope: anyio.CancelScope | None = None
        try:
            with anyio.fail_after(timeout) as scope:
                reply = await agent(list(history))
            turn = read_reply(reply)
        except Exception as exc:
            if isinstance(exc, TimeoutError) and scope is not None and scope.cancel_called:
                late = f"{where}: the agent did not reply within {timeout:g} s"
                return history, Error(error_type="AgentTimeout", message=late)
            return history, _failure(exc, where)
        used = [u for u in tools.uses[before:] if u.source != "miss"]
        if used and not any(isinstance(m, AIMessage) and m.tool_calls for m in turn):
            shown: list[AIMessage | ToolMessage] = []
            for use in used:
                shown += [
                    AIMessage(content="", tool_calls=[use.call]),
                    ToolMessage(content=use.output or ""),
                ]
            turn = [*shown, *turn]
        history.extend(turn)
        missed = [u for u in tools.uses[before:] if u.source == "miss"]
        if missed:  # the agent caught the miss and went on: the replay is no longer the recording's
            return history, Error(error_type="ReplayMiss", message=f"{where}: {missed[0].miss}")
        call = repeated_call(turn, loop_limit) if loop_limit else None
        if call is not None:
            looped = AgentLooped(
                f"the agent called {call.name}({call.args}) {loop_limit} times in a row"
            )
            return history, Error(error_type="AgentLooped", message=f"{where}: {looped}")
    return history, None


async def areplay(
    recording: Any,
    agent: Callable[..., Any],
    *,
    model: Any = None,
    system_prompt: str | None = None,
    tools: Mapping[str, Callable[..., Any]] | Sequence[Callable[..., Any]] | None = None,
    on_miss: OnMiss = "raise",
    repeat_last: bool = True,
    metrics: Sequence[Any] | None = None,
    llm: Any = None,
    reference: str | None = None,
    agent_timeout: float | None = 300.0,
    max_tool_calls: int = 50,
    loop_limit: int | None = 3,
) -> ReplayResult:
    """Replay one recording (see the module docstring); async twin of `replay`."""
    [result] = (
        await areplay_many(
            [recording],
            agent,
            model=model,
            system_prompt=system_prompt,
            tools=tools,
            on_miss=on_miss,
            repeat_last=repeat_last,
            metrics=metrics,
            llm=llm,
            reference=reference,
            agent_timeout=agent_timeout,
            max_tool_calls=max_tool_calls,
            loop_limit=loop_limit,
            concurrency=1,
        )
    ).results
    return result


def replay(recording: Any, agent: Callable[..., Any], **options: Any) -> ReplayResult:
    """Run `agent` again on `recording` with every tool call answered from the recording.

    recording: a trace (its JSON dict or a platform `Trace`), the traces of one session (a list),
        or a `MultiTurnSample`.
    agent: the agent factory, `agent(tools=..., model=..., system_prompt=...)` -> the agent.
    model, system_prompt: handed to the factory (only when given).
    tools: live tool functions (a dict of name to function, or functions named by `__name__`),
        run for a call the recording does not hold when `on_miss="live"`.
    on_miss: "raise" (the default: the replay's error is a `ReplayMiss` naming the tool and its
        arguments) or "live".
    repeat_last: a call repeated more often than recorded gets the last recorded answer again
        (False: it is a miss).
    metrics, llm: score the recorded and the replayed trajectory through `evaluate`.
    reference: the reference outcome of both (else the recording's own).
    agent_timeout, max_tool_calls, loop_limit: an agent that hangs, calls tools without end, or
        makes the same call `loop_limit` times in a row in one turn is that replay's typed error.
    """
    return run_sync(areplay(recording, agent, **options))


async def areplay_many(
    recordings: Iterable[Any],
    agent: Callable[..., Any],
    *,
    model: Any = None,
    system_prompt: str | None = None,
    tools: Mapping[str, Callable[..., Any]] | Sequence[Callable[..., Any]] | None = None,
    on_miss: OnMiss = "raise",
    repeat_last: bool = True,
    metrics: Sequence[Any] | None = None,
    llm: Any = None,
    reference: str | None = None,
    agent_timeout: float | None = 300.0,
    max_tool_calls: int = 50,
    loop_limit: int | None = 3,
    concurrency: int = 4,
) -> ReplaySet:
    """Replay every recording (at most `concurrency` at once) and score them in one run."""
    if on_miss not in ("raise", "live"):
        raise UsageError(f"on_miss must be 'raise' or 'live', got {on_miss!r}")
    live = live_tools(tools)
    if on_miss == "live" and not live:
        raise UsageError(
            "on_miss='live' needs the live tool functions: pass tools={name: function}"
        )
    for name, value in (("max_tool_calls", max_tool_calls), ("concurrency", concurrency)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise UsageError(f"{name} must be a whole number of at least 1, got {value!r}")
    options: dict[str, Any] = {}
    if model is not None:
        options["model"] = model
    if system_prompt is not None:
        options["system_prompt"] = system_prompt
    check_factory(agent, options)
    samples = [as_recording(r, reference) for r in recordings]
    if metrics:  # a metric the recordings cannot feed is refused before any replay runs
        metrics = coerce_metrics(metrics)
        for metric in metrics:
            check_metric_fits(metric, EvaluationDataset(samples))
    results: list[ReplayResult | None] = [None] * len(samples)
    limiter = anyio.Semaphore(concurrency)

    async def one(index: int, original: MultiTurnSample) -> None:
        async with limiter:
            started = time.perf_counter()
            registry = ReplayTools(
                recorded_outputs(original),
                live=live,
                on_miss=on_miss,
                repeat_last=repeat_last,
                max_calls=max_tool_calls,
            )
            history: list[ConvertedMessage] = []
            error: Error | None = None
            try:
                runner = as_agent(agent(tools=registry, **options))
            except Exception as exc:
                error = _failure(exc, "building the agent")
            else:
                history, error = await _run(
                    original, runner, registry, timeout=agent_timeout, loop_limit=loop_limit
                )
            replayed = MultiTurnSample(
                user_input=list(history), reference=original.reference, metadata=original.metadata
            )
            results[index] = ReplayResult(
                original=original,
                replayed=replayed,
                tool_call_diff=ToolCallDiff.between(original.tool_calls(), replayed.tool_calls()),
                final_answer_changed=answer_changed(original, replayed),
                uses=list(registry.uses),
                error=error,
                seconds=time.perf_counter() - started,
            )

    async with anyio.create_task_group() as group:
        for index, sample in enumerate(samples):
            group.start_soon(one, index, sample)
    done = [r for r in results if r is not None]
    if metrics:
        await score_replays(done, metrics, llm)
    return ReplaySet(done)


def replay_many(recordings: Iterable[Any], agent: Callable[..., Any], **options: Any) -> ReplaySet:
    """Replay many recordings (options as `replay`, plus `concurrency`); the `ReplaySet`'s
    `dataset` is the regression dataset, `originals` the recordings to replay again later."""
    return run_sync(areplay_many(recordings, agent, **options))


__all__ = ["areplay", "areplay_many", "as_recording", "replay", "replay_many"]
