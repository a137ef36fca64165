"""Personas: who asks the questions.

`generate_personas_from_kg` picks up to `num_personas` summaries that differ from each other
(farthest-first on summary embeddings when the graph has them, else one per document in order)
and asks for one persona per summary, telling the model the names already taken. Names are
compared case-insensitively and a repeat is dropped, never padded with copies. A graph with no
summaries uses the start of each node's text instead; a failed call costs only that persona; if
no call succeeds a neutral built-in persona is used and the report says so. A persona is a name
and a sentence or two: its call gets `PERSONA_MAX_TOKENS` and one try, so a runaway answer
costs one capped call and that persona, not a doubled budget.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from assay._util.sync import run_sync
from assay.errors import UsageError
from assay.testset.asking import ask, require_llm
from assay.testset.graph import KnowledgeGraph, Node, NodeType

PERSONA_MAX_TOKENS = 256


class Persona(BaseModel):
    name: str = Field(min_length=1)
    role_description: str = Field(min_length=1)

    def describe(self) -> str:
        return f"{self.name}: {self.role_description}"


FALLBACK_PERSONA = Persona(
    name="Curious reader",
    role_description="Someone new to the subject who wants clear, factual answers from the documents.",
)


def _source_nodes(kg: KnowledgeGraph, filter_fn: Any) -> list[Node]:
    nodes = [n for n in kg.nodes if filter_fn is None or filter_fn(n)]
    documents = [n for n in nodes if n.type == NodeType.DOCUMENT]
    return documents or nodes


def _text_of(node: Node) -> str:
    summary = node.get_property("summary")
    if isinstance(summary, str) and summary.strip():
        return summary
    content = node.get_property("page_content")
    return content[:1500] if isinstance(content, str) else ""


def pick_diverse(nodes: list[Node], count: int) -> list[Node]:
    """Up to `count` nodes whose summaries differ most (farthest-first on summary embeddings;
    in graph order without them)."""
    nodes = [n for n in nodes if _text_of(n).strip()]
    vectors = [n.get_property("summary_embedding") for n in nodes]
    if len(nodes) <= count or any(v is None for v in vectors):
        return nodes[:count]
    matrix = np.asarray(vectors, float)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    chosen = [int(np.argmax([len(_text_of(n)) for n in nodes]))]
    while len(chosen) < count:
        closeness = (matrix @ matrix[chosen].T).max(axis=1)
        closeness[chosen] = np.inf
        chosen.append(int(np.argmin(closeness)))
    return [nodes[i] for i in chosen]


class _PersonaAnswer(BaseModel):
    name: str
    role_description: str


async def agenerate_personas(
    kg: KnowledgeGraph,
    llm: Any,
    num_personas: int = 3,
    filter_fn: Any = None,
    *,
    language: str = "english",
) -> tuple[list[Persona], list[dict[str, Any]]]:
    """Personas, and the failures met on the way (each a dict with its cause)."""
    if num_personas < 1:
        raise UsageError(f"num_personas must be at least 1, got {num_personas}")
    require_llm(llm, "generate_personas_from_kg")
    sources = pick_diverse(_source_nodes(kg, filter_fn), num_personas)
    if not sources:
        raise UsageError("the knowledge graph has no text to describe personas from")
    personas: list[Persona] = []
    failures: list[dict[str, Any]] = []
    for node in sources:
        taken = [p.name for p in personas]
        try:
            answer = await ask(
                llm,
                "testset.persona",
                {"language": language, "taken": taken or "none", "summary": _text_of(node)},
                _PersonaAnswer,
                budget=PERSONA_MAX_TOKENS,
            )
        except Exception as exc:  # recorded; the other personas are still made
            failures.append(
                {"stage": "personas", "node": str(node.id), "error": f"{type(exc).__name__}: {exc}"}
            )
            continue
        name, role = answer.name.strip(), answer.role_description.strip()
        if not name or not role or name.lower() in (t.lower() for t in taken):
            failures.append(
                {
                    "stage": "personas",
                    "node": str(node.id),
                    "error": f"repeated or empty persona {name!r}",
                }
            )
            continue
        personas.append(Persona(name=name, role_description=role))
    return personas, failures


class ThemesPersonasInput(BaseModel):
    themes: list[str]
    personas: list[Persona]


class PersonaThemesMapping(BaseModel):
    mapping: dict[str, list[str]] = Field(default_factory=dict)


class _Match(BaseModel):
    persona: str
    themes: list[str] = Field(default_factory=list)


class _Matches(BaseModel):
    matches: list[_Match] = Field(default_factory=list)


def _closest(name: str, choices: list[str], cutoff: float = 80.0) -> str | None:
    from rapidfuzz import fuzz, process

    found = process.extractOne(name, choices, scorer=fuzz.WRatio, processor=str.lower)
    return found[0] if found and found[1] >= cutoff else None


class ThemesPersonasMatchingPrompt:
    """Which themes each persona would ask about (Ragas' prompt, as one structured call).

    Small models and translated runs rewrite names ("evening STUDENT", "Étudiant du soir"): each
    name and theme the model returns is matched to the closest given one (rapidfuzz WRatio >= 80)
    and anything it invented is dropped, so a renamed persona is never a KeyError."""

    prompt_id = "testset.persona_themes"

    async def generate(self, data: ThemesPersonasInput, llm: Any, **_: Any) -> PersonaThemesMapping:
        names = [p.name for p in data.personas]
        answer = await ask(
            require_llm(llm, "ThemesPersonasMatchingPrompt"),
            self.prompt_id,
            {"personas": [p.describe() for p in data.personas], "themes": data.themes},
            _Matches,
        )
        mapping: dict[str, list[str]] = {name: [] for name in names}
        for match in answer.matches:
            persona = _closest(match.persona.split(":")[0].strip(), names)
            if persona is None:
                continue
            for theme in match.themes:
                chosen = _closest(theme, data.themes)
                if chosen is not None and chosen not in mapping[persona]:
                    mapping[persona].append(chosen)
        return PersonaThemesMapping(mapping=mapping)


def generate_personas_from_kg(
    kg: KnowledgeGraph,
    llm: Any,
    persona_generation_prompt: Any = None,
    num_personas: int = 3,
    filter_fn: Any = None,
) -> list[Persona]:
    """Ragas' entry point: personas only (failures are dropped; the generator reports them)."""
    personas, _ = run_sync(agenerate_personas(kg, llm, num_personas, filter_fn))
    return personas or [FALLBACK_PERSONA]


__all__ = [
    "FALLBACK_PERSONA",
    "Persona",
    "PersonaThemesMapping",
    "ThemesPersonasInput",
    "ThemesPersonasMatchingPrompt",
    "agenerate_personas",
    "generate_personas_from_kg",
    "pick_diverse",
]
