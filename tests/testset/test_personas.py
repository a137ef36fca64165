"""Personas: one call each from differing summaries, no repeats, fuzzy theme matching; the
default query distribution; the opt-in LLM extractors end to end."""

from __future__ import annotations

import asyncio

import pytest

from assay.errors import UsageError
from assay.testset import (
    KnowledgeGraph,
    Node,
    NodeType,
    Persona,
    ThemesPersonasInput,
    ThemesPersonasMatchingPrompt,
    default_query_distribution,
    generate_personas_from_kg,
)
from assay.testset.persona import pick_diverse
from assay.testset.terms import cjk_keyphrases
from tests.testset.corpus import CORPUS, KETTLES
from tests.testset.helpers import generator, prompt_requests


def _docs(summaries: list[str], vectors: list[list[float]] | None = None) -> KnowledgeGraph:
    nodes = []
    for index, summary in enumerate(summaries):
        properties = {"page_content": summary * 2, "summary": summary}
        if vectors:
            properties["summary_embedding"] = vectors[index]
        nodes.append(Node(type=NodeType.DOCUMENT, properties=properties))
    return KnowledgeGraph(nodes=nodes)


def test_diverse_summaries_are_picked_farthest_first() -> None:
    kg = _docs(
        ["kettles and tea, a long summary", "kettles again", "gardens"],
        [[1, 0], [0.99, 0.1], [0, 1]],
    )
    chosen = pick_diverse(kg.nodes, 2)
    assert [n.get_property("summary") for n in chosen] == [
        "kettles and tea, a long summary",
        "gardens",
    ]


def test_personas_are_generated_one_call_each_and_never_repeated(fake) -> None:
    kg = _docs(["Kettles made in Leeds.", "The foundry archive.", "Watering gardens."])
    personas = generate_personas_from_kg(kg, fake.llm(), num_personas=3)
    assert [p.name for p in personas] == ["Evening student", "Retired engineer", "Busy parent"]
    calls = prompt_requests(fake, "testset.persona")
    assert len(calls) == 3
    # each call is told the names already taken
    assert (
        "Evening student" in calls[1].last_user_text
        and "Retired engineer" in calls[2].last_user_text
    )
    with pytest.raises(UsageError, match="no text"):
        generate_personas_from_kg(KnowledgeGraph(), fake.llm())
    with pytest.raises(UsageError, match="num_personas"):
        generate_personas_from_kg(kg, fake.llm(), num_personas=0)


def test_theme_matching_survives_renamed_personas_and_invented_themes(fake) -> None:
    personas = [
        Persona(name="Evening student", role_description="Learns at night."),
        Persona(name="Busy parent", role_description="Little time."),
    ]
    result = ThemesPersonasMatchingPrompt().generate(
        ThemesPersonasInput(themes=["descaling", "cane handles"], personas=personas), llm=fake.llm()
    )
    mapping = asyncio.run(result).mapping
    assert mapping == {"Evening student": ["descaling"], "Busy parent": ["descaling"]}


def test_default_query_distribution_keeps_what_the_graph_supports(fake) -> None:
    g = generator(fake)
    g.generate_with_documents([KETTLES], testset_size=1)
    only = default_query_distribution(fake.llm(), g.knowledge_graph)
    assert [(s.name, w) for s, w in only] == [("single_hop_specific_query_synthesizer", 1.0)]
    full = default_query_distribution(fake.llm())
    assert [w for _, w in full] == [0.5, 0.25, 0.25]
    with pytest.raises(ValueError, match="No compatible query synthesizers"):
        default_query_distribution(fake.llm(), KnowledgeGraph())


def test_llm_extractors_are_opt_in_and_counted(fake) -> None:
    plain = generator(fake).generate_with_documents(CORPUS, testset_size=2)
    assert fake.writer.calls["testset.headlines"] == 0
    assert plain.report.calls["knowledge_graph"] == 2  # embedding batches only
    rich = generator(fake).generate_with_documents(CORPUS, testset_size=2, use_llm_extractors=True)
    assert len(rich) == 2
    assert fake.writer.calls["testset.headlines"] == 3 and fake.writer.calls["testset.themes"] >= 3
    assert rich.report.calls["knowledge_graph"] > plain.report.calls["knowledge_graph"]


def test_chinese_keyphrases_are_repeated_character_strings() -> None:
    text = "黄铜茶壶很漂亮。黄铜茶壶由铸造厂制造。铸造厂在利兹。"
    phrases = cjk_keyphrases(text)
    assert phrases[0] == "黄铜茶壶" and "铸造厂" in phrases
    assert "黄铜" not in phrases  # inside a longer string seen as often
