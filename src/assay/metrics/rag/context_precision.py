"""Context precision: are the useful retrieved passages ranked first?

Each passage gets a usefulness verdict (all passages in one call): useful for reaching the
reference answer (`ContextPrecision`, Ragas' "with reference") or the given response
(`ContextUtilization`). The score is average precision:

    sum_k (precision@k * v_k) / (sum_k v_k + 1e-10)

so it is 0 when nothing is useful and rewards useful passages at the top. With probability
scoring, v_k is P(useful) and precision@k the mean of v_1..v_k.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import anyio

from assay.errors import NotApplicable
from assay.metrics.base import CallEstimate, single_turn
from assay.metrics.judge import Verdict, ask_verdicts
from assay.metrics.llm_metric import LLMMetric
from assay.metrics.rag.claims import MAX_SOURCE_CHARS, chunk_text, merge_verdicts
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample


def average_precision(relevance: Sequence[float]) -> float:
    """Pure scoring over per-passage relevance in retrieval order (1e-10 keeps the spec's vectors)."""
    total, hits = 0.0, 0.0
    for k, value in enumerate(relevance, start=1):
        hits += value
        total += (hits / k) * value
    return total / (sum(relevance) + 1e-10)


@dataclass(kw_only=True)
class ContextPrecision(LLMMetric):
    """Average precision of the retrieved passages, judged against the reference answer."""

    name: str = "context_precision"
    scoring: Literal["probability", "binary"] = "probability"

    required_fields = ("user_input", "reference", "retrieved_contexts")
    default_prompt_ids = ("context_usefulness",)
    answer_field = "reference"

    async def _ascore(self, **fields: Any) -> MetricResult:
        contexts = [c for c in fields["retrieved_contexts"] if c and c.strip()]
        if not contexts:
            raise NotApplicable("there are no retrieved contexts to rank")
        raw, split = await self._judge_in_batches(contexts, fields)
        # A passage left unjudged counts as not useful, and the reason says so.
        verdicts = [v if v is not None else Verdict("no", 0.0) for v in raw]
        relevance = [
            v.probability if self.scoring == "probability" else float(v.passed) for v in verdicts
        ]
        score = average_precision(relevance)
        useful = [i + 1 for i, v in enumerate(verdicts) if v.passed]
        unjudged = [i + 1 for i, v in enumerate(raw) if v is None]
        reason = f"useful passages at ranks {useful or 'none'} of {len(contexts)}"
        if unjudged:
            reason += f"; no verdict for ranks {unjudged} (counted as not useful)"
        details: dict[str, Any] = {
            "passages": [
                {"rank": i + 1, "verdict": v.label, "probability": round(v.probability, 4)}
                for i, v in enumerate(verdicts)
            ]
        }
        if split:
            reason += f"; passages at ranks {split} were longer than {MAX_SOURCE_CHARS:,} characters and judged in pieces"
            details["split_ranks"] = split
        return MetricResult(score, reason=reason, details=details)

    async def _judge_in_batches(
        self, contexts: list[str], fields: dict[str, Any]
    ) -> tuple[list[Verdict | None], list[int]]:
        """All passages in one call when they fit the judge's window; otherwise consecutive batches
        (concurrently). A passage longer than the window is judged piece by piece and is useful
        when any piece is. Returns the verdicts and the ranks of the passages that were split."""
        pieces, batches = passage_batches(contexts)
        found: list[list[Verdict | None]] = [[] for _ in contexts]
        values = {"question": fields["user_input"], "answer": fields[self.answer_field]}

        async def judge_batch(batch: list[int]) -> None:
            verdicts = await ask_verdicts(
                self.llm,
                self.judge_prompt("context_usefulness"),
                values,
                [pieces[i][1] for i in batch],
            )
            for index, verdict in zip(batch, verdicts, strict=True):
                found[pieces[index][0]].append(verdict)

        async with anyio.create_task_group() as group:
            for batch in batches:
                group.start_soon(judge_batch, batch)
        split = [i + 1 for i, context in enumerate(contexts) if len(context) > MAX_SOURCE_CHARS]
        return [merge_verdicts(verdicts) for verdicts in found], split

    def estimate(self, sample: Sample) -> CallEstimate:
        sample = single_turn(sample)  # the kind it accepts
        contexts = [c for c in sample.retrieved_contexts or [] if c and c.strip()]
        _, batches = passage_batches(contexts)
        text = sum(len(c) for c in contexts) + len(getattr(sample, self.answer_field) or "") * len(
            batches
        )
        return CallEstimate(
            requests=max(1, len(batches)),
            input_tokens=350 * len(batches) + text // 4,
            output_tokens=4 * len(contexts),
        )


def passage_batches(contexts: list[str]) -> tuple[list[tuple[int, str]], list[list[int]]]:
    """(passage index, text) pieces of the passages, and the batches of piece indices judged per
    call: consecutive, each within the window."""
    pieces = [
        (index, piece) for index, context in enumerate(contexts) for piece in chunk_text(context)
    ]
    batches: list[list[int]] = []
    size = 0
    for position, (_, piece) in enumerate(pieces):
        if not batches or size + len(piece) > MAX_SOURCE_CHARS:
            batches.append([])
            size = 0
        batches[-1].append(position)
        size += len(piece)
    return pieces, batches


@dataclass(kw_only=True)
class ContextUtilization(ContextPrecision):
    """Context precision judged against the system's own response (no reference needed)."""

    name: str = "context_utilization"
    required_fields = ("user_input", "response", "retrieved_contexts")
    answer_field = "response"


# Ragas' names for the same two metrics.
LLMContextPrecisionWithReference = ContextPrecision
LLMContextPrecisionWithoutReference = ContextUtilization

__all__ = [
    "ContextPrecision",
    "ContextUtilization",
    "LLMContextPrecisionWithReference",
    "LLMContextPrecisionWithoutReference",
    "average_precision",
]
