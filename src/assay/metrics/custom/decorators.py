"""`@discrete_metric`, `@numeric_metric`, `@ranking_metric`: plain functions as metrics.

    @discrete_metric(name="accuracy", allowed_values=["pass", "fail"])
    def accuracy(prediction: str, label: str) -> str:
        return "pass" if prediction == label else "fail"

    accuracy.score(prediction="x", label="x")  ->  MetricResult("pass")

The function may be sync or async and return a value or a `MetricResult`. Its parameters are the
metric's fields. A value outside `allowed_values` is a `MetricError`, never clamped.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from assay.errors import MetricError, UsageError
from assay.metrics.base import Metric
from assay.metrics.custom.agreement import correlation
from assay.schema.outcome import MetricResult


@dataclass(kw_only=True)
class FunctionMetric(Metric):
    func: Callable[..., Any] = field(default=lambda: None, repr=False)
    kind: str = "discrete"
    allowed_values: Any = None

    def __post_init__(self) -> None:
        super().__post_init__()
        parameters = inspect.signature(self.func).parameters.values()
        self.declare_fields(
            [
                p.name
                for p in parameters
                if p.default is inspect.Parameter.empty
                and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            ],
            [p.name for p in parameters if p.default is not inspect.Parameter.empty],
        )

    async def _ascore(self, **fields: Any) -> MetricResult:
        if inspect.iscoroutinefunction(self.func):
            output = await self.func(**fields)
        else:
            output = await anyio.to_thread.run_sync(lambda: self.func(**fields))
        result = output if isinstance(output, MetricResult) else MetricResult(output)
        self._check(result.value)
        return result

    def _check(self, value: Any) -> None:
        if self.kind == "discrete" and value not in self.allowed_values:
            raise MetricError(f"{self.name} returned {value!r}, not one of {self.allowed_values}")
        if self.kind == "numeric":
            low, high = self.allowed_values
            if (
                not isinstance(value, (int, float))
                or isinstance(value, bool)
                or not low <= value <= high
            ):
                raise MetricError(f"{self.name} returned {value!r}, outside {self.allowed_values}")
        if self.kind == "ranking" and (
            not isinstance(value, list) or len(value) != self.allowed_values
        ):
            raise MetricError(
                f"{self.name} returned {value!r}, not a ranking of {self.allowed_values} items"
            )

    def params(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "allowed_values": list(self.allowed_values)
            if isinstance(self.allowed_values, tuple)
            else self.allowed_values,
            "function": getattr(self.func, "__qualname__", repr(self.func)),
        }

    def get_correlation(self, gold_labels: list[Any], predictions: list[Any]) -> float:
        """Agreement of this metric's values with gold values (see `assay.metrics.custom.agreement`)."""
        return correlation(self.kind, gold_labels, predictions)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Calling the metric still calls the plain function."""
        return self.func(*args, **kwargs)


def _decorator(
    kind: str, default_allowed: Any
) -> Callable[..., Callable[[Callable[..., Any]], FunctionMetric]]:
    def make(
        *, name: str | None = None, allowed_values: Any = None, **_: Any
    ) -> Callable[[Callable[..., Any]], FunctionMetric]:
        def wrap(func: Callable[..., Any]) -> FunctionMetric:
            allowed = default_allowed if allowed_values is None else allowed_values
            if kind == "numeric" and isinstance(allowed, range):
                allowed = (allowed.start, allowed.stop - 1)
            if kind == "numeric" and (len(allowed) != 2 or allowed[0] >= allowed[1]):
                raise UsageError(f"numeric allowed_values must be (low, high), got {allowed}")
            return FunctionMetric(
                name=name or func.__name__, func=func, kind=kind, allowed_values=allowed
            )

        return wrap

    return make


discrete_metric = _decorator("discrete", ["pass", "fail"])
numeric_metric = _decorator("numeric", (0.0, 1.0))
ranking_metric = _decorator("ranking", 2)

__all__ = ["FunctionMetric", "discrete_metric", "numeric_metric", "ranking_metric"]
