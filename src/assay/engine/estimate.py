"""Pre-flight estimate: how many model calls, tokens and dollars a run will take, before any call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.engine.run import coerce_dataset, coerce_metrics
from assay.metrics.base import CallEstimate, Metric


@dataclass(frozen=True)
class MetricEstimate:
    name: str
    cells: int
    calls: CallEstimate
    cost: float | None  # None when the judge model has no known price


@dataclass(frozen=True)
class RunEstimate:
    metrics: list[MetricEstimate]

    @property
    def requests(self) -> int:
        return sum(item.calls.requests for item in self.metrics)

    @property
    def input_tokens(self) -> int:
        return sum(item.calls.input_tokens for item in self.metrics)

    @property
    def output_tokens(self) -> int:
        return sum(item.calls.output_tokens for item in self.metrics)

    @property
    def cost(self) -> float | None:
        costs = [item.cost for item in self.metrics if item.calls.requests]
        known = [cost for cost in costs if cost is not None]
        return sum(known) if len(known) == len(costs) else None


def estimate_run(
    dataset: Any,
    metrics: Sequence[Metric | str],
    *,
    llm: Any = None,
    column_map: Mapping[str, str] | None = None,
) -> RunEstimate:
    """Sum each metric's own estimate over the rows it applies to; price it with the judge's price."""
    data = coerce_dataset(dataset, column_map)
    items = []
    for metric in coerce_metrics(metrics):
        judge = getattr(metric, "llm", None) or llm
        total, cells = CallEstimate(), 0
        for sample in data:
            if metric.accepts(sample) and not metric.missing_fields(sample):
                total = total + metric.estimate(sample)
                cells += 1
        price = getattr(judge, "price", None)
        cost = price.cost(total.input_tokens, total.output_tokens) if price is not None else None
        items.append(MetricEstimate(metric.name, cells, total, cost if total.requests else 0.0))
    return RunEstimate(items)


__all__ = ["MetricEstimate", "RunEstimate", "estimate_run"]
