"""Multi-hop questions: two or more distinct chunks, one call.

- `MultiHopSpecificQuerySynthesizer`: pairs of chunks joined by `entities_overlap` (else
  `keyphrases_overlap`), built around the items they share.
- `MultiHopAbstractQuerySynthesizer`: groups of two or three chunks joined by
  `cosine_similarity` (chunks) or `summary_similarity` (documents, each replaced by one of its
  chunks), else by `keyphrases_overlap`; a broad question on their common themes.

A cluster never holds two chunks with the same text. Contexts go to the model numbered; the
sample's `reference_contexts` are the chunks as they are (no `<1-hop>` markers), so the gate can
check that the evidence comes from two of them.

The draft's schema asks for one sentence number from each context, in context order (a tuple of
enums, `multi_hop_draft`), then the answer in one part per context: where the provider
constrains output to the schema, a small writer cannot cite one context only (in the benchmark
run before this, 5 of 16 multi-hop drafts did) nor leave a context out of its answer, and a
reply that ignores it is refused by validation like any malformed answer.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import create_model

from assay.schema.samples import SingleTurnSample
from assay.testset.asking import ask, require_llm
from assay.testset.citing import NumberedContexts
from assay.testset.graph import KnowledgeGraph, Node, NodeType, Relationship
from assay.testset.persona import Persona
from assay.testset.synthesizers.base import (
    LENGTH_GUIDE,
    STYLE_GUIDE,
    BaseSynthesizer,
    MultiHopScenario,
    content,
    node_language,
    scenario_key,
    seed_nodes,
    spread_over_documents,
)
from assay.testset.synthesizers.single_hop import CitingDraft, seed_terms
from assay.testset.text import normalize_space

# "Context A:", "Part 2 -", "(B)" before an answer part: the prompt's names, not the answer
_PART_LABEL = re.compile(r"^\s*(?:(?:context|part)\s+\w{1,2}\s*[:.\-)]|\(\w\))\s*", re.IGNORECASE)


class PartsDraft(CitingDraft):
    """A multi-hop draft: the answer comes in parts, one per context, in order, each saying what
    its context's chosen sentence adds; the reference is the parts joined. Asked for one answer,
    the 1.5B writer answered from one context in most drafts (in one benchmark run, 17 of 20
    multi-hop drafts were refused because one context alone supported the whole answer)."""

    question: str
    parts: list[str]

    @property
    def answer(self) -> str:
        """The parts joined, without the labels a small writer puts before them ("Context A:")."""
        parts = (_PART_LABEL.sub("", part).strip() for part in self.parts)
        return " ".join(part for part in parts if part)


def multi_hop_draft(numbered: NumberedContexts) -> type[PartsDraft]:
    """The draft schema for these contexts: `evidence` is one sentence number of each context,
    in order, chosen among the sentences it may cite (`NumberedContexts.citable`: prose the gate
    can find as a quote, not a heading), and `parts` one answer part per context. A context
    without sentences is left out of both tuples."""
    contexts = sorted({index for index, _ in numbered.sentences})
    choices = [Literal[tuple(numbered.citable(index))] for index in contexts]
    return create_model(
        "MultiHopDraft",
        __base__=PartsDraft,
        evidence=(tuple[tuple(choices)], ...),  # type: ignore[arg-type, misc]  # built at run time
        parts=(tuple[tuple(str for _ in contexts)], ...),  # type: ignore[arg-type, misc]  # as above
    )


def _of_types(types: tuple[str, ...]) -> Callable[[Relationship], bool]:
    """A relationship condition: its type is one of `types`."""
    return lambda relationship: relationship.type in types


def _distinct(nodes: list[Node], allowed: set[str]) -> bool:
    texts = {normalize_space(content(n)).lower() for n in nodes}
    return len(nodes) >= 2 and len(texts) == len(nodes) and all(str(n.id) in allowed for n in nodes)


@dataclass
class MultiHopQuerySynthesizer(BaseSynthesizer):
    multi_hop: bool = True
    prompt_id: str = "testset.multi_hop"
    relation_types: tuple[str, ...] = ("entities_overlap",)
    fallback_relation_types: tuple[str, ...] = ("keyphrases_overlap",)

    def _relation_clusters(self, kg: KnowledgeGraph) -> list[tuple[list[Node], list[str]]]:
        allowed = {str(n.id) for n in seed_nodes(kg)}
        for types in (self.relation_types, self.fallback_relation_types):
            found = []
            for a, rel, b in kg.find_two_nodes_single_rel(_of_types(types)):
                if _distinct([a, b], allowed):
                    items = rel.get_property("overlapped_items") or []
                    terms = list(
                        dict.fromkeys(
                            str(p[0] if isinstance(p, (list, tuple)) else p) for p in items
                        )
                    )
                    found.append(([a, b], terms))
            if found:
                return found
        return []

    def get_node_clusters(self, kg: KnowledgeGraph) -> list[list[Node]]:
        return [nodes for nodes, _ in self._relation_clusters(kg)]

    def _clusters_with_terms(self, kg: KnowledgeGraph) -> list[tuple[list[Node], list[str]]]:
        return self._relation_clusters(kg)

    def scenario_stream(
        self, kg: KnowledgeGraph, personas: list[Persona], limit: int, seed: int
    ) -> list[MultiHopScenario]:
        rng = random.Random(f"{seed}:{self.name}")
        with_terms = self._clusters_with_terms(kg)
        if not with_terms or limit <= 0:
            return []
        terms_of = {tuple(str(n.id) for n in nodes): terms for nodes, terms in with_terms}
        ordered = spread_over_documents(kg, [nodes for nodes, _ in with_terms], rng)
        scenarios: list[MultiHopScenario] = []
        for turn in range(3):  # each cluster up to three times, with different terms
            for nodes in ordered:
                terms = terms_of[tuple(str(n.id) for n in nodes)]
                if turn and turn * 2 >= len(terms):
                    continue
                chosen = terms[turn * 2 : turn * 2 + 3] if terms else []
                persona, style, length = self._assign(len(scenarios), personas)
                scenarios.append(
                    MultiHopScenario(
                        nodes=nodes,
                        combinations=chosen,
                        persona=persona,
                        style=style,
                        length=length,
                        language=node_language(nodes),
                        key=scenario_key(
                            self.name, nodes, *chosen, persona.name, style.value, length.value
                        ),
                    )
                )
                if len(scenarios) >= limit:
                    return scenarios
        return scenarios

    async def _generate_sample(self, scenario: Any, callbacks: Any) -> SingleTurnSample:
        llm = require_llm(self.llm, self.name)
        contexts = [content(n) for n in scenario.nodes]
        numbered = NumberedContexts.of(contexts)
        terms_input = "themes" if self.prompt_id.endswith("abstract") else "terms"
        draft = await ask(
            llm,
            self.judge_prompt(self.prompt_id),
            {
                "language": scenario.language,
                "persona": self._persona_text(scenario.persona),
                terms_input: scenario.combinations or "none given: use what the contexts share",
                "style": STYLE_GUIDE[scenario.style],
                "length": LENGTH_GUIDE[scenario.length],
                "contexts": numbered.block(),
            },
            multi_hop_draft(numbered),
            budget=self._draft_budget(numbered.texts()),
        )
        quotes, sources = numbered.evidence(list(draft.evidence), draft.answer)
        return SingleTurnSample(
            user_input=draft.question.strip(),
            reference=draft.answer.strip(),
            reference_contexts=contexts,
            reference_context_ids=[str(n.id) for n in scenario.nodes],
            persona_name=scenario.persona.name,
            query_style=scenario.style.value,
            query_length=scenario.length.value,
            metadata={"evidence": quotes, "evidence_contexts": sources},
        )


@dataclass
class MultiHopSpecificQuerySynthesizer(MultiHopQuerySynthesizer):
    name: str = "multi_hop_specific_query_synthesizer"
    relation_type: str = "entities_overlap"
    relation_overlap_property: str = "overlapped_items"

    def __post_init__(self) -> None:
        super().__post_init__()
        self.relation_types = (self.relation_type,)


@dataclass
class MultiHopAbstractQuerySynthesizer(MultiHopQuerySynthesizer):
    name: str = "multi_hop_abstract_query_synthesizer"
    prompt_id: str = "testset.multi_hop_abstract"
    relation_types: tuple[str, ...] = ("cosine_similarity", "summary_similarity")
    max_cluster_size: int = 3

    def _clusters_with_terms(self, kg: KnowledgeGraph) -> list[tuple[list[Node], list[str]]]:
        allowed = {str(n.id) for n in seed_nodes(kg)}
        for types in (self.relation_types, self.fallback_relation_types):
            if not any(r.type in types for r in kg.relationships):
                continue
            clusters = kg.find_n_indirect_clusters(
                n=200,
                relationship_condition=_of_types(types),
                depth_limit=max(2, self.max_cluster_size - 1),
            )
            found: list[tuple[list[Node], list[str]]] = []
            seen: set[frozenset[str]] = set()
            for cluster in clusters:
                nodes = self._as_chunks(kg, sorted(cluster, key=lambda n: str(n.id)), allowed)
                nodes = nodes[: self.max_cluster_size]
                key = frozenset(str(n.id) for n in nodes)
                if _distinct(nodes, allowed) and key not in seen:
                    seen.add(key)
                    found.append((nodes, self._themes(nodes)))
            if found:
                return found
        return []

    def get_node_clusters(self, kg: KnowledgeGraph) -> list[list[Node]]:
        return [nodes for nodes, _ in self._clusters_with_terms(kg)]

    @staticmethod
    def _as_chunks(kg: KnowledgeGraph, nodes: list[Node], allowed: set[str]) -> list[Node]:
        out: list[Node] = []
        for node in nodes:
            if node.type == NodeType.DOCUMENT:
                children = [c for c in kg.children_of(node) if str(c.id) in allowed]
                node = children[0] if children else node
            if node not in out:
                out.append(node)
        return out

    @staticmethod
    def _themes(nodes: list[Node]) -> list[str]:
        per_node = [seed_terms(n, "themes") for n in nodes]
        lowered = [{t.lower() for t in terms} for terms in per_node]
        shared = [t for t in per_node[0] if all(t.lower() in other for other in lowered[1:])]
        rest = [t for terms in per_node for t in terms[:2]]
        return list(dict.fromkeys(shared + rest))[:6]


__all__ = [
    "MultiHopAbstractQuerySynthesizer",
    "MultiHopQuerySynthesizer",
    "MultiHopSpecificQuerySynthesizer",
]
