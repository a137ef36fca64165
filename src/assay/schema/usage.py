"""Tokens, requests and cost spent by model calls (per call, per cell, per run)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Usage(BaseModel):
    """What model calls used. `cached_requests` were answered from the cache and cost nothing;
    `unpriced_requests` went to a model with no known price, so `cost` leaves them out."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    cached_requests: int = 0
    cost: float = 0.0
    unpriced_requests: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            **{name: getattr(self, name) + getattr(other, name) for name in Usage.model_fields}
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


__all__ = ["Usage"]
