"""A stored score as the trace pages show it: a label score as its label, a boolean as true /
false, and a number given by a saved criterion's scale as that scale's words (`Answers it (4)`
rather than `4.0`); other numbers without a needless `.0`, and a score without a value as its
status. The scales are read once per page for the criteria on it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from assay.platform.server.storage.repos import CriteriaRepo


def scales_of(session: Any, project_id: int, names: Iterable[str]) -> dict[str, dict[float, str]]:
    """Per saved criterion among `names`, its value → words: 1-5 for a 5-point criterion (its
    likert labels), 1 / 0 for a yes/no one (its true and false names)."""
    scales: dict[str, dict[float, str]] = {}
    wanted = sorted(set(names))
    if not wanted:
        return scales
    for saved in CriteriaRepo(session, project_id).by_names(wanted):
        if saved.output_type == "5-point":
            words = {float(i): getattr(saved, f"likert_score_{i}") or "" for i in range(1, 6)}
            scales[saved.name] = {k: v for k, v in words.items() if v}
        elif saved.output_type == "bool" and (saved.bool_true or saved.bool_false):
            scales[saved.name] = {1.0: saved.bool_true or "true", 0.0: saved.bool_false or "false"}
    return scales


def _number(value: float) -> str:
    return f"{value:g}" if abs(value) < 1e15 else str(value)


def score_text(score: Any, scales: dict[str, dict[float, str]]) -> str:
    outcome = score.outcome or {}
    if score.label is not None:
        return str(score.label)
    typed = outcome.get("value")
    words = scales.get(score.criterion, {})
    if isinstance(typed, bool):
        return words.get(float(typed), "true" if typed else "false")
    if score.value is None:
        return str(outcome.get("status", ""))
    value = float(score.value)
    if value in words:
        return f"{words[value]} ({_number(value)})"
    return _number(value)


def shower(scales: dict[str, dict[float, str]]) -> Callable[[Any], str]:
    """`score_text` with the page's scales, for the templates."""
    return lambda score: score_text(score, scales)


__all__ = ["scales_of", "score_text", "shower"]
