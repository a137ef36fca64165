"""TestsetGenerator on the fake writer-judge: exact sizes, distribution, determinism, tiny
corpora, language, styles, conversions and cost."""

from __future__ import annotations

import json

import pytest

from assay.errors import UsageError
from assay.schema.dataset import EvaluationDataset
from assay.schema.samples import SingleTurnSample
from assay.testset import Persona, Testset
from assay.testset.synthesizers import (
    MultiHopSpecificQuerySynthesizer,
    SingleHopSpecificQuerySynthesizer,
    split_sizes,
)
from assay.testset.transforms import default_transforms
from tests.metrics.loopback import fenced, system_text
from tests.testset.corpus import CHINESE, CORPUS, FOUNDRY, KETTLES, NO_HEADINGS, TINY
from tests.testset.helpers import generator, prompt_requests, single_hop_only


def test_split_sizes_is_exact_largest_remainder() -> None:
    assert split_sizes([0.5, 0.25, 0.25], 7) == [3, 2, 2]
    assert split_sizes([0.5, 0.25, 0.25], 10) == [5, 3, 2]  # Ragas' ceil made 12
    assert split_sizes([1, 1, 1], 2) == [1, 1, 0]
    for size in range(0, 30):
        counts = split_sizes([0.2, 0.3, 0.5], size)
        assert sum(counts) == size
        assert all(abs(c - size * w) < 1 for c, w in zip(counts, [0.2, 0.3, 0.5], strict=True))
    with pytest.raises(UsageError, match=r"query_distribution\[1\]"):
        split_sizes([1.0, -1.0], 3)


def test_the_size_and_the_split_are_exact(fake) -> None:
    distribution = [
        (SingleHopSpecificQuerySynthesizer(name="first"), 0.6),
        (SingleHopSpecificQuerySynthesizer(name="second"), 0.4),
    ]
    testset = generator(fake).generate_with_documents(
        CORPUS,
        testset_size=5,
        query_distribution=distribution,
        transforms=default_transforms(None, None, fake.embeddings(), min_tokens=20, max_tokens=80),
    )
    assert len(testset) == 5
    report = testset.report
    assert report.requested_split == {"first": 3, "second": 2}
    assert report.produced_split == {"first": 3, "second": 2}
    assert [s.synthesizer_name for s in testset] == ["first"] * 3 + ["second"] * 2
    assert report.shortfall == 0 and report.shortfall_reasons == []


def test_default_distribution_fills_every_synthesizer_or_says_who_handed_over(fake) -> None:
    testset = generator(fake).generate_with_documents(CORPUS, testset_size=8)
    report = testset.report
    assert len(testset) == 8
    assert report.requested_split == {
        "single_hop_specific_query_synthesizer": 4,
        "multi_hop_abstract_query_synthesizer": 2,
        "multi_hop_specific_query_synthesizer": 2,
    }
    received: dict[str, int] = {}
    for move in report.reassigned:
        received[move.synthesizer] = received.get(move.synthesizer, 0) - move.samples
        for name, count in move.to.items():
            received[name] = received.get(name, 0) + count
    for name, asked in report.requested_split.items():
        assert report.produced_split[name] == asked + received.get(name, 0)
    multi = [s for s in testset if s.synthesizer_name.startswith("multi_hop")]
    assert multi, "the corpus shares names across documents: multi-hop samples are possible"
    for sample in multi:
        assert len(set(sample.provenance.chunk_ids)) >= 2
        assert len(sample.provenance.gate["evidence_contexts"]) >= 2


def test_a_synthesizer_with_no_clusters_hands_its_share_over(fake) -> None:
    testset = generator(fake).generate_with_documents([KETTLES], testset_size=4)
    report = testset.report
    assert len(testset) == 4
    moved = {m.synthesizer: m for m in report.reassigned}
    assert (
        moved["multi_hop_abstract_query_synthesizer"].reason
        == "found no clusters in the knowledge graph"
    )
    assert moved["multi_hop_specific_query_synthesizer"].to == {
        "single_hop_specific_query_synthesizer": 1
    }
    assert report.produced_split["single_hop_specific_query_synthesizer"] == 4


def _run(fake, documents, size=4, **options):
    return generator(fake).generate_with_documents(documents, testset_size=size, **options)


def test_the_same_seed_gives_the_same_testset(fake) -> None:
    first = _run(fake, CORPUS, 6, seed=7).to_list()
    again = _run(fake, CORPUS, 6, seed=7).to_list()
    other = _run(fake, CORPUS, 6, seed=8).to_list()
    assert first == again
    assert [r["provenance"]["candidate"] for r in first] != [
        r["provenance"]["candidate"] for r in other
    ]


