"""Review where it teaches most: the judge's uncertainty about a trace, and the chance the trace
has of being kept for review when a queue samples.

People's labels are worth most where the judge is unsure: a verdict whose probability is near
one half, a 5-point score in the middle of the scale. A queue ordered by uncertainty serves those
first. A queue that samples (`sample_rate`) keeps about that share of its traces, the unsure ones
likelier: a trace with uncertainty u is kept with probability min(1, rate * (0.5 + u)), so that
over uncertainties spread evenly the share kept is the rate. That probability is stored with the
item; an estimate made from the labels weights each by its inverse (`assay.stats.ppi_mean(...,
weights=...)`), which undoes the preference and keeps the estimate unbiased. Whether a trace is
kept is a hash of the queue and the trace, so a judge run again decides the same.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

# The floor keeps every trace's chance above zero: one with probability 0 could never be seen,
# and its inverse weight would be infinite.
MIN_PROBABILITY = 0.01


def uncertainty(outcome: dict[str, Any]) -> float | None:
    """How unsure one judged score was, from 0 (certain) to 1 (a coin toss); None when the
    outcome says nothing about it (an error, a label, a function criterion)."""
    if outcome.get("status") != "ok":
        return None
    probability = outcome.get("probability")
    if isinstance(probability, (int, float)) and 0 <= probability <= 1:
        return 1.0 - abs(2.0 * float(probability) - 1.0)
    value = outcome.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if 0 <= value <= 1:  # a fraction (1 and 0 are as sure on a 5-point scale as on this one)
        return 1.0 - abs(2.0 * float(value) - 1.0)
    if 1 < value <= 5:  # a 5-point score: 3 is the least sure
        return 1.0 - abs(float(value) - 3.0) / 2.0
    return None


def most_unsure(outcomes: Iterable[dict[str, Any]]) -> float | None:
    """A trace's uncertainty over its criteria: the largest (one unsure criterion is enough)."""
    found = [u for u in (uncertainty(o) for o in outcomes) if u is not None]
    return max(found) if found else None


def inclusion_probability(rate: float, unsure: float | None) -> float:
    """The chance a trace is kept for review by a queue sampling at `rate`."""
    weight = 1.0 if unsure is None else 0.5 + unsure
    return min(1.0, max(MIN_PROBABILITY, rate * weight))


def kept(queue_id: int, trace_id: str, probability: float) -> bool:
    """Whether the trace is kept: a uniform draw fixed by the queue and the trace."""
    digest = hashlib.sha256(f"review-sample:{queue_id}:{trace_id}".encode()).digest()
    draw = int.from_bytes(digest[:8], "big") / 2**64
    return draw < probability


def decide_items(
    items: Iterable[Any], key: str, rate: float | None, queue_id: int, unsure: dict[str, Any]
) -> int:
    """Record on each undecided queue item (a trace's or a session's, found by its `key`
    attribute) the judge's uncertainty and, when the queue samples at `rate`, whether it is kept
    for review with the chance it had; returns how many were left out ("unsampled")."""
    left_out = 0
    for item in items:
        ident = getattr(item, key)
        item.uncertainty = unsure[ident]
        if rate is None:
            item.inclusion_probability = 1.0
            continue
        chance = inclusion_probability(rate, item.uncertainty)
        item.inclusion_probability = chance
        if not kept(queue_id, ident, chance):
            item.status = "unsampled"
            left_out += 1
    return left_out


__all__ = [
    "MIN_PROBABILITY",
    "decide_items",
    "inclusion_probability",
    "kept",
    "most_unsure",
    "uncertainty",
]
