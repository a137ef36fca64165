"""Single-hop specific questions: one chunk, one seed term, one call.

Every chunk with text is a cluster, so a corpus of one short document still yields questions.
Seed terms are the chunk's entities then keyphrases (LLM themes too, when extracted); a chunk
with none gets questions on its most specific fact. Persona, style and length are assigned in
turn, not by a matching call: one LLM call per candidate.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, field_validator

from assay.schema.samples import SingleTurnSample
from assay.testset.asking import ask, require_llm
from assay.testset.citing import NumberedContexts
from assay.testset.graph import KnowledgeGraph, Node
from assay.testset.persona import Persona
from assay.testset.synthesizers.base import (
    LENGTH_GUIDE,
    STYLE_GUIDE,
    BaseSynthesizer,
    SingleHopScenario,
    content,
    node_language,
    scenario_key,
    seed_nodes,
    spread_over_documents,
)


class CitingDraft(BaseModel):
    """A writer's answer; `evidence` cites the numbers of the context sentences it rests on."""

    # evidence first: a writer constrained to this schema picks its sentences before it writes
    # the question and answer, which then rest on them
    evidence: list[int]

    @field_validator("evidence", mode="before")
    @classmethod
    def _numbers(cls, value: Any) -> Any:
        # "3" and "[3]" are numbers written as text; anything else is refused, naming the field
        if not isinstance(value, list):
            return value
        numbers: list[Any] = []
        for item in value:
            if isinstance(item, str):
                match = re.fullmatch(r"\s*\[?\s*(\d+)\s*\]?\s*", item)
                if match is None:
                    raise ValueError(f"evidence holds sentence numbers, got {item[:60]!r}")
                item = int(match.group(1))
            numbers.append(item)
        return numbers


class Draft(CitingDraft):
    question: str
    answer: str


def seed_terms(node: Node, property_name: str) -> list[str]:
    terms: list[str] = []
    for key in (property_name, "themes", "entities", "keyphrases"):
        value = node.get_property(key)
        if isinstance(value, dict):
            value = [item for items in value.values() for item in items]
        for item in value or []:
            item = str(item).strip()
            if item and item.lower() not in (t.lower() for t in terms):
                terms.append(item)
    return terms


@dataclass
class SingleHopQuerySynthesizer(BaseSynthesizer):
    property_name: str = "entities"
    prompt_id: str = "testset.single_hop"

    def get_node_clusters(self, kg: KnowledgeGraph) -> list[list[Node]]:
        return [[node] for node in seed_nodes(kg)]

    def scenario_stream(
        self, kg: KnowledgeGraph, personas: list[Persona], limit: int, seed: int
    ) -> list[SingleHopScenario]:
        rng = random.Random(f"{seed}:{self.name}")
        clusters = spread_over_documents(kg, self.get_node_clusters(kg), rng)
        if not clusters or limit <= 0:
            return []
        terms = {str(c[0].id): seed_terms(c[0], self.property_name) for c in clusters}
        # Each chunk gets a turn per seed term, then one free turn (its most specific fact).
        rounds = 1 + max(len(t) for t in terms.values())
        scenarios: list[SingleHopScenario] = []
        index = 0
        for turn in range(rounds):
            for cluster in clusters:
                node = cluster[0]
                options = terms[str(node.id)]
                if turn > len(options):
                    continue  # this chunk has had all its turns; others still have some
                term = options[turn] if turn < len(options) else ""
                persona, style, length = self._assign(index, personas)
                scenarios.append(
                    SingleHopScenario(
                        nodes=[node],
                        term=term,
                        persona=persona,
                        style=style,
                        length=length,
                        language=node_language([node]),
                        key=scenario_key(
                            self.name, [node], term, persona.name, style.value, length.value
                        ),
                    )
                )
                index += 1
                if len(scenarios) >= limit:
                    return scenarios
        return scenarios

    async def _generate_sample(self, scenario: Any, callbacks: Any) -> SingleTurnSample:
        llm = require_llm(self.llm, self.name)
        node = scenario.nodes[0]
        numbered = NumberedContexts.of([content(node)])
        draft = await ask(
            llm,
            self.judge_prompt(self.prompt_id),
            {
                "language": scenario.language,
                "persona": self._persona_text(scenario.persona),
                "term": scenario.term,
                "style": STYLE_GUIDE[scenario.style],
                "length": LENGTH_GUIDE[scenario.length],
                "context": numbered.lines(0),
            },
            Draft,
            budget=self._draft_budget(numbered.texts()),
        )
        quotes, sources = numbered.evidence(draft.evidence, draft.answer)
        return SingleTurnSample(
            user_input=draft.question.strip(),
            reference=draft.answer.strip(),
            reference_contexts=[content(node)],
            reference_context_ids=[str(node.id)],
            persona_name=scenario.persona.name,
            query_style=scenario.style.value,
            query_length=scenario.length.value,
            metadata={"evidence": quotes, "evidence_contexts": sources},
        )


@dataclass
class SingleHopSpecificQuerySynthesizer(SingleHopQuerySynthesizer):
    name: str = "single_hop_specific_query_synthesizer"


__all__ = ["Draft", "SingleHopQuerySynthesizer", "SingleHopSpecificQuerySynthesizer", "seed_terms"]
