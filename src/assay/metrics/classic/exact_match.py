"""ExactMatch and StringPresence: the simplest string checks."""

from __future__ import annotations

from dataclasses import dataclass

from assay.metrics.base import Metric
from assay.schema.outcome import MetricResult


@dataclass(kw_only=True)
class ExactMatch(Metric):
    """1.0 when the response equals the reference exactly, else 0.0."""

    name: str = "exact_match"

    async def _ascore(self, *, response: str, reference: str) -> MetricResult:
        return MetricResult(float(response == reference))


@dataclass(kw_only=True)
class StringPresence(Metric):
    """1.0 when the reference occurs as a substring of the response, else 0.0."""

    name: str = "string_present"

    async def _ascore(self, *, response: str, reference: str) -> MetricResult:
        return MetricResult(float(reference in response))
