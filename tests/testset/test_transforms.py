"""Transforms: the LLM-free default pipeline, failure isolation, builders, LLM extractors."""

from __future__ import annotations

import collections
from dataclasses import dataclass

import pytest

from assay.errors import UsageError
from assay.testset import KnowledgeGraph, Node, NodeType, apply_transforms, default_transforms
from assay.testset.graph import stable_id
from assay.testset.transforms import (
    CosineSimilarityBuilder,
    CustomNodeFilter,
    EmbeddingExtractor,
    Extractor,
    HeadlinesExtractor,
    HeadlineSplitter,
    JaccardSimilarityBuilder,
    OverlapScoreBuilder,
    Parallel,
    SummaryExtractor,
    default_transforms_for_prechunked,
)
from tests.testset.corpus import CORPUS, FOUNDRY, KETTLES


def _documents(texts: list[str]) -> KnowledgeGraph:
    return KnowledgeGraph(
        nodes=[
            Node(
                id=stable_id("doc", t),
                type=NodeType.DOCUMENT,
                properties={"page_content": t, "document_metadata": {}},
            )
            for t in texts
        ]
    )


def test_the_default_pipeline_builds_a_graph_without_any_model() -> None:
    kg = _documents(CORPUS)
    report = apply_transforms(kg, default_transforms(kg.nodes, min_tokens=20, max_tokens=80))
    assert report.failures == []
    chunks = [n for n in kg.nodes if n.type == NodeType.CHUNK]
    assert len(chunks) >= 6
    for chunk in chunks:
        assert chunk.get_property("keyphrases") and chunk.get_property("summary")
        assert chunk.get_property("language") == "english"
        document = kg.document_of(chunk)
        assert chunk.get_property("page_content") in document.get_property("page_content")
    kinds = collections.Counter(r.type for r in kg.relationships)
    assert kinds["child"] == len(chunks) and kinds["next"] == len(chunks) - 3
    assert kinds["entities_overlap"] >= 1  # Hartley Foundry / Leeds / Brass Kettle are shared
    overlap = next(r for r in kg.relationships if r.type == "entities_overlap")
    assert overlap.bidirectional and overlap.get_property("overlapped_items")


def test_the_same_corpus_gives_the_same_graph() -> None:
    first, second = _documents(CORPUS), _documents(CORPUS)
    apply_transforms(first, default_transforms(first.nodes))
    apply_transforms(second, default_transforms(second.nodes))
    assert first.fingerprint() == second.fingerprint()


def test_no_documents_is_a_clear_error() -> None:
    with pytest.raises(UsageError, match="no documents"):
        default_transforms([])
    with pytest.raises(UsageError, match="needs an llm"):
        default_transforms(["x"], use_llm=True)


@dataclass
class Fragile(Extractor):
    """Fails on the node whose text contains 'Foundry'."""

    property_name: str = "shout"

    async def extract(self, node: Node):
        text = node.get_property("page_content")
        if "Hartley Foundry opened" in text:
            raise RuntimeError("boom")
        return self.property_name, text.upper()[:10]


def test_one_failing_node_is_recorded_and_the_others_keep_their_work() -> None:
    kg = _documents(CORPUS)
    report = apply_transforms(
        kg, [Parallel(Fragile(), Fragile(name="again", property_name="again"))]
    )
    assert report.steps == {"Fragile + again": 6}
    assert len(report.failures) == 2
    assert {f.transform for f in report.failures} == {"Fragile", "again"}
    assert all("RuntimeError: boom" in f.error for f in report.failures)
    done = [n for n in kg.nodes if n.get_property("shout")]
    assert len(done) == 2
    with pytest.raises(RuntimeError, match="boom"):
        apply_transforms(_documents(CORPUS), Fragile(), raise_exceptions=True)
    with pytest.raises(ValueError, match="Invalid transforms type"):
        apply_transforms(kg, [object()])  # type: ignore[list-item]


