"""Context entity recall: the share of the reference's named entities found in the contexts.

score = |entities(contexts) ∩ entities(reference)| / (|entities(reference)| + 1e-8)
Entities are compared after folding case and spacing. Two extraction calls, run concurrently;
contexts longer than one judge window are read piece by piece and their entities pooled.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import anyio
from pydantic import BaseModel, Field

from assay.errors import NotApplicable
from assay.metrics.base import CallEstimate, single_turn
from assay.metrics.judge import ask_json
from assay.metrics.llm_metric import LLMMetric
from assay.metrics.rag.claims import chunk_text, join_contexts, over_pieces
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample


class EntityList(BaseModel):
    entities: list[str] = Field(default_factory=list)


def _fold(entity: str) -> str:
    return " ".join(entity.casefold().split())


def entity_recall(reference_entities: Iterable[str], context_entities: Iterable[str]) -> float:
    """Pure scoring (keeps the spec's 1e-8)."""
    expected = {_fold(e) for e in reference_entities if e.strip()}
    found = {_fold(e) for e in context_entities if e.strip()}
    return len(expected & found) / (len(expected) + 1e-8)


@dataclass(kw_only=True)
class ContextEntityRecall(LLMMetric):
    name: str = "context_entity_recall"

    default_prompt_ids = ("entities",)

    async def _ascore(self, *, reference: str, retrieved_contexts: list[str]) -> MetricResult:
        source = join_contexts(retrieved_contexts)
        if not source or not reference.strip():
            raise NotApplicable("the reference or the contexts are empty")
        prompt = self.judge_prompt("entities")
        found: dict[str, list[str]] = {}

        async def entities_of(piece: str) -> list[str]:
            return (await ask_json(self.llm, prompt, {"text": piece}, EntityList)).entities

        async def extract(key: str, text: str) -> None:
            pooled: dict[str, str] = {}
            for piece in await over_pieces(text, entities_of):
                for entity in piece:
                    if entity.strip():
                        pooled.setdefault(_fold(entity), entity.strip())
            found[key] = list(pooled.values())

        async with anyio.create_task_group() as group:
            group.start_soon(extract, "reference", reference)
            group.start_soon(extract, "contexts", source)
        if not [e for e in found["reference"] if e.strip()]:
            raise NotApplicable("the reference names no entities")
        score = entity_recall(found["reference"], found["contexts"])
        expected = {_fold(e) for e in found["reference"]}
        missing = sorted(expected - {_fold(e) for e in found["contexts"]})
        return MetricResult(
            score,
            reason=f"{len(expected) - len(missing)} of {len(expected)} reference entities appear in the contexts",
            details={
                "reference_entities": found["reference"],
                "context_entities": found["contexts"],
                "missing": missing,
            },
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        sample = single_turn(sample)  # the kind it accepts
        text = (
            len(sample.reference or "") + sum(len(c) for c in sample.retrieved_contexts or [])
        ) // 4
        requests = len(chunk_text(sample.reference or "")) + len(
            chunk_text(join_contexts(sample.retrieved_contexts or []))
        )
        return CallEstimate(
            requests=requests, input_tokens=250 * requests + text, output_tokens=text // 3 + 20
        )


__all__ = ["ContextEntityRecall", "entity_recall"]
