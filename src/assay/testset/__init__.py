"""Test-set generation (Ragas' `ragas.testset`): documents to a knowledge graph to gated,
exactly-sized, provenanced question/answer samples. See docs/testset.md."""

from assay.testset.gate import GateResult, QualityGate
from assay.testset.generator import TestsetGenerator
from assay.testset.graph import KnowledgeGraph, Node, NodeType, Relationship
from assay.testset.loaders import load_documents
from assay.testset.persona import (
    Persona,
    ThemesPersonasInput,
    ThemesPersonasMatchingPrompt,
    generate_personas_from_kg,
)
from assay.testset.synthesizers import (
    BaseScenario,
    BaseSynthesizer,
    MultiHopAbstractQuerySynthesizer,
    MultiHopQuerySynthesizer,
    MultiHopScenario,
    MultiHopSpecificQuerySynthesizer,
    QueryDistribution,
    QueryLength,
    QueryStyle,
    QuerySynthesizer,
    SingleHopQuerySynthesizer,
    SingleHopScenario,
    SingleHopSpecificQuerySynthesizer,
    default_query_distribution,
)
from assay.testset.testset import (
    GenerationReport,
    Provenance,
    RejectedCandidate,
    Testset,
    TestsetPacket,
    TestsetSample,
)
from assay.testset.transforms import (
    apply_transforms,
    default_transforms,
    default_transforms_for_prechunked,
)

__all__ = [
    "BaseScenario",
    "BaseSynthesizer",
    "GateResult",
    "GenerationReport",
    "KnowledgeGraph",
    "MultiHopAbstractQuerySynthesizer",
    "MultiHopQuerySynthesizer",
    "MultiHopScenario",
    "MultiHopSpecificQuerySynthesizer",
    "Node",
    "NodeType",
    "Persona",
    "Provenance",
    "QualityGate",
    "QueryDistribution",
    "QueryLength",
    "QueryStyle",
    "QuerySynthesizer",
    "RejectedCandidate",
    "Relationship",
    "SingleHopQuerySynthesizer",
    "SingleHopScenario",
    "SingleHopSpecificQuerySynthesizer",
    "Testset",
    "TestsetGenerator",
    "TestsetPacket",
    "TestsetSample",
    "ThemesPersonasInput",
    "ThemesPersonasMatchingPrompt",
    "apply_transforms",
    "default_query_distribution",
    "default_transforms",
    "default_transforms_for_prechunked",
    "generate_personas_from_kg",
    "load_documents",
]
