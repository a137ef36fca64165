"""The optional parts of a sample a general-purpose judge may look at."""

from __future__ import annotations

from typing import Any

NOT_PROVIDED = "(not provided)"


def judge_inputs(user_input: Any = None, response: Any = None, retrieved_contexts: Any = None,
                 reference: Any = None) -> dict[str, Any]:
    return {
        "question": user_input or NOT_PROVIDED,
        "response": response if response is not None else NOT_PROVIDED,
        "contexts": retrieved_contexts or NOT_PROVIDED,
        "reference": reference or NOT_PROVIDED,
    }
