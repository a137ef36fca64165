"""Scenarios and the synthesizer base class.

A scenario is what one candidate sample is made from: the nodes (chunks) it draws on, the seed
terms, a persona, a query style and a length. A synthesizer turns a knowledge graph into a
*stream* of scenarios, longer than the samples it must make, so a candidate the quality gate
refuses is replaced by the next one. The stream is deterministic for a seed, and spread over the
corpus: the seed chunks take turns by document (round-robin over shuffled documents), so the
questions do not pile up on the first or longest files; a chunk is reused, with its next seed
term, only after every other chunk had its turn.

Query styles are opt-in: the default is plain, well-formed questions. `MISSPELLED`,
`POOR_GRAMMAR` and `WEB_SEARCH_LIKE` are there to be asked for, and every sample says which style
it was written in (`query_style`).

Custom synthesizers written the Ragas way (`_generate_scenarios`, `_generate_sample` returning a
`SingleTurnSample`) work: the generator asks for scenarios through `scenario_stream`, whose
default calls `_generate_scenarios`. A sample's verbatim evidence is read from
`sample.metadata["evidence"]`; without it the gate refuses the sample, since nothing shows the
reference comes from the contexts.
"""

from __future__ import annotations

import enum
import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay.compat.ragas.prompt_methods import RagasPromptMethods
from assay.metrics.prompt_views import forget_view, viewed_prompt
from assay.prompts.prompt import Prompt
from assay.schema.samples import SingleTurnSample
from assay.testset.asking import draft_budget, testset_prompt
from assay.testset.graph import KnowledgeGraph, Node, NodeType
from assay.testset.persona import Persona
from assay.testset.text import normalize_space


class QueryStyle(str, enum.Enum):
    MISSPELLED = "Misspelled queries"
    PERFECT_GRAMMAR = "Perfect grammar"
    POOR_GRAMMAR = "Poor grammar"
    WEB_SEARCH_LIKE = "Web search like queries"


class QueryLength(str, enum.Enum):
    LONG = "long"
    MEDIUM = "medium"
    SHORT = "short"


STYLE_GUIDE = {
    QueryStyle.PERFECT_GRAMMAR: "a complete, well-formed question in correct grammar",
    QueryStyle.WEB_SEARCH_LIKE: "like a web search: a few keywords, not a full sentence",
    QueryStyle.POOR_GRAMMAR: "informal, with the grammar slips of someone typing in a hurry",
    QueryStyle.MISSPELLED: "with two or three realistic spelling mistakes",
}
LENGTH_GUIDE = {
    QueryLength.SHORT: "short: at most 12 words",
    QueryLength.MEDIUM: "medium: 12 to 20 words",
    QueryLength.LONG: "long: 20 to 35 words",
}


