"""Joining the message lists of successive LLM calls (or traces) into one conversation.

An agent's second LLM call is usually sent the first call's messages again, plus the first
answer and the tool outputs; a chat application's second trace usually re-sends the first
turn. `extend` appends only what is new:

1. when the conversation so far is a prefix of the incoming messages, what follows it;
2. else, when the incoming messages hold the conversation's last message, what follows its last
   occurrence (the application trimmed or summarised its history);
3. else all of them (a call that was sent only its own turn).

Two messages are the same when they are of one type with the same text (whitespace at the ends
aside) and, for the assistant, the same tool calls; an assistant message recorded as text only
(an SDK that kept the text of an answer that also called tools) matches the same text with
calls, and the fuller one is kept.
"""

from __future__ import annotations

import json

from assay.integrations._messages import ConvertedMessage
from assay.schema.messages import AIMessage, ToolCall


def canonical_args(args: dict[str, object]) -> str:
    """Arguments as canonical JSON: sorted keys, no spaces; how calls are compared and keyed."""
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def call_key(call: ToolCall) -> tuple[str, str]:
    return call.name, canonical_args(call.args)


def same(a: ConvertedMessage, b: ConvertedMessage) -> bool:
    if type(a) is not type(b) or a.content.strip() != b.content.strip():
        return False
    if isinstance(a, AIMessage) and isinstance(b, AIMessage):
        calls_a = [call_key(c) for c in a.tool_calls or []]
        calls_b = [call_key(c) for c in b.tool_calls or []]
        return calls_a == calls_b or not calls_a or not calls_b
    return True


def fuller(a: ConvertedMessage, b: ConvertedMessage) -> ConvertedMessage:
    """Of two matching messages, the one that holds the tool calls."""
    if (
        isinstance(b, AIMessage)
        and b.tool_calls
        and not (isinstance(a, AIMessage) and a.tool_calls)
    ):
        return b
    return a


def extend(conversation: list[ConvertedMessage], incoming: list[ConvertedMessage]) -> None:
    """Append to `conversation` (in place) what `incoming` adds to it (see the module docstring)."""
    if not incoming:
        return
    if len(conversation) <= len(incoming) and all(
        same(mine, theirs) for mine, theirs in zip(conversation, incoming, strict=False)
    ):
        for position, theirs in enumerate(incoming[: len(conversation)]):
            conversation[position] = fuller(conversation[position], theirs)
        conversation.extend(incoming[len(conversation) :])
        return
    if conversation:
        last = conversation[-1]
        for position in range(len(incoming) - 1, -1, -1):
            if same(last, incoming[position]):
                conversation[-1] = fuller(last, incoming[position])
                conversation.extend(incoming[position + 1 :])
                return
    conversation.extend(incoming)


def add_answer(conversation: list[ConvertedMessage], answer: AIMessage | None) -> None:
    """Append an LLM call's answer, unless the conversation already ends with it."""
    if answer is None or (not answer.content.strip() and not answer.tool_calls):
        return
    if conversation and same(conversation[-1], answer):
        conversation[-1] = fuller(conversation[-1], answer)
        return
    conversation.append(answer)


__all__ = ["add_answer", "call_key", "canonical_args", "extend", "fuller", "same"]
