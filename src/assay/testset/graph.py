"""The knowledge graph a test set is generated from: documents, their chunks, and how they relate.

`Node`s carry free-form `properties` (`page_content`, `document_metadata`, `summary`,
`keyphrases`, `entities`, embeddings, ...); `Relationship`s link two nodes with a type
(`child`, `next`, `cosine_similarity`, `entities_overlap`, ...). The graph saves to and loads
from one UTF-8 JSON file, `{"nodes": [...], "relationships": [...]}`, relationships naming
their nodes by id, so a saved graph can be reloaded and generation resumed without paying for
the transforms again.

Ids are UUIDs, as in Ragas. The graph builders of this package derive them from content
(`stable_id`), so the same corpus always yields the same ids: seeded generation and resuming
from a checkpoint rely on that.
"""

from __future__ import annotations

import copy
import enum
import hashlib
import json
import os
import random
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

_NAMESPACE = uuid.UUID("6c1f0f52-5a1e-4c55-9a70-0b7f5d2f6a61")


def stable_id(*parts: str) -> uuid.UUID:
    """A UUID determined by `parts` (the same corpus gives the same node ids)."""
    return uuid.uuid5(_NAMESPACE, "\x1f".join(parts))


class NodeType(str, enum.Enum):
    UNKNOWN = ""
    DOCUMENT = "document"
    CHUNK = "chunk"


class Node(BaseModel):
    model_config = ConfigDict(validate_assignment=True)

    id: uuid.UUID = Field(default_factory=uuid.uuid4)
    properties: dict[str, Any] = Field(default_factory=dict)
    type: NodeType = NodeType.UNKNOWN

    def __repr__(self) -> str:
        return f"Node(id: {str(self.id)[:6]}, type: {self.type.value}, properties: {list(self.properties)})"

    __str__ = __repr__

    def __hash__(self) -> int:
        return hash(self.id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Node) and self.id == other.id

    def add_property(self, key: str, value: Any) -> None:
        """Add a new property (keys are case-insensitive); an existing one is an error."""
        key = key.lower()
        if key in (name.lower() for name in self.properties):
            raise ValueError(f"Property {key} already exists")
        self.properties[key] = value

    def get_property(self, key: str) -> Any:
        """A property by case-insensitive name; None when the node has none of that name."""
        wanted = key.lower()
        for name, value in self.properties.items():
            if name.lower() == wanted:
                return value
        return None

    def has_property(self, key: str) -> bool:
        return self.get_property(key) is not None


class Relationship(BaseModel):
    id: uuid.UUID = Field(default_factory=uuid.uuid4)
    type: str
    source: Node
    target: Node
    bidirectional: bool = False
    properties: dict[str, Any] = Field(default_factory=dict)

    def get_property(self, key: str) -> Any:
        wanted = key.lower()
        for name, value in self.properties.items():
            if name.lower() == wanted:
                return value
        return None

    def __repr__(self) -> str:
        arrow = "<->" if self.bidirectional else "->"
        return (
            f"Relationship(Node(id: {str(self.source.id)[:6]}) {arrow} "
            f"Node(id: {str(self.target.id)[:6]}), type: {self.type}, "
            f"properties: {list(self.properties)})"
        )

    __str__ = __repr__

    def __hash__(self) -> int:
        return hash(self.id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Relationship) and self.id == other.id


