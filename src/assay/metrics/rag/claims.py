"""Claim extraction and support checks shared by faithfulness, factual correctness and others.

Identical requests are answered once per run (the LLM layer merges concurrent duplicates and
caches), so metrics that split the same response share that call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from assay.metrics.judge import Verdict, ask_json, ask_verdicts
from assay.prompts.prompt import Prompt


class ClaimList(BaseModel):
    claims: list[str] = Field(default_factory=list)


async def extract_claims(llm: Any, prompt: Prompt, text: str, question: str = "") -> list[str]:
    answer = await ask_json(llm, prompt, {"question": question or "(none)", "text": text}, ClaimList)
    return [claim.strip() for claim in answer.claims if claim and claim.strip()]


async def check_support(llm: Any, prompt: Prompt, source: str, statements: Sequence[str]) -> list[Verdict | None]:
    """One call: does `source` support each statement? None for a statement left unjudged."""
    return await ask_verdicts(llm, prompt, {"source": source}, list(statements))


def judged(items: Sequence[str], verdicts: Sequence[Verdict | None]) -> tuple[list[str], list[Verdict], list[str]]:
    """Split into (items with a verdict, their verdicts, items the judge skipped)."""
    kept = [(item, verdict) for item, verdict in zip(items, verdicts, strict=True) if verdict is not None]
    skipped = [item for item, verdict in zip(items, verdicts, strict=True) if verdict is None]
    return [item for item, _ in kept], [verdict for _, verdict in kept], skipped


def skipped_note(skipped: Sequence[str]) -> str:
    return f"; the judge gave no verdict on {len(skipped)} item(s), left out of the score" if skipped else ""


def join_contexts(contexts: Sequence[str]) -> str:
    return "\n\n".join(context.strip() for context in contexts if context and context.strip())


def claim_details(claims: Sequence[str], verdicts: Sequence[Verdict]) -> list[dict[str, Any]]:
    return [
        {"claim": claim, "verdict": verdict.label, "probability": round(verdict.probability, 4)}
        for claim, verdict in zip(claims, verdicts, strict=True)
    ]


__all__ = ["ClaimList", "check_support", "claim_details", "extract_claims", "join_contexts", "judged", "skipped_note"]
