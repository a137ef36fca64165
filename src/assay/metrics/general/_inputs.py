"""The optional parts of a sample a general-purpose judge may look at, and conversations.

General judges (AspectCritic, SimpleCriteriaScore, the rubric metrics) score single-turn samples
and conversations. A conversation is written out as text (`Human: ...`, `AI: ...`, tool calls and
outputs) and given to the judge as the material to assess, fenced like every other input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from assay.metrics.agent._conversation import conversation_text

if TYPE_CHECKING:  # what the mixin is mixed into, for the type checker
    from assay.metrics.base import Metric as _MixedInto
    from assay.metrics.base import SampleKind
else:
    _MixedInto = object

NOT_PROVIDED = "(not provided)"


def judge_inputs(
    user_input: Any = None,
    response: Any = None,
    retrieved_contexts: Any = None,
    reference: Any = None,
) -> dict[str, Any]:
    if isinstance(user_input, list):  # a conversation: the whole exchange is what is judged
        return {
            "question": NOT_PROVIDED,
            "response": conversation_text(user_input),
            "contexts": NOT_PROVIDED,
            "reference": reference or NOT_PROVIDED,
        }
    return {
        "question": user_input or NOT_PROVIDED,
        "response": response if response is not None else NOT_PROVIDED,
        "contexts": retrieved_contexts or NOT_PROVIDED,
        "reference": reference or NOT_PROVIDED,
    }


class JudgesConversations(_MixedInto):
    """Mixin: the judge also scores `MultiTurnSample`s, reading `user_input` (the conversation)
    and, where given, `reference`."""

    sample_kinds: ClassVar[tuple[SampleKind, ...]] = ("single_turn", "multi_turn")
    conversation_fields: ClassVar[tuple[tuple[str, ...], tuple[str, ...]]] = (
        ("user_input",),
        ("reference",),
    )

    def fields_for(self, kind: SampleKind) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if kind == "multi_turn":
            return self.conversation_fields
        return super().fields_for(kind)
