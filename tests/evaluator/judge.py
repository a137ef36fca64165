"""A scripted judge that reads each request and answers it, so concurrent cells get the right
reply whatever order they run in. It records every request (through its ScriptedProvider)."""

from __future__ import annotations

import json
import re

from assay.metrics.text import split_sentences
from assay.models import LLM, Embeddings, ScriptedProvider
from assay.models.types import ModelRequest


def tag(text: str, name: str) -> str:
    found = re.search(rf"<{name}>\n(.*?)\n</{name}>", text, flags=re.DOTALL)
    return found.group(1) if found else ""


def numbered(text: str) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"^\d+\.\s*(.*)$", text, flags=re.MULTILINE)]


def answer(request: ModelRequest) -> str:
    """Claims: the sentences of the text. Verdicts: yes when the item appears in the source.
    Translation: each string prefixed with "译:" (numbering kept)."""
    user = str(request.messages[-1].content)
    if request.output is not None:
        if request.output.name == "ClaimList":
            return json.dumps({"claims": split_sentences(tag(user, "text"))}, ensure_ascii=False)
        if request.output.name == "_Translation":
            strings = json.loads(tag(user, "strings"))
            return json.dumps(
                {
                    "statements": [
                        re.sub(
                            r"^(\d+\.\s*)?",
                            lambda m: (m.group(1) or "") + "译:",
                            s,
                            flags=re.MULTILINE,
                        )
                        for s in strings
                    ]
                },
                ensure_ascii=False,
            )
        if request.output.name == "GeneratedQuestions":
            return json.dumps({"questions": ["Q1", "Q2", "Q3"], "noncommittal": 0})
        raise AssertionError(f"unexpected structured request {request.output.name}")
    source = tag(user, "source")
    items = numbered(tag(user, "items"))
    return "\n".join(
        f"{i}. {'yes' if item and item in source else 'no'}"
        for i, item in enumerate(items, start=1)
    )


def reading_judge() -> tuple[LLM, ScriptedProvider]:
    provider = ScriptedProvider([answer], repeat_last=True)
    return LLM(provider), provider


def silent_judge() -> tuple[LLM, ScriptedProvider]:
    """A judge with no answers: any call fails the test loudly (and is recorded)."""
    provider = ScriptedProvider([])
    return LLM(provider), provider


def embedder(vectors: dict[str, list[float]] | None = None) -> tuple[Embeddings, RecordingEmbedder]:
    provider = RecordingEmbedder(vectors)
    return Embeddings(provider), provider


def system_prompts(provider: ScriptedProvider) -> list[str]:
    return [str(request.messages[0].content) for request in provider.requests]


def translation_requests(provider: ScriptedProvider) -> list[ModelRequest]:
    return [
        r for r in provider.requests if r.output is not None and r.output.name == "_Translation"
    ]


class RecordingEmbedder(ScriptedProvider):
    """Scripted embeddings that also record every batch they were asked for."""

    def __init__(self, vectors: dict[str, list[float]] | None = None) -> None:
        super().__init__(vectors=vectors or {})
        self.batches: list[list[str]] = []

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        self.batches.append(list(texts))
        return await super().embed(texts)
