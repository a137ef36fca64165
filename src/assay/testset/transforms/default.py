"""The default knowledge-graph pipelines.

Without `use_llm` (the default) no LLM is called: documents are split at their headings, every
node gets its language, chunks get YAKE keyphrases and surface-form entities, every node an
extractive summary, then (with an embedding model) embeddings, and the relationships the
synthesizers look for: `cosine_similarity` between chunks, `summary_similarity` between
documents, `entities_overlap` and `keyphrases_overlap` between chunks. Documents of any length
work: a short one becomes a single chunk, never "too short".

`use_llm=True` adds Ragas' LLM steps: headlines, LLM summaries, a question-potential filter,
themes and LLM entities (about 2 + 3 calls per chunk instead of 0).
"""

from __future__ import annotations

from typing import Any

from assay._util.deps import require
from assay.errors import UsageError
from assay.testset.transforms.base import (
    BaseGraphTransformation,
    Parallel,
    default_filter,
    is_chunk,
    is_document,
)
from assay.testset.transforms.classic import (
    EmbeddingExtractor,
    EntityTextExtractor,
    ExtractiveSummaryExtractor,
    HeadingSplitter,
    KeyphraseTextExtractor,
    LanguageExtractor,
)
from assay.testset.transforms.llm_extractors import (
    CustomNodeFilter,
    HeadlinesExtractor,
    HeadlineSplitter,
    NERExtractor,
    SummaryExtractor,
    ThemesExtractor,
)
from assay.testset.transforms.relationships import (
    CosineSimilarityBuilder,
    OverlapScoreBuilder,
    SummaryCosineSimilarityBuilder,
)

Step = BaseGraphTransformation | Parallel


def _need_yake() -> None:
    # Said once, before any work, rather than as a failure on every chunk.
    require("yake", extra="testset", feature="the test-set knowledge graph's keyphrases")


def _relationships(embedding_model: Any, chunk_threshold: float) -> list[Step]:
    steps: list[Step] = []
    if embedding_model is not None:
        steps.append(
            Parallel(
                EmbeddingExtractor(
                    name="chunk embeddings", embedding_model=embedding_model, filter_nodes=is_chunk
                ),
                EmbeddingExtractor(
                    name="summary embeddings",
                    property_name="summary_embedding",
                    embed_property_name="summary",
                    embedding_model=embedding_model,
                    filter_nodes=is_document,
                ),
            )
        )
    builders: list[Any] = [
        OverlapScoreBuilder(name="entity overlap", filter_nodes=is_chunk),
        OverlapScoreBuilder(
            name="keyphrase overlap",
            property_name="keyphrases",
            relationship_type="keyphrases_overlap",
            threshold=0.2,
            filter_nodes=is_chunk,
        ),
    ]
    if embedding_model is not None:
        builders += [
            CosineSimilarityBuilder(
                name="chunk similarity", threshold=chunk_threshold, filter_nodes=is_chunk
            ),
            SummaryCosineSimilarityBuilder(
                name="document similarity",
                new_property_name="summary_similarity",
                threshold=0.7,
                filter_nodes=is_document,
            ),
        ]
    steps.append(Parallel(*builders))
    return steps


def default_transforms(
    documents: Any = None,
    llm: Any = None,
    embedding_model: Any = None,
    *,
    use_llm: bool = False,
    min_tokens: int = 100,
    max_tokens: int = 500,
    chunk_similarity: float = 0.7,
) -> list[Step]:
    """The pipeline for whole documents (see the module docstring)."""
    _need_yake()
    if documents is not None and len(documents) == 0:
        raise UsageError(
            "default_transforms got no documents: pass at least one non-empty document"
        )
    if use_llm and llm is None:
        raise UsageError("default_transforms(use_llm=True) needs an llm")
    if not use_llm:
        return [
            HeadingSplitter(min_tokens=min_tokens, max_tokens=max_tokens),
            LanguageExtractor(),
            Parallel(
                KeyphraseTextExtractor(filter_nodes=is_chunk),
                EntityTextExtractor(filter_nodes=is_chunk),
                ExtractiveSummaryExtractor(filter_nodes=default_filter),
            ),
            *_relationships(embedding_model, chunk_similarity),
        ]
    return [
        LanguageExtractor(filter_nodes=is_document),
        HeadlinesExtractor(llm=llm, filter_nodes=is_document),
        HeadlineSplitter(min_tokens=max(min_tokens, 300), max_tokens=max(max_tokens, 1000)),
        LanguageExtractor(filter_nodes=is_chunk),
        SummaryExtractor(llm=llm, filter_nodes=is_document),
        CustomNodeFilter(llm=llm, filter_nodes=is_chunk),
        Parallel(
            ThemesExtractor(llm=llm, filter_nodes=is_chunk),
            NERExtractor(llm=llm, filter_nodes=is_chunk),
            KeyphraseTextExtractor(filter_nodes=is_chunk),
            ExtractiveSummaryExtractor(filter_nodes=is_chunk),
        ),
        *_relationships(embedding_model, chunk_similarity),
    ]


def default_transforms_for_prechunked(
    llm: Any = None,
    embedding_model: Any = None,
    *,
    use_llm: bool = False,
    chunk_similarity: float = 0.7,
) -> list[Step]:
    """The pipeline for chunks given as they are (no splitting; every step on chunks)."""
    _need_yake()
    if use_llm and llm is None:
        raise UsageError("default_transforms_for_prechunked(use_llm=True) needs an llm")
    extractors: list[Any] = [
        KeyphraseTextExtractor(filter_nodes=is_chunk),
        EntityTextExtractor(filter_nodes=is_chunk),
    ]
    if use_llm:
        extractors = [
            SummaryExtractor(llm=llm, filter_nodes=is_chunk),
            ThemesExtractor(llm=llm, filter_nodes=is_chunk),
            NERExtractor(llm=llm, filter_nodes=is_chunk),
            KeyphraseTextExtractor(filter_nodes=is_chunk),
        ]
    else:
        extractors.append(ExtractiveSummaryExtractor(filter_nodes=is_chunk))
    return [
        LanguageExtractor(filter_nodes=is_chunk),
        Parallel(*extractors),
        *_relationships(embedding_model, chunk_similarity),
    ]


__all__ = ["default_transforms", "default_transforms_for_prechunked"]
