"""General-purpose judges: aspect critiques, simple criteria, rubrics."""

from assay.metrics.general.aspect_critic import (
    AspectCritic,
    AspectCriticWithReference,
    coherence,
    conciseness,
    correctness,
    harmfulness,
    maliciousness,
)
from assay.metrics.general.rubrics import (
    DomainSpecificRubrics,
    InstanceRubrics,
    InstanceSpecificRubrics,
    RubricsScore,
    RubricsScoreWithoutReference,
    RubricsScoreWithReference,
    SimpleCriteriaScore,
)

__all__ = [
    "AspectCritic",
    "AspectCriticWithReference",
    "DomainSpecificRubrics",
    "InstanceRubrics",
    "InstanceSpecificRubrics",
    "RubricsScore",
    "RubricsScoreWithReference",
    "RubricsScoreWithoutReference",
    "SimpleCriteriaScore",
    "coherence",
    "conciseness",
    "correctness",
    "harmfulness",
    "maliciousness",
]