@pytest.mark.parametrize(
    "documents",
    [
        pytest.param([TINY], id="one-sentence"),
        pytest.param([NO_HEADINGS], id="no-headings"),
        pytest.param([KETTLES, KETTLES, KETTLES], id="duplicates"),
        pytest.param(
            [
                "The Foundry closed in 1964 after a long strike.",
                TINY,
                "Cane handles are wrapped by hand at Hartley.",
            ],
            id="short-documents",
        ),
    ],
)
def test_tiny_and_odd_corpora_produce_a_testset(fake, documents) -> None:
    testset = _run(fake, documents, size=3)
    assert len(testset) >= 1
    report = testset.report
    assert report.produced + report.shortfall == 3
    if report.shortfall:
        assert report.shortfall_reasons, "a shortfall always says why"
    if len(documents) == 3 and documents[0] == documents[1]:
        assert "2 duplicate documents dropped (same text as an earlier one)" in report.notes
        assert report.documents == 1
    for sample in testset:
        assert sample.eval_sample.reference_contexts and sample.provenance.evidence


def test_prechunked_input_is_kept_as_chunks(fake) -> None:
    chunks = [KETTLES, FOUNDRY, "   ", NO_HEADINGS]
    generator_ = generator(fake)
    testset = generator_.generate_with_chunks(chunks, testset_size=3)
    assert len(testset) == 3
    kinds = {n.type.value for n in generator_.knowledge_graph.nodes}
    assert kinds == {"chunk"}
    assert "1 empty chunks skipped" in testset.report.notes
    for sample in testset:
        assert sample.eval_sample.reference_contexts[0] in (KETTLES, FOUNDRY, NO_HEADINGS)


def test_empty_input_is_a_clear_error(fake) -> None:
    g = generator(fake)
    with pytest.raises(UsageError, match="no documents with text: got 0 documents"):
        g.generate_with_documents([], testset_size=3)
    with pytest.raises(UsageError, match="got 2 documents, 2 of them empty"):
        g.generate_with_documents(["", "  \n"], testset_size=3)
    with pytest.raises(UsageError, match="no chunks with text"):
        g.generate_with_chunks([], testset_size=3)
    with pytest.raises(UsageError, match="holds no text"):
        g.generate(testset_size=3)
    with pytest.raises(
        UsageError, match="testset_size must be a whole number of at least 1, got 0"
    ):
        g.generate_with_documents([TINY], testset_size=0)
    with pytest.raises(UsageError, match="documents\\[1\\] is a int"):
        g.generate_with_documents([TINY, 5], testset_size=1)
    assert fake.chat_count == 0


def test_langchain_and_llamaindex_documents(fake) -> None:
    from langchain_core.documents import Document as LCDocument
    from llama_index.core.schema import Document as LIDocument

    from assay.engine.run_config import RunConfig

    testset = generator(fake).generate_with_langchain_docs(
        [LCDocument(page_content=KETTLES, metadata={"source": "kettle.md"})],
        testset_size=2,
        transforms_llm=None,
        run_config=RunConfig(max_workers=4),
        callbacks=None,
        token_usage_parser=None,
        with_debugging_logs=False,
        raise_exceptions=False,
    )
    assert len(testset) == 2
    g = generator(fake)
    testset = g.generate_with_llamaindex_docs(
        [LIDocument(text=FOUNDRY, metadata={"source": "foundry.rst"})], testset_size=2
    )
    assert len(testset) == 2
    document = next(n for n in g.knowledge_graph.nodes if n.type.value == "document")
    assert document.get_property("document_metadata") == {"source": "foundry.rst"}


def test_the_corpus_language_reaches_the_prompts_and_the_judge(fake) -> None:
    testset = _run(fake, [CHINESE], size=2, query_distribution=single_hop_only())
    assert len(testset) >= 1
    assert testset.report.language == "chinese"
    asks = prompt_requests(fake, "testset.single_hop")
    assert asks and all(fenced(r, "language") == "chinese" for r in asks)
    judged = prompt_requests(fake, "supported")
    assert judged and all("标签" in system_text(r) for r in judged)  # the Chinese judge prompt
    assert all(s.provenance.language == "chinese" for s in testset)


def test_query_styles_are_opt_in_and_labelled(fake) -> None:
    plain = _run(fake, CORPUS, 3, query_distribution=single_hop_only())
    assert {s.eval_sample.query_style for s in plain} == {"Perfect grammar"}
    styled = _run(
        fake,
        CORPUS,
        4,
        query_distribution=single_hop_only(),
        query_styles=["misspelled", "web_search_like"],
    )
    assert {s.eval_sample.query_style for s in styled} == {
        "Misspelled queries",
        "Web search like queries",
    }
    assert all(s.provenance.style == s.eval_sample.query_style for s in styled)
    styles_sent = {fenced(r, "style") for r in prompt_requests(fake, "testset.single_hop")}
    assert "with two or three realistic spelling mistakes" in styles_sent
    with pytest.raises(UsageError, match="unknown style 'shouting'"):
        _run(fake, CORPUS, 1, query_styles=["shouting"])


