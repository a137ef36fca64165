"""What task completion and plan adherence share: a checklist judged against a whole run.

The judge first lists the items (the user's tasks, the agent's plan steps) from the conversation
in one JSON call, then gives every item a yes/no verdict in one more call; the score is the share
of items judged yes. An item the judge skipped is left out of the score and named.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from assay.metrics.judge import Verdict, ask_json, ask_verdicts
from assay.prompts.prompt import Prompt


def checklist_score(passed: list[bool | None]) -> float:
    """Pure scoring: the share of judged items that passed (None = not judged, left out)."""
    judged = [flag for flag in passed if flag is not None]
    if not judged:
        raise ValueError("no item was judged")
    return sum(judged) / len(judged)


async def list_items(
    llm: Any, prompt: Prompt, conversation: str, schema: type[BaseModel], key: str
) -> list[str]:
    """The items the judge listed under `key`, stripped, empty ones dropped."""
    answer = await ask_json(llm, prompt, {"conversation": conversation}, schema)
    return [item.strip() for item in getattr(answer, key) if item.strip()]


async def judge_items(
    llm: Any, prompt: Prompt, conversation: str, items: list[str]
) -> list[Verdict | None]:
    return await ask_verdicts(llm, prompt, {"conversation": conversation}, items)


def item_details(
    items: list[str], verdicts: list[Verdict | None], key: str
) -> list[dict[str, Any]]:
    """One entry per item: its text, whether it passed (None: skipped) and P(yes)."""
    return [
        {
            key: item,
            "passed": None if verdict is None else verdict.passed,
            "probability": None if verdict is None else verdict.probability,
        }
        for item, verdict in zip(items, verdicts, strict=True)
    ]


def skipped_note(items: list[str], verdicts: list[Verdict | None]) -> str:
    skipped = [item for item, verdict in zip(items, verdicts, strict=True) if verdict is None]
    return f"; not judged (left out): {', '.join(skipped)}" if skipped else ""


__all__ = ["checklist_score", "item_details", "judge_items", "list_items", "skipped_note"]
