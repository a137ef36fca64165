"""One recorded trace as a conversation: the user's messages, the agent's answers with their tool
calls, and the tool outputs, in the order they happened.

The LLM calls say most of it: each call's messages are joined to the conversation so far
(`merge.extend`) and its answer appended. Tool spans then fill in what the calls do not show: a
call whose output no later LLM call was sent gets its output from the tool span that ran it
(same tool name and arguments, else the same name), and a tool span that matches no call (a tool
the code called itself) becomes a call with its output, placed after the last LLM answer that
ended before it started. A trace with no LLM call is the entry point's input, its tool calls and
its output. When the conversation does not end with an answer in text but the trace has an
output (the code answered after its last tool), that output is the final answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.errors import DataError
from assay.integrations._messages import ConvertedMessage
from assay.integrations.trajectory.chat import as_text, in_order
from assay.integrations.trajectory.merge import add_answer, canonical_args, extend
from assay.integrations.trajectory.spans import LLMStep, ToolStep, steps_of
from assay.schema.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from assay.schema.samples import MultiTurnSample


def as_trace(trace: Any, where: str = "trace") -> dict[str, Any]:
    """A trace as its JSON dict: a dict as it is, an SDK `Trace` (anything with `to_dict()`)."""
    to_dict = getattr(trace, "to_dict", None)
    if callable(to_dict) and not isinstance(trace, Mapping):
        trace = to_dict()
    if not isinstance(trace, Mapping):
        raise DataError(
            f"{where}: a trace must be a dict (the platform's trace JSON) or a platform Trace, "
            f"got {type(trace).__name__}"
        )
    return dict(trace)


def _tool_output(step: ToolStep) -> ToolMessage:
    if step.error:
        return ToolMessage(content=f"error: {step.error}", metadata={"error": step.error})
    return ToolMessage(content=as_text(step.result))


def _outputs_after(conversation: list[ConvertedMessage], index: int) -> int:
    count = 0
    while index + 1 + count < len(conversation) and isinstance(
        conversation[index + 1 + count], ToolMessage
    ):
        count += 1
    return count


def _place_output(
    conversation: list[ConvertedMessage], step: ToolStep, claimed: set[tuple[int, int]]
) -> bool:
    """Give a recorded call its output (True), or claim a call that already has one."""
    key = canonical_args(step.args)
    for exact in (True, False):
        for index, message in enumerate(conversation):
            if not isinstance(message, AIMessage):
                continue
            for position, call in enumerate(message.tool_calls or []):
                if (id(message), position) in claimed or call.name != step.name:
                    continue
                if exact and canonical_args(call.args) != key:
                    continue
                answered = _outputs_after(conversation, index)
                if not exact and position < answered:
                    continue  # by name alone, only a call still waiting for its output
                claimed.add((id(message), position))
                if position >= answered:
                    conversation.insert(index + 1 + answered, _tool_output(step))
                return True
    return False


def _insert_call(
    conversation: list[ConvertedMessage],
    step: ToolStep,
    anchors: list[tuple[float, AIMessage]],
    placed: set[int],
    claimed: set[tuple[int, int]],
) -> None:
    """A tool call no LLM answer shows, with its output, after the answer that preceded it."""
    positions = {id(message): index for index, message in enumerate(conversation)}
    earlier = [
        positions[id(a)] for ended, a in anchors if ended <= step.started and id(a) in positions
    ]
    if earlier:
        at = earlier[-1] + 1
    else:  # before any LLM answer: after the opening user messages
        at = 0
        while at < len(conversation) and isinstance(conversation[at], HumanMessage):
            at += 1
    while at < len(conversation) and id(conversation[at]) in placed:
        at += 1  # after the calls placed there before this one
    call = AIMessage(content="", tool_calls=[ToolCall(name=step.name, args=step.args)])
    output = _tool_output(step)
    conversation[at:at] = [call, output]
    placed.update({id(call), id(output)})
    claimed.add((id(call), 0))  # this span's own call: no later span may take it


def trace_messages(trace: Any, where: str = "trace") -> list[ConvertedMessage]:
    """The conversation a trace recorded (see the module docstring)."""
    data = as_trace(trace, where)
    steps = steps_of(data, where)
    conversation: list[ConvertedMessage] = []
    anchors: list[tuple[float, AIMessage]] = []
    for step in steps:
        if isinstance(step, LLMStep):
            extend(conversation, in_order(step.sent))
            add_answer(conversation, step.answer)
            if conversation and isinstance(conversation[-1], AIMessage):
                anchors.append((step.ended, conversation[-1]))
    if not conversation and data.get("input") not in (None, "", [], {}):
        conversation.append(HumanMessage(content=as_text(data["input"])))
    claimed: set[tuple[int, int]] = set()
    placed: set[int] = set()
    for step in steps:
        if isinstance(step, ToolStep) and not _place_output(conversation, step, claimed):
            _insert_call(conversation, step, anchors, placed, claimed)
    output = data.get("output")
    last = conversation[-1] if conversation else None
    ends_in_text = isinstance(last, AIMessage) and bool(last.content.strip())
    if not ends_in_text and output not in (None, "", [], {}):
        add_answer(conversation, AIMessage(content=as_text(output)))
    if not conversation:
        raise DataError(
            f"{where} (id {data.get('id')!r}) holds no conversation: no LLM call, no tool call "
            "and no input",
            field="spans",
        )
    return conversation


def trace_metadata(data: dict[str, Any], session: str | None) -> dict[str, Any]:
    kept = {
        "trace_id": data.get("id"),
        "session_id": session,
        "created_at": data.get("created_at"),
        "model": data.get("model"),
        "error": data.get("error"),
    }
    return {key: value for key, value in kept.items() if value is not None}


def trace_to_sample(trace: Any, *, reference: str | None = None) -> MultiTurnSample:
    """A platform trace (its JSON dict, or an SDK `Trace`) as a `MultiTurnSample` with its tool
    calls and tool outputs; metadata names the trace (and its session, model, error)."""
    from assay.integrations.trajectory.sessions import session_id_of

    data = as_trace(trace)
    messages = trace_messages(data)
    return MultiTurnSample(
        user_input=list(messages),
        reference=reference,
        metadata=trace_metadata(data, session_id_of(data)),
    )


__all__ = ["as_trace", "trace_messages", "trace_metadata", "trace_to_sample"]