class BaseScenario(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    nodes: list[Node]
    style: QueryStyle = QueryStyle.PERFECT_GRAMMAR
    length: QueryLength = QueryLength.MEDIUM
    persona: Persona
    language: str = "english"
    key: str = ""


class SingleHopScenario(BaseScenario):
    term: str = ""


class MultiHopScenario(BaseScenario):
    combinations: list[str] = Field(default_factory=list)


def scenario_key(synthesizer: str, nodes: Sequence[Node], *parts: str) -> str:
    payload = "\x1f".join([synthesizer, *(str(n.id) for n in nodes), *parts])
    return f"{synthesizer}:{hashlib.sha256(payload.encode('utf-8')).hexdigest()[:16]}"


def content(node: Node) -> str:
    value = node.get_property("page_content")
    return value if isinstance(value, str) else ""


def seed_nodes(kg: KnowledgeGraph) -> list[Node]:
    """The nodes questions are drawn from: chunks with text (documents when there are no chunks),
    one per distinct text, so duplicate documents never yield twin questions."""
    chunks = [n for n in kg.nodes if n.type == NodeType.CHUNK and content(n).strip()]
    nodes = chunks or [n for n in kg.nodes if content(n).strip()]
    seen: set[str] = set()
    unique = []
    for node in nodes:
        text = normalize_space(content(node)).lower()
        if text not in seen:
            seen.add(text)
            unique.append(node)
    return unique


def spread_over_documents(
    kg: KnowledgeGraph, clusters: list[list[Node]], rng: random.Random
) -> list[list[Node]]:
    """Clusters reordered so documents take turns (shuffled documents, shuffled within each)."""
    by_document: dict[str, list[list[Node]]] = {}
    for cluster in clusters:
        by_document.setdefault(str(kg.document_of(cluster[0]).id), []).append(cluster)
    documents = sorted(by_document)
    rng.shuffle(documents)
    for name in documents:
        rng.shuffle(by_document[name])
    ordered: list[list[Node]] = []
    position = 0
    while len(ordered) < len(clusters):
        for name in documents:
            if position < len(by_document[name]):
                ordered.append(by_document[name][position])
        position += 1
    return ordered


def node_language(nodes: Sequence[Node]) -> str:
    for node in nodes:
        language = node.get_property("language")
        if isinstance(language, str) and language:
            return language
    return "english"


@dataclass
class BaseSynthesizer(RagasPromptMethods):
    name: str = ""
    llm: Any = None
    llm_context: str | None = None
    query_styles: Sequence[QueryStyle] = (QueryStyle.PERFECT_GRAMMAR,)
    query_lengths: Sequence[QueryLength] = (
        QueryLength.SHORT,
        QueryLength.MEDIUM,
        QueryLength.LONG,
    )
    prompts: dict[str, str] = field(default_factory=dict)  # prompt id overrides by role
    multi_hop: bool = False
    # A draft's max_tokens: None for one in proportion to its contexts (`draft_budget`), or a
    # fixed number (a reasoning model's thinking counts against it). A cut-off draft is not
    # asked again with a bigger one.
    draft_max_tokens: int | None = None

    def __post_init__(self) -> None:
        if not self.name:
            self.name = _snake(type(self).__name__)
        self.query_styles = tuple(QueryStyle(s) for s in self.query_styles) or (
            QueryStyle.PERFECT_GRAMMAR,
        )
        self.query_lengths = tuple(QueryLength(s) for s in self.query_lengths) or (
            QueryLength.MEDIUM,
        )
        if self.draft_max_tokens is not None and self.draft_max_tokens < 1:
            raise ValueError(
                f"draft_max_tokens must be a positive number of tokens, got {self.draft_max_tokens}"
            )

    # -- what the generator calls ----------------------------------------------------------
    def get_node_clusters(self, kg: KnowledgeGraph) -> list[list[Node]]:
        raise NotImplementedError

    def scenario_stream(
        self, kg: KnowledgeGraph, personas: list[Persona], limit: int, seed: int
    ) -> Sequence[BaseScenario]:
        """Up to `limit` scenarios in the order they should be tried."""
        return list(self._generate_scenarios(limit, kg, personas, None))[:limit]

    async def agenerate_candidate(
        self, scenario: BaseScenario
    ) -> tuple[SingleTurnSample, list[str], list[int] | None]:
        """One candidate sample, its verbatim evidence quotes and, when the synthesizer knows
        them (`metadata["evidence_contexts"]`), the reference context each quote was cited
        from (None otherwise: the gate then looks for each quote in every context)."""
        sample = await self._generate_sample(scenario, None)
        metadata = dict(sample.metadata or {})
        evidence = [str(q) for q in metadata.pop("evidence", []) or []]
        sources = metadata.pop("evidence_contexts", None)
        if sources is not None:
            sources = [int(i) for i in sources]
        sample = sample.model_copy(update={"metadata": metadata or None})
        return sample, evidence, sources

    # -- Ragas' hooks and public names -----------------------------------------------------
    def _generate_scenarios(
        self, n: int, knowledge_graph: KnowledgeGraph, persona_list: list[Persona], callbacks: Any
    ) -> Any:
        return self.scenario_stream(knowledge_graph, persona_list, n, seed=42)

    async def _generate_sample(self, scenario: Any, callbacks: Any) -> SingleTurnSample:
        raise NotImplementedError

    async def generate_scenarios(
        self,
        n: int,
        knowledge_graph: KnowledgeGraph,
        persona_list: list[Persona] | None = None,
        callbacks: Any = None,
    ) -> list[BaseScenario]:
        from assay.testset.persona import FALLBACK_PERSONA

        result = self._generate_scenarios(
            n, knowledge_graph, persona_list or [FALLBACK_PERSONA], callbacks
        )
        if hasattr(result, "__await__"):
            result = await result
        return list(result)[:n]

    async def generate_sample(self, scenario: Any, callbacks: Any = None) -> SingleTurnSample:
        sample, evidence, _ = await self.agenerate_candidate(scenario)
        return sample.model_copy(
            update={"metadata": {**(sample.metadata or {}), "evidence": evidence}}
        )

    # -- its prompt, as a metric's: by id, replaceable (Ragas' get_prompts/set_prompts use these) --
    @property
    def prompt_ids(self) -> tuple[str, ...]:
        """The prompts this synthesizer sends: its query-writing prompt (`prompt_id`)."""
        prompt_id = getattr(self, "prompt_id", None)
        return (prompt_id,) if prompt_id else ()

    def judge_prompt(self, prompt_id: str) -> Prompt:
        """The prompt sent for `prompt_id`: an edited or replaced one, else the built-in file."""
        viewed = viewed_prompt(self, prompt_id)
        if viewed is not None:
            return viewed
        return self.__dict__.get("_prompt_overrides", {}).get(prompt_id) or testset_prompt(
            prompt_id
        )

    def judge_prompts(self) -> dict[str, Prompt]:
        return {prompt_id: self.judge_prompt(prompt_id) for prompt_id in self.prompt_ids}

    def set_prompt(self, prompt: Prompt) -> None:
        """Replace one of this synthesizer's prompts (an edited or translated copy)."""
        forget_view(self, prompt.id)
        self.__dict__.setdefault("_prompt_overrides", {})[prompt.id] = prompt

    # -- helpers ---------------------------------------------------------------------------
    def _assign(
        self, index: int, personas: list[Persona]
    ) -> tuple[Persona, QueryStyle, QueryLength]:
        return (
            personas[index % len(personas)],
            self.query_styles[index % len(self.query_styles)],
            self.query_lengths[(index // len(self.query_styles)) % len(self.query_lengths)],
        )

    def _draft_budget(self, contexts: Sequence[str]) -> int:
        if self.draft_max_tokens is not None:
            return self.draft_max_tokens
        return draft_budget(*contexts)

    def _persona_text(self, persona: Persona) -> str:
        text = persona.describe()
        if self.llm_context:
            text += f"\nWhat the questions are for: {self.llm_context}"
        return text


QuerySynthesizer = BaseSynthesizer


def _snake(name: str) -> str:
    out = []
    for index, ch in enumerate(name):
        if ch.isupper() and index:
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


__all__ = [
    "LENGTH_GUIDE",
    "STYLE_GUIDE",
    "BaseScenario",
    "BaseSynthesizer",
    "MultiHopScenario",
    "QueryLength",
    "QueryStyle",
    "QuerySynthesizer",
    "SingleHopScenario",
    "content",
    "node_language",
    "scenario_key",
    "seed_nodes",
    "spread_over_documents",
]
