"""Token usage and cost: prices per model, a meter per evaluation cell, and a run budget.

The engine opens a `UsageMeter` around each cell (a context variable), so every model call
made while scoring that cell is charged to it without metrics passing anything around.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from assay.errors import BudgetExhausted
from assay.models.types import Usage


@dataclass(frozen=True)
class Price:
    """US dollars per million input and output tokens."""

    input_per_million: float
    output_per_million: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (
            input_tokens * self.input_per_million + output_tokens * self.output_per_million
        ) / 1e6


# List prices of common judge models (USD per 1M tokens, Nov 2026). Override per LLM with
# `llm_factory(..., price=(input, output))`; a model not listed is reported as unpriced.
DEFAULT_PRICES: Mapping[str, Price] = {
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-3.5-turbo": Price(0.50, 1.50),
    "claude-3-5-sonnet": Price(3.00, 15.00),
    "claude-3-5-haiku": Price(0.80, 4.00),
    "claude-3-7-sonnet": Price(3.00, 15.00),
    "claude-sonnet-4": Price(3.00, 15.00),
    "claude-haiku-4": Price(1.00, 5.00),
    "text-embedding-3-small": Price(0.02, 0.0),
    "text-embedding-3-large": Price(0.13, 0.0),
}


def lookup_price(model: str) -> Price | None:
    """Exact name first, then the longest listed name the model starts with (dated versions)."""
    if model in DEFAULT_PRICES:
        return DEFAULT_PRICES[model]
    base = model.rsplit("/", 1)[-1]
    matches = [name for name in DEFAULT_PRICES if base.startswith(name)]
    return DEFAULT_PRICES[max(matches, key=len)] if matches else None


class UsageMeter:
    """Accumulates usage (of one cell, one model, or one run)."""

    def __init__(self) -> None:
        self.usage = Usage()
        self._lock = threading.Lock()  # one model object's meter is charged from many threads

    def add(self, usage: Usage, *, priced: bool = True) -> None:
        if not priced and usage.requests:
            usage = usage.model_copy(
                update={"unpriced_requests": usage.unpriced_requests + usage.requests}
            )
        with self._lock:
            self.usage = self.usage + usage


class Budget:
    """A spending cap in USD shared by every call of a run."""

    def __init__(self, limit_usd: float) -> None:
        if limit_usd < 0:
            raise ValueError("a budget cannot be negative")
        self.limit = limit_usd
        self.spent = 0.0
        self._lock = threading.Lock()

    @property
    def exhausted(self) -> bool:
        return self.spent >= self.limit

    def check(self) -> None:
        if self.exhausted:
            raise BudgetExhausted(f"budget of ${self.limit:.4f} reached (spent ${self.spent:.4f})")

    def charge(self, cost: float) -> None:
        with self._lock:
            self.spent += cost


_meter: contextvars.ContextVar[UsageMeter | None] = contextvars.ContextVar(
    "assay_usage_meter", default=None
)
_budget: contextvars.ContextVar[Budget | None] = contextvars.ContextVar(
    "assay_budget", default=None
)


@contextmanager
def metering(meter: UsageMeter) -> Iterator[UsageMeter]:
    token = _meter.set(meter)
    try:
        yield meter
    finally:
        _meter.reset(token)


@contextmanager
def budgeting(budget: Budget | None) -> Iterator[Budget | None]:
    token = _budget.set(budget)
    try:
        yield budget
    finally:
        _budget.reset(token)


def current_meter() -> UsageMeter | None:
    return _meter.get()


def current_budget() -> Budget | None:
    return _budget.get()


__all__ = [
    "DEFAULT_PRICES",
    "Budget",
    "Price",
    "UsageMeter",
    "budgeting",
    "current_budget",
    "current_meter",
    "lookup_price",
    "metering",
]
