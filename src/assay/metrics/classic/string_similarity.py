"""NonLLMStringSimilarity: one minus a normalised edit distance, computed by rapidfuzz."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from assay.errors import UsageError
from assay.metrics.base import Metric
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
    return float(scorer.normalized_similarity(a, b))


@dataclass(kw_only=True)
class NonLLMStringSimilarity(Metric):
    """How close the response is to the reference as a character string."""

    name: str = "non_llm_string_similarity"
    distance_measure: DistanceMeasure = DistanceMeasure.LEVENSHTEIN
    required_fields = ("response", "reference")

    def __post_init__(self) -> None:
        super().__post_init__()
        # Strings come in from the CLI and from config files; store the enum member.
        self.distance_measure = as_distance_measure(self.distance_measure)

    async def _ascore(self, *, response: str, reference: str) -> MetricResult:
        value = string_similarity(self.distance_measure, reference, response)
        return MetricResult(
            value,
            reason=f"{self.distance_measure.value} similarity of response to reference",
            details={
                "distance_measure": self.distance_measure.value,
                "response_length": len(response),
                "reference_length": len(reference),
            },
        )
