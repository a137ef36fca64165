"""IDBasedContextPrecision and IDBasedContextRecall: retrieval judged by document ids alone."""

from __future__ import annotations

from dataclasses import dataclass

from assay.errors import NotApplicable
from assay.metrics.base import Metric
from assay.metrics.classic._offload import run, size_of
from assay.schema.outcome import MetricResult


def _distinct(ids: list[str | int]) -> list[str]:
    """Ids as strings (so 1 and "1" are the same document), duplicates dropped, order kept."""
    return list(dict.fromkeys(str(item) for item in ids))


def _overlap(
    retrieved: list[str | int], reference: list[str | int]
) -> tuple[list[str], list[str], list[str]]:
    retrieved_ids = _distinct(retrieved)
    reference_ids = _distinct(reference)
    wanted = set(reference_ids)
    return retrieved_ids, reference_ids, [item for item in retrieved_ids if item in wanted]


def _precision(
    retrieved_context_ids: list[str | int], reference_context_ids: list[str | int]
) -> MetricResult:
    retrieved, reference, hits = _overlap(retrieved_context_ids, reference_context_ids)
    if not retrieved:
        raise NotApplicable("no retrieved context ids: precision is undefined")
    found = set(hits)
    return MetricResult(
        len(hits) / len(retrieved),
        reason=f"{len(hits)} of {len(retrieved)} retrieved ids are reference ids",
        details={
            "matched_ids": hits,
            "unexpected_ids": [item for item in retrieved if item not in found],
            "retrieved_count": len(retrieved),
            "reference_count": len(reference),
        },
    )


def _recall(
    retrieved_context_ids: list[str | int], reference_context_ids: list[str | int]
) -> MetricResult:
    retrieved, reference, hits = _overlap(retrieved_context_ids, reference_context_ids)
    if not reference:
        raise NotApplicable("no reference context ids: recall is undefined")
    found = set(hits)
    return MetricResult(
        len(hits) / len(reference),
        reason=f"{len(hits)} of {len(reference)} reference ids were retrieved",
        details={
            "matched_ids": hits,
            "missing_ids": [item for item in reference if item not in found],
            "retrieved_count": len(retrieved),
            "reference_count": len(reference),
        },
    )


@dataclass(kw_only=True)
class IDBasedContextPrecision(Metric):
    """Share of the distinct retrieved ids that are reference ids."""

    name: str = "id_based_context_precision"

    async def _ascore(
        self, *, retrieved_context_ids: list[str | int], reference_context_ids: list[str | int]
    ) -> MetricResult:
        # Linear, but tens of thousands of ids are scored off the event loop.
        size = size_of(retrieved_context_ids, reference_context_ids)
        return await run(size, _precision, retrieved_context_ids, reference_context_ids)


@dataclass(kw_only=True)
class IDBasedContextRecall(Metric):
    """Share of the distinct reference ids that were retrieved."""

    name: str = "id_based_context_recall"

    async def _ascore(
        self, *, retrieved_context_ids: list[str | int], reference_context_ids: list[str | int]
    ) -> MetricResult:
        # Linear, but tens of thousands of ids are scored off the event loop.
        size = size_of(retrieved_context_ids, reference_context_ids)
        return await run(size, _recall, retrieved_context_ids, reference_context_ids)
