"""Asking the same question again: which of a cell's repeated askings a model call belongs to.

`evaluate(..., repeats=N)` scores each judged cell N times to see how stable the judge is. The
askings must be different requests, or the cache, the run's shared answers and the calls in
flight would hand all N the first answer: so asking `i` (from 0) sends the seed `base + i`, and
a judge configured at temperature 0 (assay's default, which makes every asking alike on a
deterministic server) samples at `SAMPLING_TEMPERATURE` instead. A request made outside
`asking_again` is left exactly as it was, so a run without repeats is unchanged, and its
cache stays valid.

The asking is a context variable: the engine sets it around one asking of one cell, and every
call the metric makes inside (its claim split, verdicts, a repair) carries it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace

from assay.models.types import ModelRequest

# High enough that a 1.5B judge's close calls can come out either way; low enough that it still
# answers the question. Used only when the judge was configured deterministic.
SAMPLING_TEMPERATURE = 0.7


@dataclass(frozen=True)
class Asking:
    index: int  # 0 for the first asking
    temperature: float = SAMPLING_TEMPERATURE


_CURRENT: ContextVar[Asking | None] = ContextVar("assay_asking", default=None)


@contextmanager
def asking_again(index: int, *, temperature: float = SAMPLING_TEMPERATURE) -> Iterator[Asking]:
    """Within the block, model calls are asking `index` of a repeated cell."""
    if index < 0:
        raise ValueError(f"an asking's index is 0 or more, got {index}")
    asking = Asking(index, temperature)
    token = _CURRENT.set(asking)
    try:
        yield asking
    finally:
        _CURRENT.reset(token)


def current_asking() -> Asking | None:
    return _CURRENT.get()


def for_current_asking(request: ModelRequest) -> ModelRequest:
    """The request as the current asking sends it: its own seed, sampled if it was not."""
    asking = _CURRENT.get()
    if asking is None:
        return request
    params = dict(request.params)
    params["seed"] = int(params.get("seed") or 0) + asking.index
    if not float(params.get("temperature") or 0.0) > 0.0:
        params["temperature"] = asking.temperature
    return replace(request, params=params)


__all__ = ["SAMPLING_TEMPERATURE", "Asking", "asking_again", "current_asking", "for_current_asking"]
