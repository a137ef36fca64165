"""Ragas' metric base classes, as doors into assay's one `Metric`.

A metric written for Ragas the documented way keeps working:

    @dataclass
    class Refusal(MetricWithLLM, SingleTurnMetric):
        name: str = "refusal"
        _required_columns: dict = field(default_factory=lambda: {MetricType.SINGLE_TURN: {"response"}})

        async def _single_turn_ascore(self, sample, callbacks) -> float:
            ...  # self.llm is set; return a number

`SingleTurnMetric` / `MultiTurnMetric` read `_required_columns` (a column named "x:optional" is
optional) and call `_single_turn_ascore(sample, callbacks)` / `_multi_turn_ascore(sample, callbacks)`
with a sample holding those columns; a class deriving from both scores both kinds. In `evaluate`
such a metric gets the run's model, typed outcomes, timeouts and checkpoints like any other. A
metric without a name is named after its class (`MyMetric` -> `my_metric`).

The other names: `BaseMetric` and `SimpleBaseMetric` are `Metric`; `MetricWithLLM` is assay's
`LLMMetric`; `SimpleLLMMetric` is the base of DiscreteMetric/NumericMetric/RankingMetric;
`MetricWithEmbeddings` adds an `embeddings` field; the `*MetricProtocol`s describe what the
`@discrete_metric` / `@numeric_metric` / `@ranking_metric` decorators return.
"""

from __future__ import annotations

import enum
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, create_model

from assay.errors import UsageError
from assay.metrics.base import Metric, SampleKind
from assay.metrics.custom.llm_metrics import _TemplateMetric
from assay.metrics.llm_metric import LLMMetric
from assay.schema.outcome import MetricResult
from assay.schema.samples import MultiTurnSample, SingleTurnSample


class MetricType(enum.Enum):
    SINGLE_TURN = "single_turn"
    MULTI_TURN = "multi_turn"


class MetricOutputType(enum.Enum):
    BINARY = "binary"
    DISCRETE = "discrete"
    CONTINUOUS = "continuous"
    RANKING = "ranking"


BaseMetric = Metric
SimpleBaseMetric = Metric
SimpleLLMMetric = _TemplateMetric
MetricWithLLM = LLMMetric


@dataclass(kw_only=True)
class MetricWithEmbeddings(Metric):
    """A metric that uses an embedding model (given by `evaluate` when it has none)."""

    embeddings: Any = None
    needs_embeddings: ClassVar[bool] = True


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


@dataclass(kw_only=True)
class _RagasMetric(Metric):
    """What SingleTurnMetric and MultiTurnMetric share: Ragas' column declaration and entry points."""

    name: str = ""
    _required_columns: dict[Any, set[str]] = field(default_factory=dict)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        bases: tuple[tuple[SampleKind, str], ...] = (
            ("single_turn", "SingleTurnMetric"),
            ("multi_turn", "MultiTurnMetric"),
        )
        kinds = tuple(
            kind
            for kind, base in bases
            if any(c.__name__ == base and c.__module__ == __name__ for c in cls.__mro__)
        )
        if kinds:
            cls.sample_kinds = kinds
            cls.sample_kind = kinds[0]

    def __post_init__(self) -> None:
        if not self.name:
            self.name = _snake(type(self).__name__)
        super().__post_init__()
        if not isinstance(self._required_columns, dict):
            raise UsageError(
                f"{type(self).__name__}: _required_columns must map a MetricType to a set of column names"
            )

    def _columns(self, kind: SampleKind) -> tuple[tuple[str, ...], tuple[str, ...]]:
        declared = self._required_columns.get(
            MetricType(kind), self._required_columns.get(kind, ())
        )
        required = tuple(sorted(c for c in declared if not c.endswith(":optional")))
        optional = tuple(
            sorted(c.removesuffix(":optional") for c in declared if c.endswith(":optional"))
        )
        return required, optional

    def fields_for(self, kind: SampleKind) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return self._columns(kind)

    @property
    def required_fields(self) -> tuple[str, ...]:  # type: ignore[override]  # from _required_columns
        return self._columns(self.sample_kinds[0])[0]

    @property
    def optional_fields(self) -> tuple[str, ...]:  # type: ignore[override]  # as above
        return self._columns(self.sample_kinds[0])[1]

    @property
    def required_columns(self) -> dict[str, set[str]]:
        """Ragas' view: metric type name -> the column names it reads."""
        return {
            MetricType(kind).name: set(self._columns(kind)[0]) | set(self._columns(kind)[1])
            for kind in self.sample_kinds
        }

    async def _ascore(self, **fields: Any) -> MetricResult:
        if self._kind_of(fields) == "multi_turn":
            value = await self._multi_turn_ascore(MultiTurnSample(**fields), None)
        else:
            value = await self._single_turn_ascore(SingleTurnSample(**fields), None)
        return value if isinstance(value, MetricResult) else MetricResult(value)

    async def _single_turn_ascore(self, sample: SingleTurnSample, callbacks: Any) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__} does not implement _single_turn_ascore(sample, callbacks)"
        )

    async def _multi_turn_ascore(self, sample: MultiTurnSample, callbacks: Any) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__} does not implement _multi_turn_ascore(sample, callbacks)"
        )