def test_embeddings_and_cosine_builder(fake) -> None:
    kg = _documents(
        [
            KETTLES,
            KETTLES.replace("Brass", "Copper"),
            "Completely different words about gardening soil.",
        ]
    )
    apply_transforms(
        kg,
        [
            EmbeddingExtractor(embedding_model=fake.embeddings()),
            CosineSimilarityBuilder(threshold=0.9),
        ],
    )
    assert len(fake.server.embedding_requests) == 1  # one batch, not one call per node
    assert all(len(n.get_property("embedding")) == 64 for n in kg.nodes)
    rels = [r for r in kg.relationships if r.type == "cosine_similarity"]
    assert len(rels) == 1 and {rels[0].source.id, rels[0].target.id} == {
        kg.nodes[0].id,
        kg.nodes[1].id,
    }
    assert 0.9 <= rels[0].get_property("cosine_similarity") <= 1.0
    with pytest.raises(ValueError, match="has no embedding"):
        apply_transforms(_documents(["x"]), CosineSimilarityBuilder(), raise_exceptions=True)


def test_jaccard_and_overlap_builders() -> None:
    a = Node(
        type=NodeType.CHUNK, properties={"entities": ["Leeds", "Hartley Foundry", "Brass Kettle"]}
    )
    b = Node(type=NodeType.CHUNK, properties={"entities": ["leeds", "Hartley Foundry", "Tea"]})
    c = Node(type=NodeType.CHUNK, properties={"entities": ["Tomatoes"]})
    kg = KnowledgeGraph(nodes=[a, b, c])
    apply_transforms(
        kg, [JaccardSimilarityBuilder(threshold=0.5), OverlapScoreBuilder(threshold=0.5)]
    )
    jaccard = [r for r in kg.relationships if r.type == "jaccard_similarity"]
    assert len(jaccard) == 1 and jaccard[0].get_property("jaccard_similarity") == pytest.approx(0.5)
    overlap = [r for r in kg.relationships if r.type == "entities_overlap"]
    assert len(overlap) == 1
    assert overlap[0].get_property("overlap_score") == pytest.approx(2 / 3, abs=1e-6)
    assert [x for x, _ in overlap[0].get_property("overlapped_items")] == [
        "Leeds",
        "Hartley Foundry",
    ]


def test_llm_extractors_and_the_headline_splitter(fake) -> None:
    llm = fake.llm()
    kg = _documents([KETTLES, FOUNDRY])
    report = apply_transforms(
        kg,
        [
            HeadlinesExtractor(llm=llm, filter_nodes=lambda n: n.type == NodeType.DOCUMENT),
            HeadlineSplitter(min_tokens=10, max_tokens=200),
            SummaryExtractor(llm=llm, filter_nodes=lambda n: n.type == NodeType.CHUNK),
            CustomNodeFilter(llm=llm, min_score=2, filter_nodes=lambda n: n.type == NodeType.CHUNK),
        ],
    )
    assert report.failures == []
    assert kg.nodes[0].get_property("headlines") == [
        "Caring for the Brass Kettle",
        "Descaling",
        "The Handle",
    ]
    # the RST document has no Markdown headlines: it is split at its own headings instead
    assert kg.nodes[1].get_property("headlines") == []
    chunks = [n for n in kg.nodes if n.type == NodeType.CHUNK]
    assert len(chunks) == 6
    assert all(
        n.get_property("summary") and n.get_property("question_potential") == 4 for n in chunks
    )
    assert fake.writer.calls["testset.headlines"] == 2 and fake.writer.calls["testset.summary"] == 6


def test_the_prechunked_pipeline_works_on_chunks_only(fake) -> None:
    kg = KnowledgeGraph(
        nodes=[Node(type=NodeType.CHUNK, properties={"page_content": t}) for t in CORPUS]
    )
    apply_transforms(kg, default_transforms_for_prechunked(embedding_model=fake.embeddings()))
    assert all(
        n.get_property("embedding") and n.get_property("entities") is not None for n in kg.nodes
    )
    assert len(kg.nodes) == 3


def test_without_yake_the_default_pipeline_says_which_extra_to_install(monkeypatch) -> None:
    import sys

    from assay.errors import MissingDependency

    monkeypatch.setitem(sys.modules, "yake", None)  # import yake now raises ImportError
    with pytest.raises(MissingDependency, match=r"pip install 'assay\[testset\]'"):
        default_transforms(["a document"])


