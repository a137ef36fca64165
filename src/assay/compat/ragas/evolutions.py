"""Ragas 0.1's test-set "evolutions", as the query synthesizers that replaced them.

Ragas 0.1 wrote `distributions={simple: 0.5, reasoning: 0.25, multi_context: 0.25}`; Ragas 0.2
and assay use a query distribution of synthesizers instead. Each evolution here names the
synthesizer that does its job (`simple.synthesizer(llm)`), and `query_distribution(mapping, llm)`
turns a 0.1 mapping into the list `TestsetGenerator.generate(..., query_distribution=...)` takes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assay.errors import UsageError
from assay.testset.synthesizers import (
    MultiHopAbstractQuerySynthesizer,
    MultiHopSpecificQuerySynthesizer,
    SingleHopSpecificQuerySynthesizer,
)


@dataclass(frozen=True)
class Evolution:
    name: str
    synthesizer_class: type

    def synthesizer(self, llm: Any = None) -> Any:
        return self.synthesizer_class(llm=llm)


simple = Evolution("simple", SingleHopSpecificQuerySynthesizer)
reasoning = Evolution("reasoning", MultiHopAbstractQuerySynthesizer)
multi_context = Evolution("multi_context", MultiHopSpecificQuerySynthesizer)
conditional = Evolution("conditional", MultiHopSpecificQuerySynthesizer)


def query_distribution(distributions: Mapping[Evolution, float], llm: Any = None) -> list[Any]:
    """`{simple: 0.5, reasoning: 0.5}` -> `[(SingleHopSpecific..., 0.5), (MultiHopAbstract..., 0.5)]`."""
    pairs = []
    for evolution, weight in distributions.items():
        if not isinstance(evolution, Evolution):
            raise UsageError(
                f"distributions keys must be evolutions (simple, reasoning, multi_context, "
                f"conditional), got {evolution!r}"
            )
        pairs.append((evolution.synthesizer(llm), weight))
    return pairs


__all__ = ["Evolution", "conditional", "multi_context", "query_distribution", "reasoning", "simple"]
