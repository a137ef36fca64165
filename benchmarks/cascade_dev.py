"""Choosing a cascade's band and tolerance on dev data against the stronger judge's own answers.

The first way `benchmarks/cascade.py` chose a band (the middle of the 0.5B judge's P(yes) on dev)
assumed the small judge is unsure where it is wrong. On WikiEval it is not: it answers "yes" to
unsupported statements with P(yes) above that middle band, so the cascade kept those answers. Here
both judges answer the same BEGIN dev rows, and every candidate (band, tolerance) is routed over
their cached answers by the real `Cascade` (a replay: no model is asked again). The candidate kept
is the one whose cell scores lie closest to the 1.5B judge's (mean absolute difference) while
escalating at most `budget` of the dev cells; ties go to the fewer escalations. Nothing of a test
split is seen, and the choice is written down with every candidate's figures.
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from assay.models import Cascade
from assay.models.llm import LLM

# Candidate band edges: these quantiles of the 0.5B judge's P(yes) on dev, plus 0 and 1 (a band
# reaching an end escalates every verdict on that side of its other edge).
LOW_QUANTILES = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5)
HIGH_QUANTILES = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
TOLERANCES = (0.0, 0.25, 0.34, 0.5)
BUDGET = 0.4  # of dev cells escalated at most: under the half with room for the test split

Score = Callable[[Any, Path], dict[str, Any]]  # (judge, runs dir) -> the runner's record
Values = Callable[[dict[str, Any]], dict[int, float]]  # a record -> cell value by row


def band_edges(probabilities: list[float]) -> tuple[list[float], list[float]]:
    """Candidate lows and highs from the dev P(yes): quantile cuts plus the ends 0 and 1."""
    cuts = statistics.quantiles(probabilities, n=100, method="inclusive")

    def at(q: float) -> float:
        return round(cuts[round(q * 100) - 1], 4)

    lows = sorted({0.0, *(at(q) for q in LOW_QUANTILES)})
    highs = sorted({*(at(q) for q in HIGH_QUANTILES), 1.0})
    return lows, highs


def pick(candidates: Iterable[dict[str, Any]], budget: float = BUDGET) -> dict[str, Any]:
    """The candidate closest to the stronger judge (smallest mean absolute score difference)
    among those escalating at most `budget` of the cells; fewer escalations break ties. With no
    candidate inside the budget, the one escalating least (so the run still says what it did)."""
    found = list(candidates)
    if not found:
        raise ValueError("no candidate band was routed")
    within = [c for c in found if c["escalated_share"] <= budget]
    if not within:
        return min(found, key=lambda c: (c["escalated_share"], c["mean_abs_difference"]))
    return min(within, key=lambda c: (c["mean_abs_difference"], c["escalated_share"]))


def choose_on_dev(
    first: LLM,
    then: LLM,
    first_only: Any,
    score: Score,
    values: Values,
    work: Path,
    budget: float = BUDGET,
) -> dict[str, Any]:
    """Both judges answer the dev rows (`score` runs them; their caches keep every answer), then
    every candidate is replayed. `first_only` is the first judge wrapped to note its P(yes) on the
    asked statements (and never escalate). Returns the choice and every candidate's figures."""
    score(first_only, work / "first")
    reference = values(score(then, work / "then"))
    lows, highs = band_edges(first_only.probabilities)
    candidates = []
    for low in lows:
        for high in highs:
            if high <= low:
                continue
            for tolerance in TOLERANCES:
                cascade = Cascade(first=first, then=then, band=(low, high), tolerance=tolerance)
                with tempfile.TemporaryDirectory() as runs:
                    routed = values(score(cascade, Path(runs)))
                summary = cascade.summary()
                rows = sorted(set(reference) & set(routed))
                candidates.append(
                    {
                        "band": [low, high],
                        "tolerance": tolerance,
                        "escalated_share": summary.escalated_share or 0.0,
                        "mean_abs_difference": sum(abs(reference[r] - routed[r]) for r in rows)
                        / max(1, len(rows)),
                        "decisions_kept": sum(
                            (reference[r] >= 0.5) == (routed[r] >= 0.5) for r in rows
                        )
                        / max(1, len(rows)),
                        "rows": len(rows),
                    }
                )
    chosen = pick(candidates, budget)
    return {
        "method": "closest to the 1.5B judge on dev within the escalation budget",
        "budget": budget,
        "dev_cells": chosen["rows"],
        "verdicts_read": len(first_only.probabilities),
        "band": chosen["band"],
        "tolerance": chosen["tolerance"],
        "chosen": chosen,
        "candidates": candidates,
    }
