"""Pre-flight estimate: how many model calls, tokens and dollars a run will take, before any call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.engine.run import coerce_dataset, coerce_metrics
from assay.metrics.base import CallEstimate, Metric
from assay.models.providers.batch_api import batch_price, has_batch_api


@dataclass(frozen=True)
class MetricEstimate:
    name: str
    cells: int
    calls: CallEstimate
    cost: float | None  # None when the judge model has no known price
    # At batch prices; None when the price is unknown or the judge has no batch API.
    batch_cost: float | None = None
    waves: int = 0  # the most requests one cell makes: batch waves at most, before repairs


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

    @property
    def batch_cost(self) -> float | None:
        costs = [item.batch_cost for item in self.metrics if item.calls.requests]
        known = [cost for cost in costs if cost is not None]
        return sum(known) if len(known) == len(costs) else None

    @property
    def waves(self) -> int:
        """Batch waves at most: cells run side by side, so the run takes as many waves as the
        cell with the most calls in turn (fewer when a cell makes its calls at once)."""
        return max((item.waves for item in self.metrics), default=0)


def estimate_run(
    dataset: Any,
    metrics: Sequence[Metric | str],
    *,
    llm: Any = None,
    column_map: Mapping[str, str] | None = None,
    repeats: int = 1,
) -> RunEstimate:
    """Sum each metric's own estimate over the rows it applies to; price it with the judge's price.
    With `repeats`, a judged metric's cells count once per asking (`evaluate(repeats=...)`)."""
    data = coerce_dataset(dataset, column_map)
    items = []
    for metric in coerce_metrics(metrics):
        judge = getattr(metric, "llm", None) or llm
        total, cells, deepest = CallEstimate(), 0, 0
        for sample in data:
            if metric.accepts(sample) and not metric.missing_fields(sample):
                one = metric.estimate(sample)
                if metric.needs_llm:
                    one = sum([one] * (repeats - 1), one)
                total, cells, deepest = total + one, cells + 1, max(deepest, one.requests)
        price = getattr(judge, "price", None)
        cost = price.cost(total.input_tokens, total.output_tokens) if price is not None else None
        batched = batch_price(price) if has_batch_api(getattr(judge, "provider", None)) else None
        batch_cost = batched.cost(total.input_tokens, total.output_tokens) if batched else None
        items.append(
            MetricEstimate(
                metric.name,
                cells,
                total,
                cost if total.requests else 0.0,
                batch_cost if total.requests else 0.0,
                deepest,
            )
        )
    return RunEstimate(items)


__all__ = ["MetricEstimate", "RunEstimate", "estimate_run"]
