"""Opt-in transforms that ask an LLM: headlines, summary, keyphrases, title, entities, themes, a
question-potential filter, and the splitter that cuts at LLM-found headlines.

Each asks through `assay.testset.asking` (the package's YAML prompts, inputs fenced as data,
structured answers). A text longer than `max_token_limit` is read piece by piece and list answers
are merged, never cut off. Each answer has a budget for what was asked (a list of `max_num`
phrases, a summary, a title, a score) and one try, so a runaway answer costs no more than that.
A failed or cut-off call fails only its node (see `apply_transforms`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from assay.testset.asking import (
    SCORE_MAX_TOKENS,
    SUMMARY_MAX_TOKENS,
    TITLE_MAX_TOKENS,
    ask,
    list_budget,
)
from assay.testset.graph import KnowledgeGraph, Node, Relationship
from assay.testset.text import sections_at
from assay.testset.transforms.base import LLMBasedExtractor, NodeFilter, Splitter, is_document
from assay.testset.transforms.classic import HeadingSplitter


class _Headlines(BaseModel):
    headlines: list[str] = Field(default_factory=list)


class _Summary(BaseModel):
    summary: str


class _Keyphrases(BaseModel):
    keyphrases: list[str] = Field(default_factory=list)


class _Title(BaseModel):
    title: str


class _Entities(BaseModel):
    entities: list[str] = Field(default_factory=list)


class _Themes(BaseModel):
    themes: list[str] = Field(default_factory=list)


class _Score(BaseModel):
    score: int = Field(ge=1, le=5)


def judge_of(extractor: Any) -> Any:
    """The extractor's model, else the configured default judge (`ASSAY_LLM`, else the embedded
    one), as metrics do: Ragas' LLM-based extractors also work without one being passed."""
    if extractor.llm is not None:
        return extractor.llm
    from assay.metrics.base import default_model

    return default_model("llm")


def _content(node: Node) -> str:
    value = node.get_property("page_content")
    return value if isinstance(value, str) else ""


async def _merged_list(
    extractor: LLMBasedExtractor,
    prompt_id: str,
    schema: type[BaseModel],
    key: str,
    node: Node,
    extra: dict[str, Any],
    max_items: int,
) -> list[str]:
    llm = judge_of(extractor)
    budget = extractor.budget(list_budget(max_items))
    found: list[str] = []
    for piece in extractor.pieces(_content(node)):
        answer = await ask(llm, prompt_id, {**extra, "text": piece}, schema, budget=budget)
        found += [item.strip() for item in getattr(answer, key) if item.strip()]
    return list(dict.fromkeys(found))


@dataclass
class HeadlinesExtractor(LLMBasedExtractor):
    property_name: str = "headlines"
    max_num: int = 5

    async def extract(self, node: Node) -> tuple[str, Any]:
        found = await _merged_list(
            self, "testset.headlines", _Headlines, "headlines", node, {}, self.max_num
        )
        return self.property_name, found[: self.max_num] if self.max_num else found


@dataclass
class SummaryExtractor(LLMBasedExtractor):
    property_name: str = "summary"

    async def extract(self, node: Node) -> tuple[str, Any]:
        llm = judge_of(self)
        language = node.get_property("language") or self.language
        budget = self.budget(SUMMARY_MAX_TOKENS)
        parts = [
            (
                await ask(
                    llm,
                    "testset.summary",
                    {"language": language, "text": p},
                    _Summary,
                    budget=budget,
                )
            ).summary
            for p in self.pieces(_content(node))
        ]
        return self.property_name, " ".join(part.strip() for part in parts)


@dataclass
class KeyphrasesExtractor(LLMBasedExtractor):
    property_name: str = "keyphrases"
    max_num: int = 5

    async def extract(self, node: Node) -> tuple[str, Any]:
        found = await _merged_list(
            self,
            "testset.keyphrases",
            _Keyphrases,
            "keyphrases",
            node,
            {"max_num": self.max_num},
            self.max_num,
        )
        return self.property_name, found[: self.max_num]


@dataclass
class TitleExtractor(LLMBasedExtractor):
    property_name: str = "title"

    async def extract(self, node: Node) -> tuple[str, Any]:
        llm = judge_of(self)
        text = self.pieces(_content(node))[0]
        budget = self.budget(TITLE_MAX_TOKENS)
        answer = await ask(llm, "testset.title", {"text": text}, _Title, budget=budget)
        return self.property_name, answer.title


@dataclass
class NERExtractor(LLMBasedExtractor):
    property_name: str = "entities"
    max_num_entities: int = 10

    async def extract(self, node: Node) -> tuple[str, Any]:
        found = await _merged_list(
            self,
            "testset.entities",
            _Entities,
            "entities",
            node,
            {"max_num": self.max_num_entities},
            self.max_num_entities,
        )
        return self.property_name, found[: self.max_num_entities]


@dataclass
class ThemesExtractor(LLMBasedExtractor):
    property_name: str = "themes"
    max_num_themes: int = 10

    async def extract(self, node: Node) -> tuple[str, Any]:
        found = await _merged_list(
            self,
            "testset.themes",
            _Themes,
            "themes",
            node,
            {"max_num": self.max_num_themes},
            self.max_num_themes,
        )
        return self.property_name, found[: self.max_num_themes]


@dataclass
class CustomNodeFilter(NodeFilter):
    """Removes chunks the LLM rates below `min_score` (1-5) as a source of questions; the score
    is kept on the nodes it keeps (`question_potential`)."""

    llm: Any = None
    min_score: int = 2

    async def custom_filter(self, node: Node, kg: KnowledgeGraph) -> bool:
        llm = judge_of(self)
        document = kg.document_of(node)
        summary = document.get_property("summary") or ""
        answer = await ask(
            llm,
            "testset.question_potential",
            {"document_summary": summary, "text": _content(node)[:8000]},
            _Score,
            budget=SCORE_MAX_TOKENS,
        )
        node.properties["question_potential"] = answer.score
        return answer.score < self.min_score


@dataclass
class HeadlineSplitter(Splitter):
    """Splits documents at their `headlines` (from `HeadlinesExtractor`), each headline searched
    after the previous one. A document without headlines (none found, or never extracted) is
    split at its own Markdown/RST headings instead: never an error."""

    filter_nodes: Any = is_document
    min_tokens: int = 300
    max_tokens: int = 1000

    async def split(self, node: Node) -> tuple[list[Node], list[Relationship]]:
        splitter = HeadingSplitter(min_tokens=self.min_tokens, max_tokens=self.max_tokens)
        headlines = node.get_property("headlines") or []
        sections = sections_at(_content(node), headlines) if headlines else []
        return splitter.split_at(node, sections or None)


__all__ = [
    "CustomNodeFilter",
    "HeadlineSplitter",
    "HeadlinesExtractor",
    "KeyphrasesExtractor",
    "NERExtractor",
    "SummaryExtractor",
    "ThemesExtractor",
    "TitleExtractor",
]
