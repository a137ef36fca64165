"""NonLLMStringSimilarity: one minus a normalised edit distance, computed by rapidfuzz.

Levenshtein, Jaro and Jaro-Winkler take time in proportion to the product of the two lengths
(divided by 64: rapidfuzz compares 64 characters per machine word), so texts whose product of
lengths exceeds `max_chars`² are refused with a `MetricError` naming the limit; Hamming is linear
and has none. Large texts are compared in a worker thread (`_offload`). A rapidfuzz comparison
holds the GIL, which would stall the event loop even from a thread: Levenshtein and Hamming go
through `rapidfuzz.process.cdist`, which releases it and gives the same value. Its Jaro differs
from the direct call in the last bit for about one pair in ten, so Jaro and Jaro-Winkler are called
directly, and their limit keeps one comparison to a fraction of a second.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from assay.errors import UsageError
from assay.metrics.base import Metric
from assay.metrics.classic._offload import (
    OFF_LOOP_CHARS,
    check_limit,
    check_product,
    released_gil,
    run,
)
from assay.schema.outcome import MetricResult


class DistanceMeasure(str, enum.Enum):
    """The string distances rapidfuzz offers that make sense for whole texts."""

    LEVENSHTEIN = "levenshtein"
    HAMMING = "hamming"
    JARO = "jaro"
    JARO_WINKLER = "jaro_winkler"


# Member -> name of the matching module in `rapidfuzz.distance`.
_RAPIDFUZZ_NAMES = {
    DistanceMeasure.LEVENSHTEIN: "Levenshtein",
    DistanceMeasure.HAMMING: "Hamming",
    DistanceMeasure.JARO: "Jaro",
    DistanceMeasure.JARO_WINKLER: "JaroWinkler",
}

# Default `max_chars` of each measure (benchmarks/results/classic_metrics_large_inputs.md): two
# texts this long take about 5 s by Levenshtein, GIL released, and about 0.3 s by Jaro, GIL held,
# on a 2-core machine. None: linear, no limit.
DEFAULT_MAX_CHARS: dict[DistanceMeasure, int | None] = {
    DistanceMeasure.LEVENSHTEIN: 300_000,
    DistanceMeasure.HAMMING: None,
    DistanceMeasure.JARO: 300_000,
    DistanceMeasure.JARO_WINKLER: 300_000,
}
# Measures whose `cdist` value is the direct call's, bit for bit (integer distances).
_SAME_IN_CDIST = frozenset({DistanceMeasure.LEVENSHTEIN, DistanceMeasure.HAMMING})
# What each measure computes, for the refusal message.
_WORK = {
    DistanceMeasure.LEVENSHTEIN: "the edit distance",
    DistanceMeasure.JARO: "the Jaro similarity",
    DistanceMeasure.JARO_WINKLER: "the Jaro-Winkler similarity",
}


def as_distance_measure(value: Any) -> DistanceMeasure:
    """Accept a member, its value ("jaro") or its name ("JARO"); anything else is a UsageError."""
    if isinstance(value, DistanceMeasure):
        return value
    if isinstance(value, str):
        key = value.strip().lower().replace("-", "_")
        for member in DistanceMeasure:
            if key == member.value:
                return member
    choices = ", ".join(member.value for member in DistanceMeasure)
    raise UsageError(f"unknown distance_measure {value!r}; choose one of {choices}")


def string_similarity(measure: DistanceMeasure, a: str, b: str) -> float:
    """Similarity in [0, 1] of two strings under `measure` (1.0 = identical).

    rapidfuzz normalises each distance for us: Levenshtein by the longer length, Hamming
    likewise after padding the shorter string (so unequal lengths are allowed and the
    missing characters count as mismatches), Jaro and Jaro-Winkler are similarities already.
    """
    from rapidfuzz import distance

    scorer = getattr(distance, _RAPIDFUZZ_NAMES[measure])
    if measure in _SAME_IN_CDIST and len(a) + len(b) > OFF_LOOP_CHARS:
        # The same computation, with the GIL released so the event loop keeps running.
        return float(released_gil(scorer.normalized_similarity, a, b))
    return float(scorer.normalized_similarity(a, b))


def measure_limit(measure: DistanceMeasure, max_chars: int | None) -> int | None:
    """The product limit for `measure`: `max_chars`, else the measure's default; None for Hamming."""
    if measure is DistanceMeasure.HAMMING:
        return None
    return max_chars if max_chars is not None else DEFAULT_MAX_CHARS[measure]


def check_sizes(
    metric: str,
    measure: DistanceMeasure,
    max_chars: int | None,
    sizes: dict[str, int],
) -> None:
    """Refuse texts whose lengths multiply beyond the measure's limit squared."""
    check_product(
        f"{metric} ({measure.value})",
        sizes,
        "characters",
        measure_limit(measure, max_chars),
        "max_chars",
        _WORK.get(measure, ""),
    )


@dataclass(kw_only=True)
class NonLLMStringSimilarity(Metric):
    """How close the response is to the reference as a character string.

    `max_chars` bounds the work of the quadratic measures: the product of the two lengths may
    not exceed `max_chars`² (so two texts of `max_chars` characters pass, and a longer text passes
    against a shorter one). None means the measure's default, 300,000; Hamming has no limit.
    Beyond it the cell is a `MetricError`, never a truncated value. The limit changes no value, so
    it is not part of the metric's spec.
    """

    name: str = "non_llm_string_similarity"
    distance_measure: DistanceMeasure = DistanceMeasure.LEVENSHTEIN
    max_chars: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        # Strings come in from the CLI and from config files; store the enum member.
        self.distance_measure = as_distance_measure(self.distance_measure)
        self.max_chars = check_limit("max_chars", self.max_chars)

    def params(self) -> dict[str, Any]:
        values = super().params()
        values.pop("max_chars")  # decides whether a value is computed, never which
        return values

    async def _ascore(self, *, response: str, reference: str) -> MetricResult:
        check_sizes(
            self.name,
            self.distance_measure,
            self.max_chars,
            {"response": len(response), "reference": len(reference)},
        )
        value = await run(
            len(response) + len(reference),
            string_similarity,
            self.distance_measure,
            reference,
            response,
        )
        return MetricResult(
            value,
            reason=f"{self.distance_measure.value} similarity of response to reference",
            details={
                "distance_measure": self.distance_measure.value,
                "response_length": len(response),
                "reference_length": len(reference),
            },
        )
