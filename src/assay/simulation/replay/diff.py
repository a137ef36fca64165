"""How a replayed trajectory differs from the recorded one: its tool calls and its final answer.

The tool calls are compared as sequences of (name, canonical arguments) with
`difflib.SequenceMatcher`, so a call added or dropped in the middle does not make every later
call count as changed. `str(diff)` reads like a unified diff: `  ` kept, `- ` only in the recording,
`+ ` only in the replay.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from assay.integrations.trajectory.merge import call_key, canonical_args
from assay.schema.messages import AIMessage, ToolCall
from assay.schema.samples import MultiTurnSample


def _shown(call: ToolCall) -> str:
    return f"{call.name}({canonical_args(call.args)})"


@dataclass
class ToolCallDiff:
    """original / replayed: the two runs' tool calls in order; kept, removed (only in the
    recording) and added (only in the replay)."""

    original: list[ToolCall]
    replayed: list[ToolCall]
    kept: list[ToolCall] = field(default_factory=list)
    removed: list[ToolCall] = field(default_factory=list)
    added: list[ToolCall] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    @classmethod
    def between(cls, original: list[ToolCall], replayed: list[ToolCall]) -> ToolCallDiff:
        diff = cls(list(original), list(replayed))
        matcher = difflib.SequenceMatcher(
            a=[call_key(c) for c in original], b=[call_key(c) for c in replayed], autojunk=False
        )
        for tag, a0, a1, b0, b1 in matcher.get_opcodes():
            if tag == "equal":
                diff.kept.extend(original[a0:a1])
                diff.lines.extend(f"  {_shown(c)}" for c in original[a0:a1])
                continue
            diff.removed.extend(original[a0:a1])
            diff.added.extend(replayed[b0:b1])
            diff.lines.extend(f"- {_shown(c)}" for c in original[a0:a1])
            diff.lines.extend(f"+ {_shown(c)}" for c in replayed[b0:b1])
        return diff

    @property
    def same(self) -> bool:
        """True when the replay made the same calls, with the same arguments, in the same order."""
        return not self.removed and not self.added

    def __str__(self) -> str:
        return "\n".join(self.lines) if self.lines else "(no tool calls)"


def final_answer(sample: MultiTurnSample) -> str | None:
    """The text of the last assistant message that has text, or None."""
    for message in reversed(sample.user_input):
        if isinstance(message, AIMessage) and message.content.strip():
            return message.content
    return None


def answer_changed(original: MultiTurnSample, replayed: MultiTurnSample) -> bool:
    """Whether the final answers differ (whitespace at the ends aside)."""
    before, after = final_answer(original), final_answer(replayed)
    return (before or "").strip() != (after or "").strip()


__all__ = ["ToolCallDiff", "answer_changed", "final_answer"]
