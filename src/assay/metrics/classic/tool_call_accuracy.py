"""ToolCallAccuracy: did the agent call the expected tools, in order, with the right arguments?"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio.lowlevel

from assay.errors import UsageError
from assay.metrics.base import Metric
from assay.metrics.classic._offload import run, size_of
from assay.metrics.classic._tool_calls import arg_text, expected_calls, made_calls
from assay.schema.messages import ToolCall
from assay.schema.outcome import MetricResult


def _sort_key(call: ToolCall) -> tuple[str, ...]:
    # Name first so both sides line up tool by tool; arguments order calls to the same tool.
    return (
        call.name,
        *(part for key in sorted(call.args) for part in (key, arg_text(call.args[key]))),
    )


def _aligned(
    user_input: list[Any], reference_tool_calls: list[Any], strict_order: bool
) -> tuple[list[ToolCall], list[ToolCall]]:
    """The calls made and the calls expected, both sorted unless the order counts."""
    called, expected = made_calls(user_input), expected_calls(reference_tool_calls)
    if not strict_order:
        called, expected = sorted(called, key=_sort_key), sorted(expected, key=_sort_key)
    return called, expected


def _texts(got: Any, want: Any) -> tuple[str, str]:
    return arg_text(got), arg_text(want)


@dataclass(kw_only=True)
class ToolCallAccuracy(Metric):
    """Mean argument accuracy of the calls, or 0 when the tools called are not the expected ones.

    With `strict_order` (default) the called tool names must equal the expected sequence;
    otherwise any order is accepted and both sides are sorted before pairing. A paired call
    scores the share of its expected arguments whose values match, compared as text by
    equality or, if given, by `arg_comparison_metric` (e.g. `NonLLMStringSimilarity()`).
    Arguments the agent passed beyond the expected ones are not penalised.
    """

    name: str = "tool_call_accuracy"
    strict_order: bool = True
    arg_comparison_metric: Metric | None = None
    empty_allowed = ("reference_tool_calls",)
    sample_kind = "multi_turn"

    def __post_init__(self) -> None:
        super().__post_init__()
        judge = self.arg_comparison_metric
        if judge is not None and (
            not isinstance(judge, Metric)
            or not set(judge.required_fields) <= {"response", "reference"}
        ):
            raise UsageError(
                "arg_comparison_metric must be a metric scoring response against reference"
            )

    def params(self) -> dict[str, Any]:
        values = super().params()
        if self.arg_comparison_metric is not None:
            # Described by its own spec so that run manifests stay plain JSON.
            values["arg_comparison_metric"] = self.arg_comparison_metric.spec()
        return values

    async def _compare(self, got: Any, want: Any) -> float:
        # Many small arguments compared inline would never yield: let a timeout in between.
        await anyio.lowlevel.checkpoint()
        # Huge values are turned into text off the event loop (and a metric offloads its own work).
        got_text, want_text = await run(size_of(got, want), _texts, got, want)
        if self.arg_comparison_metric is None:
            return float(got_text == want_text)
        result = await self.arg_comparison_metric.ascore(response=got_text, reference=want_text)
        return float(result.value)

    async def _arg_matches(self, got: dict[str, Any], want: dict[str, Any]) -> float:
        """Summed match of the expected arguments (a missing argument contributes 0)."""
        return sum(
            [await self._compare(got[key], value) for key, value in want.items() if key in got]
        )

    async def _ascore(
        self, *, user_input: list[Any], reference_tool_calls: list[Any]
    ) -> MetricResult:
        # Linear in the calls' size, but huge arguments are read and sorted off the event loop.
        size = size_of(user_input, reference_tool_calls)
        called, expected = await run(
            size, _aligned, user_input, reference_tool_calls, self.strict_order
        )
        called_names, expected_names = [c.name for c in called], [c.name for c in expected]
        details: dict[str, Any] = {
            "strict_order": self.strict_order,
            "called": called_names,
            "expected": expected_names,
        }
        if not called or not expected:
            # Nothing expected and nothing done is a perfect agent; otherwise one side is missing.
            value = float(not called and not expected)
            reason = f"{len(called)} tool call(s) made, {len(expected)} expected"
            return MetricResult(value, reason=reason, details={**details, "aligned": value == 1.0})
        if called_names != expected_names:
            what = "sequence" if self.strict_order else "set"
            reason = f"tool {what} differs: expected {expected_names}, called {called_names}"
            return MetricResult(0.0, reason=reason, details={**details, "aligned": False})

        scores: list[float] = []
        matched = total = 0.0
        for got, want in zip(called, expected, strict=True):
            if want.args:
                hits = await self._arg_matches(got.args, want.args)
                matched, total = matched + hits, total + len(want.args)
                scores.append(hits / len(want.args))
            else:  # no arguments expected: right only if none were passed
                scores.append(float(not got.args))
        value = sum(scores) / len(expected)
        return MetricResult(
            value,
            reason=f"tools match the {len(expected)} expected call(s); {matched:g} of {total:g} "
            f"expected argument(s) matched, mean per-call argument score {value:.4f}",
            details={**details, "aligned": True, "argument_scores": scores},
        )
