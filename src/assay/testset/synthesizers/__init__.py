"""Query synthesizers and the query distribution.

`default_query_distribution(llm, kg)` gives Ragas' mix (single-hop specific 0.5, multi-hop
abstract 0.25, multi-hop specific 0.25). Given a graph, a synthesizer that finds no clusters in
it is left out and its weight goes to the others (the generator reports the same hand-over when
a distribution names one). `split_sizes` apportions a test-set size by largest remainder: the
counts add up to the size exactly, each within one of its exact share.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

from assay.errors import UsageError
from assay.testset.graph import KnowledgeGraph
from assay.testset.synthesizers.base import (
    BaseScenario,
    BaseSynthesizer,
    MultiHopScenario,
    QueryLength,
    QueryStyle,
    QuerySynthesizer,
    SingleHopScenario,
)
from assay.testset.synthesizers.multi_hop import (
    MultiHopAbstractQuerySynthesizer,
    MultiHopQuerySynthesizer,
    MultiHopSpecificQuerySynthesizer,
)
from assay.testset.synthesizers.single_hop import (
    SingleHopQuerySynthesizer,
    SingleHopSpecificQuerySynthesizer,
)

logger = logging.getLogger("assay.testset.synthesizers")

QueryDistribution = list[tuple[BaseSynthesizer, float]]


def default_query_distribution(
    llm: Any, kg: KnowledgeGraph | None = None, llm_context: str | None = None
) -> QueryDistribution:
    candidates: list[tuple[BaseSynthesizer, float]] = [
        (SingleHopSpecificQuerySynthesizer(llm=llm, llm_context=llm_context), 0.5),
        (MultiHopAbstractQuerySynthesizer(llm=llm, llm_context=llm_context), 0.25),
        (MultiHopSpecificQuerySynthesizer(llm=llm, llm_context=llm_context), 0.25),
    ]
    if kg is None:
        return candidates
    available = []
    for synthesizer, weight in candidates:
        try:
            if synthesizer.get_node_clusters(kg):
                available.append((synthesizer, weight))
        except Exception as exc:  # a synthesizer that cannot read this graph is left out
            logger.warning("%s left out: %s", synthesizer.name, exc)
    if not available:
        raise ValueError("No compatible query synthesizers for the provided KnowledgeGraph.")
    total = sum(weight for _, weight in available)
    return [(synthesizer, weight / total) for synthesizer, weight in available]


def split_sizes(weights: Sequence[float], size: int) -> list[int]:
    """Largest-remainder apportionment of `size` by `weights` (ties to the earlier entry)."""
    if size < 0:
        raise UsageError(f"testset_size must be at least 0, got {size}")
    if not weights:
        raise UsageError("the query distribution is empty")
    for index, weight in enumerate(weights):
        if not (isinstance(weight, (int, float)) and math.isfinite(weight) and weight >= 0):
            raise UsageError(
                f"query_distribution[{index}]: the weight must be a finite number >= 0, got {weight!r}"
            )
    total = float(sum(weights))
    if total <= 0:
        raise UsageError("the query distribution's weights add up to 0")
    exact = [size * w / total for w in weights]
    counts = [math.floor(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in order[: size - sum(counts)]:
        counts[i] += 1
    return counts


calculate_split_values = split_sizes

__all__ = [
    "BaseScenario",
    "BaseSynthesizer",
    "MultiHopAbstractQuerySynthesizer",
    "MultiHopQuerySynthesizer",
    "MultiHopScenario",
    "MultiHopSpecificQuerySynthesizer",
    "QueryDistribution",
    "QueryLength",
    "QueryStyle",
    "QuerySynthesizer",
    "SingleHopQuerySynthesizer",
    "SingleHopScenario",
    "SingleHopSpecificQuerySynthesizer",
    "calculate_split_values",
    "default_query_distribution",
    "split_sizes",
]