class KnowledgeGraph(BaseModel):
    nodes: list[Node] = Field(default_factory=list)
    relationships: list[Relationship] = Field(default_factory=list)

    def __repr__(self) -> str:
        return f"KnowledgeGraph(nodes: {len(self.nodes)}, relationships: {len(self.relationships)})"

    __str__ = __repr__

    def add(self, item: Node | Relationship) -> None:
        if isinstance(item, Node):
            self.nodes.append(item)
        elif isinstance(item, Relationship):
            self.relationships.append(item)
        else:
            raise ValueError(f"Invalid item type: {type(item)}")

    # -- persistence ------------------------------------------------------------------------
    def to_json_data(self) -> dict[str, Any]:
        return {
            "nodes": [node.model_dump(mode="json") for node in self.nodes],
            "relationships": [
                {
                    "id": str(rel.id),
                    "type": rel.type,
                    "source": str(rel.source.id),
                    "target": str(rel.target.id),
                    "bidirectional": rel.bidirectional,
                    "properties": rel.properties,
                }
                for rel in self.relationships
            ],
        }

    def save(self, path: str | Path) -> None:
        """Write the graph as UTF-8 JSON; written to a temporary file first, so a crash mid-write
        never leaves a torn graph where a good one was."""
        path = Path(path)
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(
            json.dumps(self.to_json_data(), indent=2, ensure_ascii=False), encoding="utf-8"
        )
        os.replace(temporary, path)

    @classmethod
    def load(cls, path: str | Path) -> KnowledgeGraph:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls.from_json_data(data, source=str(path))

    @classmethod
    def from_json_data(cls, data: dict[str, Any], *, source: str = "graph") -> KnowledgeGraph:
        nodes = [Node.model_validate(item) for item in data.get("nodes", [])]
        by_id = {str(node.id): node for node in nodes}
        relationships = []
        for index, item in enumerate(data.get("relationships", [])):
            source_node = by_id.get(_node_ref(item.get("source")))
            target_node = by_id.get(_node_ref(item.get("target")))
            if source_node is None or target_node is None:
                raise ValueError(
                    f"{source}: relationship {index} names a node the graph does not hold"
                )
            relationships.append(
                Relationship(
                    id=item.get("id") or uuid.uuid4(),
                    type=item["type"],
                    source=source_node,
                    target=target_node,
                    bidirectional=item.get("bidirectional", False),
                    properties=item.get("properties", {}),
                )
            )
        return cls(nodes=nodes, relationships=relationships)

    def fingerprint(self) -> str:
        """A hash of the graph's content (checkpoints refuse a graph that changed)."""
        payload = json.dumps(self.to_json_data(), sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]

    # -- queries -----------------------------------------------------------------------------
    def get_node_by_id(self, node_id: uuid.UUID | str) -> Node | None:
        wanted = str(node_id)
        return next((node for node in self.nodes if str(node.id) == wanted), None)

    def remove_node(self, node: Node, inplace: bool = True) -> KnowledgeGraph | None:
        """Remove a node and every relationship touching it (on a copy with `inplace=False`)."""
        if node not in self.nodes:
            raise ValueError("Node is not present in the knowledge graph.")
        graph = self if inplace else copy.deepcopy(self)
        graph.nodes = [n for n in graph.nodes if n.id != node.id]
        graph.relationships = [
            r for r in graph.relationships if r.source.id != node.id and r.target.id != node.id
        ]
        return None if inplace else graph

    def children_of(self, node: Node) -> list[Node]:
        """The chunks a document (or a larger chunk) was split into, in reading order."""
        return [
            r.target for r in self.relationships if r.type == "child" and r.source.id == node.id
        ]

    def document_of(self, node: Node) -> Node:
        """The document a chunk comes from (the node itself when it has no parent)."""
        parents = {r.target.id: r.source for r in self.relationships if r.type == "child"}
        current = node
        seen = {current.id}
        while current.id in parents and parents[current.id].id not in seen:
            current = parents[current.id]
            seen.add(current.id)
        return current

    def find_two_nodes_single_rel(
        self, relationship_condition: Callable[[Relationship], bool] = lambda _: True
    ) -> list[tuple[Node, Relationship, Node]]:
        """Pairs of distinct nodes joined by a relationship passing the condition, each pair once,
        the node with the smaller id first; sorted by ids so the order is reproducible."""
        found: dict[tuple[str, str], tuple[Node, Relationship, Node]] = {}
        for rel in self.relationships:
            if not relationship_condition(rel) or rel.source.id == rel.target.id:
                continue
            a, b = rel.source, rel.target
            if str(b.id) < str(a.id):
                a, b = b, a
                rel = Relationship(
                    id=rel.id,
                    type=rel.type,
                    source=a,
                    target=b,
                    bidirectional=rel.bidirectional,
                    properties=rel.properties,
                )
            found.setdefault((str(a.id), str(b.id)), (a, rel, b))
        return [found[key] for key in sorted(found)]

    def find_indirect_clusters(
        self,
        relationship_condition: Callable[[Relationship], bool] = lambda _: True,
        depth_limit: int = 3,
    ) -> list[set[Node]]:
        """Every set of nodes along a simple path of 2..depth_limit+1 nodes (bounded)."""
        if depth_limit < 2:
            raise ValueError("Depth limit must be at least 2")
        return [set(path) for _, path in self._paths(relationship_condition, depth_limit, 1000)]

    def find_n_indirect_clusters(
        self,
        n: int,
        relationship_condition: Callable[[Relationship], bool] = lambda _: True,
        depth_limit: int = 3,
        seed: int = 0,
    ) -> list[set[Node]]:
        """Up to `n` clusters (node sets along paths), spread over start nodes round-robin;
        a cluster contained in one already kept is skipped. Deterministic for a given seed."""
        if depth_limit < 2:
            raise ValueError("depth_limit must be at least 2 to form valid clusters")
        if n < 1:
            raise ValueError("n must be at least 1")
        if not any(relationship_condition(r) for r in self.relationships):
            raise ValueError("No relationships match the provided condition. Cannot form clusters.")
        by_start: dict[str, list[frozenset[Node]]] = {}
        for start, path in self._paths(relationship_condition, depth_limit, max(50, 10 * n)):
            by_start.setdefault(start, []).append(frozenset(path))
        starts = sorted(by_start)
        random.Random(seed).shuffle(starts)
        kept: list[frozenset[Node]] = []
        while len(kept) < n and any(by_start[s] for s in starts):
            for start in starts:
                if not by_start[start] or len(kept) >= n:
                    continue
                cluster = by_start[start].pop(0)
                if any(cluster <= other for other in kept):
                    continue
                kept = [other for other in kept if not other < cluster]
                kept.append(cluster)
        return [set(c) for c in kept]

    def _paths(
        self, condition: Callable[[Relationship], bool], depth: int, limit: int
    ) -> list[tuple[str, tuple[Node, ...]]]:
        """Simple paths of 2..depth+1 nodes, at most `limit` per start node, in a fixed order."""
        adjacency: dict[str, list[Node]] = {}
        nodes: dict[str, Node] = {}
        for rel in self.relationships:
            if not condition(rel) or rel.source.id == rel.target.id:
                continue
            a, b = str(rel.source.id), str(rel.target.id)
            nodes[a], nodes[b] = rel.source, rel.target
            adjacency.setdefault(a, []).append(rel.target)
            if rel.bidirectional:
                adjacency.setdefault(b, []).append(rel.source)
        out: list[tuple[str, tuple[Node, ...]]] = []
        seen: set[frozenset[str]] = set()
        for start in sorted(nodes):
            stack: list[tuple[Node, ...]] = [(nodes[start],)]
            found = 0
            while stack and found < limit:
                path = stack.pop()
                nexts = [m for m in adjacency.get(str(path[-1].id), []) if m not in path]
                if len(path) > 1 and (len(path) == depth + 1 or not nexts):
                    key = frozenset(str(p.id) for p in path)
                    if key not in seen:
                        seen.add(key)
                        out.append((start, path))
                        found += 1
                    continue
                for m in sorted(nexts, key=lambda x: str(x.id), reverse=True):
                    stack.append((*path, m))
        return out


def _node_ref(value: Any) -> str:
    """A relationship's end as saved: a node id, or (Ragas' files) the whole node."""
    return str(value.get("id")) if isinstance(value, dict) else str(value)


def nodes_of_type(graph: KnowledgeGraph, node_type: NodeType) -> list[Node]:
    return [node for node in graph.nodes if node.type == node_type]


def iter_nodes(graph: KnowledgeGraph, types: Iterable[NodeType]) -> list[Node]:
    wanted = set(types)
    return [node for node in graph.nodes if node.type in wanted]


__all__ = ["KnowledgeGraph", "Node", "NodeType", "Relationship", "stable_id"]
