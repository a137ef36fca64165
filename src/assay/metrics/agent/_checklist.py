"""What task completion and plan adherence share: a checklist judged against a whole run.

The judge first lists the items (the user's tasks, the agent's plan steps) from the conversation
in one JSON call, then gives every item a yes/no verdict in one more call; the score is the share
of items judged yes. An item the judge skipped is left out of the score and named.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from assay.metrics.judge import Verdict, ask_json, ask_verdicts
from assay.prompts.prompt import Prompt
from assay.schema.outcome import MetricResult


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


def checklist_result(
    items: list[str],
    verdicts: list[Verdict | None],
    *,
    key: str,
    counted: str,
    failed: str,
    score: Callable[[list[bool | None]], float] = checklist_score,
) -> MetricResult:
    """The score of a judged checklist with its reason ("2 of 3 {counted}; {failed}: ...") and
    each item's verdict under `details[key + "s"]`."""
    passed = [None if verdict is None else verdict.passed for verdict in verdicts]
    reason = f"{sum(flag is True for flag in passed)} of {len(items)} {counted}"
    failing = [item for item, flag in zip(items, passed, strict=True) if flag is False]
    if failing:
        reason += f"; {failed}: {', '.join(failing)}"
    skipped = [item for item, flag in zip(items, passed, strict=True) if flag is None]
    if skipped:
        reason += f"; not judged (left out): {', '.join(skipped)}"
    details = [
        {
            key: item,
            "passed": flag,
            "probability": None if verdict is None else verdict.probability,
        }
        for item, flag, verdict in zip(items, passed, verdicts, strict=True)
    ]
    return MetricResult(score(passed), reason=reason, details={f"{key}s": details})


__all__ = ["checklist_result", "checklist_score", "judge_items", "list_items"]
