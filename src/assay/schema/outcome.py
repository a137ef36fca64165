"""What one metric produced for one row: a typed outcome, never a bare NaN.

`MetricResult` is what a metric returns when called directly (`metric.score(...)`).
Inside an evaluation run each (row, metric) cell ends as exactly one of:

- `Ok`: a value (finite number, bool, label or ranking), with the reason and details;
- `Skipped`: the metric does not apply to that row (missing fields, nothing to judge), and why;
- `Error`: the metric tried and failed: exception type, message, attempts, raw model output.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    FiniteFloat,
    SerializerFunctionWrapHandler,
    StrictBool,
    StrictInt,
    model_serializer,
)

from assay.errors import UsageError, first_leaf
from assay.schema.usage import Usage

# Order matters for pydantic's union matching: bool must be tried before int.
Value = StrictBool | StrictInt | FiniteFloat | str | list[StrictInt | FiniteFloat | str]


class MetricResult:
    """A metric's answer for one sample. Behaves like its value in arithmetic and comparisons.

    `traces` (Ragas' field) may hold what the judge was given and said, under the keys "input"
    and "output" only."""

    __slots__ = ("details", "reason", "traces", "value")

    def __init__(
        self,
        value: Any,
        reason: str | None = None,
        details: dict[str, Any] | None = None,
        traces: dict[str, Any] | None = None,
    ):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"a metric value must be finite, got {value!r}")
        if traces is not None:
            if not isinstance(traces, dict):
                raise UsageError(
                    f"traces must be a dict with the keys 'input' and 'output', got {type(traces).__name__}"
                )
            unknown = sorted(set(map(str, traces)) - {"input", "output"})
            if unknown:
                raise UsageError(
                    f"traces has key(s) {', '.join(map(repr, unknown))}; only 'input' and 'output' "
                    "are allowed"
                )
        self.value = value
        self.reason = reason
        self.details = details
        self.traces = traces

    def __repr__(self) -> str:
        return f"MetricResult(value={self.value!r}, reason={self.reason!r})"

    def __float__(self) -> float:
        return float(self.value)

    def __int__(self) -> int:
        return int(self.value)

    def __bool__(self) -> bool:
        return bool(self.value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MetricResult):
            return self.value == other.value and self.reason == other.reason
        equal: bool = self.value == other
        return equal

    def __hash__(self) -> int:
        return hash(self.value) if not isinstance(self.value, list) else hash(tuple(self.value))

    def __lt__(self, other: Any) -> bool:
        result: bool = self.value < _unwrap(other)  # the value is a number, label or list
        return result

    def __le__(self, other: Any) -> bool:
        result: bool = self.value <= _unwrap(other)  # the value is a number, label or list
        return result

    def __gt__(self, other: Any) -> bool:
        result: bool = self.value > _unwrap(other)  # the value is a number, label or list
        return result

    def __ge__(self, other: Any) -> bool:
        result: bool = self.value >= _unwrap(other)  # the value is a number, label or list
        return result

    def __add__(self, other: Any) -> Any:
        return self.value + _unwrap(other)

    __radd__ = __add__

    def __mul__(self, other: Any) -> Any:
        return self.value * _unwrap(other)

    __rmul__ = __mul__

    def __sub__(self, other: Any) -> Any:
        return self.value - _unwrap(other)

    def __rsub__(self, other: Any) -> Any:
        return _unwrap(other) - self.value

    def __truediv__(self, other: Any) -> Any:
        return self.value / _unwrap(other)

    def __rtruediv__(self, other: Any) -> Any:
        return _unwrap(other) / self.value

    def __floordiv__(self, other: Any) -> Any:
        return self.value // _unwrap(other)

    def __mod__(self, other: Any) -> Any:
        return self.value % _unwrap(other)

    def __pow__(self, other: Any) -> Any:
        return self.value ** _unwrap(other)

    def __neg__(self) -> Any:
        return -self.value

    def __abs__(self) -> Any:
        return abs(self.value)

    def __round__(self, ndigits: int | None = None) -> Any:
        return round(self.value, ndigits)

    def to_dict(self) -> dict[str, Any]:
        return {"result": self.value, "reason": self.reason}


def _unwrap(value: Any) -> Any:
    return value.value if isinstance(value, MetricResult) else value


class _Outcome(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Repeats(_Outcome):
    """How a cell asked `n` times answered (`evaluate(..., repeats=n)`): each asking's value,
    their mean and sample standard deviation (numbers and booleans), and whether the decision
    was the same every time: the same label or boolean, the same integer, or a fraction on the
    same side of 0.5. `failed` askings ended in an error and are not among `values`."""

    n: StrictInt
    values: list[StrictBool | StrictInt | FiniteFloat | str]
    mean: FiniteFloat | None = None
    spread: FiniteFloat | None = None
    unanimous: StrictBool
    failed: StrictInt = 0


class Ok(_Outcome):
    status: Literal["ok"] = "ok"
    value: Value
    reason: str | None = None
    details: dict[str, Any] | None = None
    repeats: Repeats | None = None  # set only when the cell was asked more than once

    @model_serializer(mode="wrap")
    def _without_absent_repeats(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A cell asked once (almost all of them) is written as before repeats existed: no
        # `"repeats": null` in every checkpoint line and result file.
        data: dict[str, Any] = handler(self)
        if self.repeats is None:
            data.pop("repeats", None)
        return data


class Skipped(_Outcome):
    status: Literal["skipped"] = "skipped"
    reason: str


class Error(_Outcome):
    status: Literal["error"] = "error"
    error_type: str
    message: str
    attempts: int = 1
    raw: str | None = None

    @classmethod
    def from_exception(cls, exc: BaseException) -> Error:
        """The typed outcome of a failure: the exception's type and message (the first leaf of an
        exception group), the attempts a model call made and its raw answer when it had them. The
        one place an exception becomes an outcome."""
        leaf = first_leaf(exc)
        return cls(
            error_type=type(leaf).__name__,
            message=str(leaf) or repr(leaf),
            attempts=getattr(leaf, "attempts", 1),
            raw=getattr(leaf, "raw", None),
        )


Outcome = Annotated[Ok | Skipped | Error, Field(discriminator="status")]


class Cell(BaseModel):
    """One finished (row, metric) job: the unit of checkpointing and of result files."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    row: int
    metric: str
    outcome: Outcome
    seconds: float = 0.0
    usage: Usage | None = None


__all__ = ["Cell", "Error", "MetricResult", "Ok", "Outcome", "Repeats", "Skipped", "Value"]
