"""Transforms that need no LLM: heading-aware splitting, YAKE keyphrases, surface-form entities,
extractive summaries, the node's language, and embeddings from the library's embedding models.

These make the default knowledge graph, so building it costs no LLM call (decisive for a small
local judge on a CPU); the LLM extractors of `llm_extractors.py` are opt-in.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass
from typing import Any

from assay.testset.graph import Node, NodeType, Relationship, stable_id
from assay.testset.terms import detect_language, entities, extractive_summary, keyphrases
from assay.testset.text import Section, chunk_document
from assay.testset.transforms.base import (
    Extractor,
    Splitter,
    Step,
    is_document,
)


async def _off_loop(work: Any) -> Any:
    """CPU work of the classical extractors runs in a worker thread, so the event loop (progress,
    timeouts, other nodes' model calls) never waits on a long document."""
    import anyio.to_thread

    return await anyio.to_thread.run_sync(work)


def _text(node: Node, key: str = "page_content") -> str:
    value = node.get_property(key)
    return value if isinstance(value, str) else ""


@dataclass
class HeadingSplitter(Splitter):
    """Documents into chunks at their Markdown/reStructuredText headings (`text.chunk_document`).

    Each chunk is an exact slice of its document, with `headings` (its section path), `start`
    and `end` offsets, and the document's metadata; `child` relationships link document to chunk
    and `next` relationships link consecutive chunks."""

    filter_nodes: Any = is_document
    min_tokens: int = 100
    max_tokens: int = 500

    async def split(self, node: Node) -> tuple[list[Node], list[Relationship]]:
        return self.split_at(node, None)

    def split_at(
        self, node: Node, sections: list[Section] | None
    ) -> tuple[list[Node], list[Relationship]]:
        text = _text(node)
        chunks = []
        pieces = chunk_document(
            text, min_tokens=self.min_tokens, max_tokens=self.max_tokens, sections=sections
        )
        for index, piece in enumerate(pieces):
            chunks.append(
                Node(
                    id=stable_id(str(node.id), "chunk", str(index), piece.text),
                    type=NodeType.CHUNK,
                    properties={
                        "page_content": piece.text,
                        "document_metadata": node.get_property("document_metadata") or {},
                        "headings": list(piece.headings),
                        "start": piece.start,
                        "end": piece.end,
                    },
                )
            )
        rels = [
            Relationship(
                id=stable_id("child", str(node.id), str(chunk.id)),
                type="child",
                source=node,
                target=chunk,
            )
            for chunk in chunks
        ]
        rels += [
            Relationship(
                id=stable_id("next", str(a.id), str(b.id)), type="next", source=a, target=b
            )
            for a, b in itertools.pairwise(chunks)
        ]
        return chunks, rels


@dataclass
class KeyphraseTextExtractor(Extractor):
    """`keyphrases` by YAKE, in the node's language."""

    property_name: str = "keyphrases"
    max_num: int = 10

    async def extract(self, node: Node) -> tuple[str, Any]:
        text = _text(node)
        language = node.get_property("language") or detect_language(text)
        found = await _off_loop(lambda: keyphrases(text, max_num=self.max_num, language=language))
        return self.property_name, found


@dataclass
class EntityTextExtractor(Extractor):
    """`entities` by surface form (code identifiers, capitalised names, acronyms)."""

    property_name: str = "entities"
    max_num: int = 15

    async def extract(self, node: Node) -> tuple[str, Any]:
        text = _text(node)
        return self.property_name, await _off_loop(lambda: entities(text, max_num=self.max_num))


@dataclass
class ExtractiveSummaryExtractor(Extractor):
    """`summary` made of the text's most central sentences (no model)."""

    property_name: str = "summary"
    max_sentences: int = 3

    async def extract(self, node: Node) -> tuple[str, Any]:
        return self.property_name, extractive_summary(_text(node), max_sentences=self.max_sentences)


@dataclass
class LanguageExtractor(Extractor):
    """`language`: the node's language as a prompt language name ('english', 'chinese', ...)."""

    property_name: str = "language"

    async def extract(self, node: Node) -> tuple[str, Any]:
        return self.property_name, detect_language(_text(node))


@dataclass
class EmbeddingExtractor(Extractor):
    """`embedding` of a text property through an `assay.models.Embeddings` (or any object with
    `aembed_texts`/`embed_documents`). One batched call for all nodes, not one per node."""

    property_name: str = "embedding"
    embed_property_name: str = "page_content"
    embedding_model: Any = None

    async def extract(self, node: Node) -> tuple[str, Any]:
        return self.property_name, (await self._embed([self._source(node)]))[0]

    def _source(self, node: Node) -> str:
        value = node.get_property(self.embed_property_name)
        if not isinstance(value, str):
            raise ValueError(
                f"node.property('{self.embed_property_name}') must be a string, found "
                f"'{type(value).__name__}'"
            )
        return value

    async def _embed(self, texts: list[str]) -> list[list[float]]:
        if self.embedding_model is None:
            from assay.errors import UsageError

            raise UsageError("EmbeddingExtractor needs an embedding_model")
        model = self.embedding_model
        if hasattr(model, "aembed_texts"):
            return [list(v) for v in await model.aembed_texts(texts)]
        if hasattr(model, "aembed_documents"):
            return [list(v) for v in await model.aembed_documents(texts)]
        warnings.warn(
            "the embedding model has no async method; embedding in a worker thread",
            UserWarning,
            stacklevel=2,
        )
        import anyio.to_thread

        return [list(v) for v in await anyio.to_thread.run_sync(model.embed_documents, texts)]

    def generate_execution_plan(self, kg: Any) -> list[Step]:
        nodes = [
            node for node in self.filter(kg).nodes if node.get_property(self.property_name) is None
        ]
        return [Step(self.name, None, self._embed_all(nodes))] if nodes else []

    async def _embed_all(self, nodes: list[Node]) -> None:
        nodes = [node for node in nodes if self._source(node).strip()]
        vectors = await self._embed([self._source(node) for node in nodes])
        for node, vector in zip(nodes, vectors, strict=True):
            node.properties[self.property_name] = vector


__all__ = [
    "EmbeddingExtractor",
    "EntityTextExtractor",
    "ExtractiveSummaryExtractor",
    "HeadingSplitter",
    "KeyphraseTextExtractor",
    "LanguageExtractor",
]
