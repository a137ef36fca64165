"""Small metrics with scripted behaviour, to drive the engine through every outcome type."""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field

from assay.errors import NotApplicable
from assay.metrics.base import Metric
from assay.schema.outcome import MetricResult


@dataclass(kw_only=True)
class ScriptedMetric(Metric):
    """Behaves according to the response text: 'raise', 'nan', 'na', 'sleep:<s>', or a number."""

    name: str = "test_scripted"
    required_fields = ("response",)
    optional_fields = ("reference",)

    async def _ascore(self, *, response: str, reference: str | None = None) -> MetricResult:
        if response == "raise":
            raise ValueError("scripted failure")
        if response == "nan":
            return _nan_result()
        if response == "na":
            raise NotApplicable("nothing to judge in this response")
        if response.startswith("sleep:"):
            await asyncio.sleep(float(response.split(":", 1)[1]))
            return MetricResult(1.0)
        return MetricResult(float(response), reason=f"parsed {response}")


def _nan_result() -> MetricResult:
    # MetricResult refuses NaN on construction, so build one the way a buggy metric might.
    result = MetricResult(0.0)
    result.value = math.nan
    return result


@dataclass(kw_only=True)
class ReferenceOnly(Metric):
    name: str = "test_needs_reference"
    required_fields = ("response", "reference")

    async def _ascore(self, *, response: str, reference: str) -> MetricResult:
        return MetricResult(float(response == reference))


@dataclass(kw_only=True)
class ConcurrencyProbe(Metric):
    """Records the largest number of cells in flight at once."""

    name: str = "test_probe"
    required_fields = ("response",)
    state: dict = field(default_factory=lambda: {"now": 0, "peak": 0})

    async def _ascore(self, *, response: str) -> MetricResult:
        self.state["now"] += 1
        self.state["peak"] = max(self.state["peak"], self.state["now"])
        await asyncio.sleep(0.01)
        self.state["now"] -= 1
        return MetricResult(1.0)