@dataclass(kw_only=True)
class SingleTurnMetric(_RagasMetric):
    """Ragas' base of single-turn metrics: implement `_single_turn_ascore(sample, callbacks)`."""

    sample_kind: ClassVar[SampleKind] = "single_turn"


@dataclass(kw_only=True)
class MultiTurnMetric(_RagasMetric):
    """Ragas' base of multi-turn metrics: implement `_multi_turn_ascore(sample, callbacks)`."""

    sample_kind: ClassVar[SampleKind] = "multi_turn"


@runtime_checkable
class DiscreteMetricProtocol(Protocol):
    """What `@discrete_metric` returns: a metric whose value is one of `allowed_values`."""

    name: str
    allowed_values: Any

    def score(self, **kwargs: Any) -> MetricResult: ...
    async def ascore(self, **kwargs: Any) -> MetricResult: ...
    def batch_score(self, inputs: list[dict[str, Any]]) -> list[MetricResult]: ...
    async def abatch_score(self, inputs: list[dict[str, Any]]) -> list[MetricResult]: ...


@runtime_checkable
class NumericMetricProtocol(DiscreteMetricProtocol, Protocol):
    """What `@numeric_metric` returns: a metric whose value lies in `allowed_values = (low, high)`."""


@runtime_checkable
class RankingMetricProtocol(DiscreteMetricProtocol, Protocol):
    """What `@ranking_metric` returns: a metric whose value is a list of `allowed_values` items."""


def create_auto_response_model(name: str, **fields: Any) -> type[BaseModel]:
    """A pydantic model built with `create_model(name, **fields)`, marked as generated for a metric."""
    if not isinstance(name, str) or not name.isidentifier():
        raise UsageError(f"name must be a valid class name, got {name!r}")
    model = create_model(name, **fields)
    model.__ragas_auto_generated__ = True  # type: ignore[attr-defined]  # Ragas' marker
    return model


class Ensember:
    """Majority vote over several runs of the same judge (Ragas' `Ensember`)."""

    def from_discrete(
        self, inputs: list[list[dict[str, Any]]], attribute: str
    ) -> list[dict[str, Any]]:
        """Per position, the output whose `attribute` is the most common value (a tie goes to the value
        seen first). With one run, runs of unequal length, or an output lacking `attribute`: `inputs[0]`."""
        if (
            not isinstance(inputs, list)
            or not inputs
            or not all(isinstance(run, list) for run in inputs)
        ):
            raise UsageError("inputs must be a non-empty list of runs, each a list of outputs")
        if len(inputs) == 1 or len({len(run) for run in inputs}) != 1:
            return inputs[0]
        if not all(isinstance(item, dict) and attribute in item for run in inputs for item in run):
            return inputs[0]
        chosen = []
        for outputs in zip(*inputs, strict=True):
            values = [item[attribute] for item in outputs]
            counts = Counter(map(repr, values))
            best = max(counts.values())
            chosen.append(next(item for item in outputs if counts[repr(item[attribute])] == best))
        return chosen


__all__ = [
    "BaseMetric",
    "DiscreteMetricProtocol",
    "Ensember",
    "MetricOutputType",
    "MetricType",
    "MetricWithEmbeddings",
    "MetricWithLLM",
    "MultiTurnMetric",
    "NumericMetricProtocol",
    "RankingMetricProtocol",
    "SimpleBaseMetric",
    "SimpleLLMMetric",
    "SingleTurnMetric",
    "create_auto_response_model",
]
