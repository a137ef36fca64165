"""ToolCallF1: precision and recall of the exact tool calls made, regardless of order."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from assay.metrics.base import Metric
from assay.metrics.classic._offload import run, size_of
from assay.metrics.classic._tool_calls import call_key, expected_calls, made_calls
from assay.schema.outcome import MetricResult


@dataclass(kw_only=True)
class ToolCallF1(Metric):
    """F1 of the calls made against the calls expected.

    A call counts as correct only if its name and all its arguments equal an expected call's.
    Calls are counted as a multiset: making an expected call twice is one hit and one extra.
    """

    name: str = "tool_call_f1"
    empty_allowed = ("reference_tool_calls",)
    sample_kind = "multi_turn"

    async def _ascore(
        self, *, user_input: list[Any], reference_tool_calls: list[Any]
    ) -> MetricResult:
        # Linear in the calls' size, but huge arguments are compared off the event loop.
        size = size_of(user_input, reference_tool_calls)
        return await run(size, _f1, user_input, reference_tool_calls)


def _f1(user_input: list[Any], reference_tool_calls: list[Any]) -> MetricResult:
    called = Counter(call_key(c) for c in made_calls(user_input))
    expected = Counter(call_key(c) for c in expected_calls(reference_tool_calls))
    tp = sum((called & expected).values())
    fp, fn = sum(called.values()) - tp, sum(expected.values()) - tp
    if not called and not expected:
        return MetricResult(
            1.0,
            reason="no tool calls expected and none made",
            details={"tp": 0, "fp": 0, "fn": 0},
        )
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return MetricResult(
        f1,
        reason=f"{tp} matching call(s), {fp} unexpected, {fn} missing "
        f"(precision {precision:.4f}, recall {recall:.4f})",
        details={
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "precision": precision,
            "recall": recall,
            "unexpected": [name for name, _ in (called - expected).elements()],
            "missing": [name for name, _ in (expected - called).elements()],
        },
    )