def test_given_personas_are_used_without_persona_calls(fake) -> None:
    personas = [Persona(name="Tea historian", role_description="Studies Victorian kitchenware.")]
    testset = generator(fake, persona_list=personas).generate_with_documents(CORPUS, testset_size=3)
    assert {s.eval_sample.persona_name for s in testset} == {"Tea historian"}
    assert fake.writer.calls["testset.persona"] == 0


def test_conversions_files_and_cost(fake, tmp_path) -> None:
    testset = _run(fake, CORPUS, 3, query_distribution=single_hop_only())
    dataset = testset.to_evaluation_dataset()
    assert isinstance(dataset, EvaluationDataset) and len(dataset) == 3
    assert all(isinstance(s, SingleTurnSample) and s.reference_contexts for s in dataset)
    frame = testset.to_pandas()
    assert {
        "user_input",
        "reference_contexts",
        "reference",
        "synthesizer_name",
        "persona_name",
        "query_style",
        "document_ids",
        "evidence",
    } <= set(frame.columns)
    path = tmp_path / "testset.jsonl"
    testset.save(path)
    loaded = Testset.load(path)
    assert loaded.to_list() == testset.to_list()
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert rows[0]["provenance"]["evidence"][0] in rows[0]["reference_contexts"][0]
    assert len(EvaluationDataset.from_jsonl(path)) == 3  # plain evaluation rows too
    usage = testset.total_tokens()
    assert usage.input_tokens > 0 and usage.output_tokens > 0
    assert testset.total_cost(
        cost_per_input_token=1e-6, cost_per_output_token=2e-6
    ) == pytest.approx(usage.input_tokens * 1e-6 + usage.output_tokens * 2e-6)
    with pytest.raises(ValueError, match="no known price"):
        testset.total_cost()
    with pytest.raises(ValueError, match="loaded from a file"):
        loaded.total_cost()
    report = testset.report
    # the graph cost embedding batches only, no LLM call
    assert report.calls["knowledge_graph"] == len(fake.server.embedding_requests) == 2
    assert report.calls["personas"] == 3
    assert report.calls["samples"] == 3 * 3  # one writing call and two judge calls per kept sample
    testset.save_report(tmp_path / "report.json")
    assert json.loads((tmp_path / "report.json").read_text())["coverage"] == report.coverage


def test_coverage_spreads_questions_over_documents(fake) -> None:
    testset = _run(fake, CORPUS, 3, query_distribution=single_hop_only())
    assert testset.report.documents == 3 and testset.report.documents_seeded == 3
    assert testset.report.coverage == 1.0


def test_multi_hop_specific_uses_two_documents(fake) -> None:
    testset = _run(fake, CORPUS, 2, query_distribution=[(MultiHopSpecificQuerySynthesizer(), 1.0)])
    assert len(testset) >= 1
    for sample in testset:
        assert len(sample.provenance.document_ids) == 2
        assert sample.provenance.terms  # the shared names it was built around


def test_the_ragas_flow_on_a_graph_built_by_hand(fake, tmp_path) -> None:
    from assay.testset import KnowledgeGraph, Node, NodeType, TestsetGenerator, apply_transforms

    kg = KnowledgeGraph()
    for text in CORPUS:
        kg.nodes.append(
            Node(type=NodeType.DOCUMENT, properties={"page_content": text, "document_metadata": {}})
        )
    apply_transforms(kg, default_transforms(kg.nodes, fake.llm(), fake.embeddings()))
    kg.save(tmp_path / "knowledge_graph.json")
    loaded = KnowledgeGraph.load(tmp_path / "knowledge_graph.json")
    testset = TestsetGenerator(fake.llm(), fake.embeddings(), loaded).generate(testset_size=4)
    assert len(testset) == 4
    assert all(s.provenance.chunk_ids[0] in {str(n.id) for n in loaded.nodes} for s in testset)


def test_no_llm_is_refused_before_any_work(fake) -> None:
    from assay.testset import TestsetGenerator

    with pytest.raises(UsageError, match="An llm was not provided"):
        TestsetGenerator(embedding_model=fake.embeddings()).generate_with_documents(
            CORPUS, testset_size=2
        )
    assert fake.server.embedding_requests == []


def test_return_executor_is_refused_with_the_alternative(fake) -> None:
    g = generator(fake)
    with pytest.raises(UsageError, match="checkpoint_dir"):
        g.generate_with_langchain_docs([KETTLES], testset_size=1, return_executor=True)
    assert fake.chat_count == 0
