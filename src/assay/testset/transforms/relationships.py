"""Relationship builders: which nodes are alike.

- `CosineSimilarityBuilder` / `SummaryCosineSimilarityBuilder`: cosine of embedding vectors,
  computed as one normalised matrix product in blocks (numpy), pairs above `threshold`.
- `JaccardSimilarityBuilder`: |A ∩ B| / |A ∪ B| of a list property (e.g. entities).
- `OverlapScoreBuilder`: items of one node that match an item of the other (rapidfuzz's
  Jaro-Winkler similarity ≥ `distance_threshold`, case-folded), divided by the smaller list's
  size; items found in more than `noise_threshold` of all nodes are dropped first, since a term
  every chunk shares links nothing. Candidate pairs come from an inverted index of the items'
  words, so the cost follows the pairs that share something rather than all n² pairs.

Every relationship is bidirectional, carries its score under `new_property_name` (and, for the
overlap builder, the matched items under `overlapped_items`), and has an id derived from its two
nodes, so rebuilding the same graph gives the same relationships.
"""

from __future__ import annotations

import collections
import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from assay.testset.graph import KnowledgeGraph, Node, Relationship, stable_id
from assay.testset.transforms.base import RelationshipBuilder


def _relationship(kind: str, a: Node, b: Node, properties: dict[str, Any]) -> Relationship:
    return Relationship(
        id=stable_id(kind, *sorted((str(a.id), str(b.id)))),
        type=kind,
        source=a,
        target=b,
        bidirectional=True,
        properties=properties,
    )


@dataclass
class CosineSimilarityBuilder(RelationshipBuilder):
    property_name: str = "embedding"
    new_property_name: str = "cosine_similarity"
    threshold: float = 0.9
    block_size: int = 1024

    async def transform(self, kg: KnowledgeGraph) -> list[Relationship]:
        nodes = self.filter(kg).nodes
        for node in nodes:
            if node.get_property(self.property_name) is None:
                raise ValueError(f"Node {node.id} has no {self.property_name}")
        if len(nodes) < 2:
            return []
        matrix = np.asarray([node.get_property(self.property_name) for node in nodes], float)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = matrix / np.where(norms == 0, 1.0, norms)
        rels = []
        for start in range(0, len(nodes), self.block_size):
            block = matrix[start : start + self.block_size] @ matrix.T
            for i, j in zip(*np.nonzero(block >= self.threshold), strict=True):
                a = start + int(i)
                if int(j) <= a:
                    continue
                rels.append(
                    _relationship(
                        self.new_property_name,
                        nodes[a],
                        nodes[int(j)],
                        {self.new_property_name: round(float(block[i, j]), 6)},
                    )
                )
        return rels


@dataclass
class SummaryCosineSimilarityBuilder(CosineSimilarityBuilder):
    property_name: str = "summary_embedding"
    new_property_name: str = "summary_cosine_similarity"
    threshold: float = 0.1


def _items(node: Node, name: str, key_name: str | None) -> list[str]:
    value = node.get_property(name)
    if isinstance(value, dict):  # {"PER": [...], "ORG": [...]}
        value = value.get(key_name, []) if key_name else list(itertools.chain(*value.values()))
    return [str(v) for v in value or []]


@dataclass
class JaccardSimilarityBuilder(RelationshipBuilder):
    property_name: str = "entities"
    key_name: str | None = None
    new_property_name: str = "jaccard_similarity"
    threshold: float = 0.5

    async def transform(self, kg: KnowledgeGraph) -> list[Relationship]:
        nodes = self.filter(kg).nodes
        sets = [
            {item.lower() for item in _items(n, self.property_name, self.key_name)} for n in nodes
        ]
        rels = []
        for a, b in itertools.combinations(range(len(nodes)), 2):
            union = sets[a] | sets[b]
            if not union:
                continue
            score = len(sets[a] & sets[b]) / len(union)
            if score >= self.threshold:
                rels.append(
                    _relationship(
                        self.new_property_name, nodes[a], nodes[b], {self.new_property_name: score}
                    )
                )
        return rels


_SHORT_WORDS = frozenset(
    [
        "the",
        "of",
        "and",
        "a",
        "an",
        "in",
        "on",
        "to",
        "for",
        "with",
        "by",
        "de",
        "la",
        "le",
        "der",
        "die",
        "das",
    ]
)


def _index_words(item: str) -> list[str]:
    """The words an item is indexed by: not the little words every name shares."""
    words = [w for w in item.lower().split() if w not in _SHORT_WORDS]
    return words or [item.lower()]


@dataclass
class OverlapScoreBuilder(RelationshipBuilder):
    property_name: str = "entities"
    key_name: str | None = None
    new_property_name: str = "overlap_score"
    relationship_type: str = "entities_overlap"
    distance_threshold: float = 0.9
    threshold: float = 0.01
    noise_threshold: float = 0.05

    async def transform(self, kg: KnowledgeGraph) -> list[Relationship]:
        from rapidfuzz.distance import JaroWinkler

        nodes = self.filter(kg).nodes
        lists = [
            list(
                dict.fromkeys(
                    i.strip() for i in _items(n, self.property_name, self.key_name) if i.strip()
                )
            )
            for n in nodes
        ]
        frequency = collections.Counter(item.lower() for items in lists for item in set(items))
        if len(nodes) > 20:  # the commonest items are noise (only meaningful on a real corpus)
            limit = max(2, int(self.noise_threshold * len(nodes)))
            lists = [[i for i in items if frequency[i.lower()] <= limit] for items in lists]
        index: dict[str, set[int]] = collections.defaultdict(set)
        for position, items in enumerate(lists):
            for item in items:
                for word in _index_words(item):
                    index[word].add(position)
        candidates = sorted(
            {
                (a, b)
                for members in index.values()
                for a, b in itertools.combinations(sorted(members), 2)
            }
        )
        rels = []
        for a, b in candidates:
            matched = [
                (x, y)
                for x in lists[a]
                for y in lists[b]
                if JaroWinkler.similarity(x.lower(), y.lower()) >= self.distance_threshold
            ]
            if not matched:
                continue
            overlapped = list(dict.fromkeys(x for x, _ in matched))
            score = len(overlapped) / max(1, min(len(lists[a]), len(lists[b])))
            if score >= self.threshold:
                rels.append(
                    _relationship(
                        self.relationship_type,
                        nodes[a],
                        nodes[b],
                        {self.new_property_name: round(score, 6), "overlapped_items": matched},
                    )
                )
        return rels


__all__ = [
    "CosineSimilarityBuilder",
    "JaccardSimilarityBuilder",
    "OverlapScoreBuilder",
    "SummaryCosineSimilarityBuilder",
]
