"""Scoring replays: the recorded and the replayed trajectories of every replay, in one `evaluate`
run (so the judge's concurrency, cache and typed outcomes are the engine's). A replay that failed
has only its recording scored."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.schema.dataset import EvaluationDataset
from assay.schema.samples import MultiTurnSample
from assay.simulation.replay.result import ReplayResult


async def score_replays(results: Sequence[ReplayResult], metrics: Sequence[Any], llm: Any) -> None:
    """Fill each result's `scores` (in place)."""
    from assay.engine.run import aevaluate
    from assay.schema.result import EvaluationResult

    rows: list[MultiTurnSample] = []
    where: list[tuple[ReplayResult, str]] = []
    for result in results:
        rows.append(result.original)
        where.append((result, "original"))
        if result.ok and result.replayed is not None:
            rows.append(result.replayed)
            where.append((result, "replayed"))
    scored = await aevaluate(
        EvaluationDataset(rows, name="replays"), metrics=list(metrics), llm=llm, show_progress=False
    )
    assert isinstance(scored, EvaluationResult)  # no executor was asked for
    for row, (result, side) in enumerate(where):
        result.scores[side] = {name: scored.outcome(row, name) for name in scored.metric_names}


__all__ = ["score_replays"]
