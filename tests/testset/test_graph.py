"""The knowledge graph: properties, JSON round trip, removal, pair and cluster queries."""

from __future__ import annotations

import itertools
import json

import pytest

from assay.testset import KnowledgeGraph, Node, NodeType, Relationship
from assay.testset.graph import stable_id


def _chain(count: int) -> KnowledgeGraph:
    nodes = [
        Node(
            id=stable_id("n", str(i)),
            type=NodeType.CHUNK,
            properties={"page_content": f"chunk {i}"},
        )
        for i in range(count)
    ]
    rels = [
        Relationship(
            type="cosine_similarity",
            source=a,
            target=b,
            bidirectional=True,
            properties={"cosine_similarity": 0.9},
        )
        for a, b in itertools.pairwise(nodes)
    ]
    return KnowledgeGraph(nodes=nodes, relationships=rels)


def test_properties_are_case_insensitive_and_never_silently_overwritten() -> None:
    node = Node(type=NodeType.DOCUMENT, properties={"page_content": "text"})
    node.add_property("Summary", "short")
    assert node.get_property("SUMMARY") == "short"
    assert node.get_property("missing") is None
    with pytest.raises(ValueError, match="already exists"):
        node.add_property("summary", "other")
    assert repr(node).startswith(
        f"Node(id: {str(node.id)[:6]}, type: document, properties: ['page_content', 'summary']"
    )


def test_save_and_load_keep_nodes_relationships_and_unicode(tmp_path) -> None:
    kg = _chain(3)
    kg.nodes[0].properties["summary"] = "茶壶 — ünïcode"
    path = tmp_path / "kg.json"
    kg.save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert "茶壶" in path.read_text(encoding="utf-8")  # not escaped
    assert [r["source"] for r in data["relationships"]] == [
        str(kg.nodes[0].id),
        str(kg.nodes[1].id),
    ]
    loaded = KnowledgeGraph.load(path)
    assert repr(loaded) == "KnowledgeGraph(nodes: 3, relationships: 2)"
    assert loaded.fingerprint() == kg.fingerprint()
    # relationships point at the loaded node objects, not copies
    assert loaded.relationships[0].target is loaded.nodes[1]


def test_load_refuses_a_relationship_to_a_missing_node(tmp_path) -> None:
    kg = _chain(2)
    data = kg.to_json_data()
    data["nodes"].pop()
    with pytest.raises(ValueError, match="relationship 0 names a node"):
        KnowledgeGraph.from_json_data(data)


def test_add_rejects_other_types_and_remove_node_drops_its_relationships() -> None:
    kg = _chain(3)
    with pytest.raises(ValueError, match="Invalid item type"):
        kg.add("not a node")  # type: ignore[arg-type]
    copy = kg.remove_node(kg.nodes[1], inplace=False)
    assert copy is not None and len(copy.nodes) == 2 and copy.relationships == []
    assert len(kg.nodes) == 3  # untouched
    kg.remove_node(kg.nodes[1])
    assert len(kg.relationships) == 0
    with pytest.raises(ValueError, match="not present"):
        kg.remove_node(Node())


def test_find_two_nodes_single_rel_orders_pairs_and_skips_self_loops() -> None:
    kg = _chain(3)
    kg.add(Relationship(type="cosine_similarity", source=kg.nodes[0], target=kg.nodes[0]))
    pairs = kg.find_two_nodes_single_rel(lambda r: r.type == "cosine_similarity")
    assert len(pairs) == 2
    for a, rel, b in pairs:
        assert str(a.id) < str(b.id) and rel.source is a and rel.target is b


def test_indirect_clusters_are_deterministic_and_not_subsets() -> None:
    kg = _chain(6)
    first = kg.find_n_indirect_clusters(n=4, depth_limit=3, seed=1)
    again = kg.find_n_indirect_clusters(n=4, depth_limit=3, seed=1)
    assert [sorted(str(n.id) for n in c) for c in first] == [
        sorted(str(n.id) for n in c) for c in again
    ]
    assert 1 <= len(first) <= 4
    for a in first:
        assert len(a) >= 2
        for b in first:
            assert a is b or not a < b
    with pytest.raises(ValueError, match="depth_limit"):
        kg.find_n_indirect_clusters(n=1, depth_limit=1)
    with pytest.raises(ValueError, match="No relationships match"):
        kg.find_n_indirect_clusters(n=1, relationship_condition=lambda r: False)
    assert all(len(c) >= 2 for c in kg.find_indirect_clusters(depth_limit=2))


def test_document_of_follows_child_links() -> None:
    document = Node(type=NodeType.DOCUMENT, properties={"page_content": "doc"})
    chunk = Node(type=NodeType.CHUNK, properties={"page_content": "c"})
    kg = KnowledgeGraph(
        nodes=[document, chunk],
        relationships=[Relationship(type="child", source=document, target=chunk)],
    )
    assert kg.document_of(chunk) is document
    assert kg.children_of(document) == [chunk]
    assert kg.document_of(document) is document
