"""Knowledge-graph transforms (Ragas' `ragas.testset.transforms`): extractors, splitters,
filters, relationship builders, `Parallel`, `apply_transforms` and the default pipelines."""

from assay.testset.transforms.base import (
    BaseGraphTransformation,
    Extractor,
    LLMBasedExtractor,
    NodeFilter,
    Parallel,
    RelationshipBuilder,
    Splitter,
    TransformFailure,
    TransformReport,
    aapply_transforms,
    apply_transforms,
    rollback_transforms,
)
from assay.testset.transforms.classic import (
    EmbeddingExtractor,
    EntityTextExtractor,
    ExtractiveSummaryExtractor,
    HeadingSplitter,
    KeyphraseTextExtractor,
    LanguageExtractor,
)
from assay.testset.transforms.default import default_transforms, default_transforms_for_prechunked
from assay.testset.transforms.llm_extractors import (
    CustomNodeFilter,
    HeadlinesExtractor,
    HeadlineSplitter,
    KeyphrasesExtractor,
    NERExtractor,
    SummaryExtractor,
    ThemesExtractor,
    TitleExtractor,
)
from assay.testset.transforms.relationships import (
    CosineSimilarityBuilder,
    JaccardSimilarityBuilder,
    OverlapScoreBuilder,
    SummaryCosineSimilarityBuilder,
)

KeyphraseExtractor = KeyphrasesExtractor  # Ragas' older spelling
LLMBasedNodeFilter = CustomNodeFilter

__all__ = [
    "BaseGraphTransformation",
    "CosineSimilarityBuilder",
    "CustomNodeFilter",
    "EmbeddingExtractor",
    "EntityTextExtractor",
    "ExtractiveSummaryExtractor",
    "Extractor",
    "HeadingSplitter",
    "HeadlineSplitter",
    "HeadlinesExtractor",
    "JaccardSimilarityBuilder",
    "KeyphraseExtractor",
    "KeyphraseTextExtractor",
    "KeyphrasesExtractor",
    "LLMBasedExtractor",
    "LLMBasedNodeFilter",
    "LanguageExtractor",
    "NERExtractor",
    "NodeFilter",
    "OverlapScoreBuilder",
    "Parallel",
    "RelationshipBuilder",
    "Splitter",
    "SummaryCosineSimilarityBuilder",
    "SummaryExtractor",
    "ThemesExtractor",
    "TitleExtractor",
    "TransformFailure",
    "TransformReport",
    "aapply_transforms",
    "apply_transforms",
    "default_transforms",
    "default_transforms_for_prechunked",
    "rollback_transforms",
]