def test_llm_extractors_read_a_long_text_piece_by_piece_and_merge(fake) -> None:
    from assay.testset.transforms import NERExtractor, ThemesExtractor, TitleExtractor

    long_text = "\n\n".join([KETTLES, FOUNDRY, KETTLES.replace("Leeds", "York")])
    node = Node(type=NodeType.DOCUMENT, properties={"page_content": long_text})
    kg = KnowledgeGraph(nodes=[node])
    apply_transforms(
        kg,
        [
            NERExtractor(llm=fake.llm(), max_token_limit=120, max_num_entities=50),
            ThemesExtractor(llm=fake.llm()),
            TitleExtractor(llm=fake.llm()),
        ],
    )
    calls = fake.writer.calls
    assert (
        calls["testset.entities"] >= 4
        and calls["testset.themes"] == 1
        and calls["testset.title"] == 1
    )
    found = node.get_property("entities")
    assert len(found) == len(set(found))  # merged without repeats
    assert "York" in found and "Leeds" in found  # from different pieces
    assert node.get_property("title") and node.get_property("themes")


def test_the_node_filter_removes_nodes_below_its_score(fake) -> None:
    kg = KnowledgeGraph(
        nodes=[Node(type=NodeType.CHUNK, properties={"page_content": t}) for t in CORPUS]
    )
    report = apply_transforms(kg, CustomNodeFilter(llm=fake.llm(), min_score=5))
    assert report.failures == [] and kg.nodes == []  # the fake rates every chunk 4


def test_jaccard_on_one_key_of_typed_entities() -> None:
    a = Node(properties={"entities": {"PER": ["Ada", "Alan"], "ORG": ["Foundry"]}})
    b = Node(properties={"entities": {"PER": ["Ada", "Alan"], "ORG": ["Library"]}})
    kg = KnowledgeGraph(nodes=[a, b])
    apply_transforms(
        kg, JaccardSimilarityBuilder(key_name="PER", new_property_name="entity_jaccard_similarity")
    )
    assert [r.get_property("entity_jaccard_similarity") for r in kg.relationships] == [1.0]


def test_llm_extractor_answers_have_bounded_budgets_and_one_try(fake) -> None:
    from assay.testset.asking import SUMMARY_MAX_TOKENS, list_budget
    from assay.testset.transforms import NERExtractor
    from tests.models.fake_openai import truncated
    from tests.testset.fake_model import Writer
    from tests.testset.helpers import prompt_requests

    def runaway_entities(request, prompt):
        if prompt == "testset.entities" and "Descaling" in request.last_user_text:
            return truncated('{"entities": ["Descaling", "Descaling", "Descaling', usage=(400, 300))
        return None

    writer = Writer(fail=runaway_entities)
    fake.server.default = writer
    fake.writer = writer
    kg = _documents([KETTLES, FOUNDRY])
    report = apply_transforms(
        kg,
        [
            NERExtractor(llm=fake.llm(), max_num_entities=4),
            SummaryExtractor(llm=fake.llm()),
            HeadlinesExtractor(llm=fake.llm(), max_num=0, max_tokens=77),
        ],
    )
    entity_requests = prompt_requests(fake, "testset.entities")
    assert [r.body["max_tokens"] for r in entity_requests] == [list_budget(4)] * 2
    assert {r.body["max_tokens"] for r in prompt_requests(fake, "testset.summary")} == {
        SUMMARY_MAX_TOKENS
    }
    assert {r.body["max_tokens"] for r in prompt_requests(fake, "testset.headlines")} == {77}
    # the runaway list was asked once, failed only its own node, and the other node kept its work
    assert len(report.failures) == 1 and "NERExtractor" in str(report.failures[0])
    kettles = [n for n in kg.nodes if "Descaling" in n.get_property("page_content")]
    others = [n for n in kg.nodes if "Descaling" not in n.get_property("page_content")]
    assert kettles[0].get_property("entities") is None and others[0].get_property("entities")
    assert all(n.get_property("summary") for n in kg.nodes)
