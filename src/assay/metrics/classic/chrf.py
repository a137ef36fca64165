"""CHRFScore: sacrebleu's character n-gram F-score of the response against the reference."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.metrics.base import Metric
from assay.metrics.classic._offload import load, run
from assay.metrics.classic._sacrebleu import check_kwargs, corpus_score
from assay.schema.outcome import MetricResult


@dataclass(kw_only=True)
class CHRFScore(Metric):
    """chrF, scaled to [0, 1]. `kwargs` go to `sacrebleu.corpus_chrf`, e.g.
    `{"char_order": 4, "word_order": 2}` (chrF++) or `{"beta": 3}`."""

    name: str = "chrf_score"
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.kwargs = check_kwargs(type(self).__name__, self.kwargs)

    async def _ascore(self, *, response: str, reference: str) -> MetricResult:
        await load("sacrebleu")
        chrf = await run(
            len(response) + len(reference),
            corpus_score,
            "corpus_chrf",
            type(self).__name__,
            response,
            reference,
            self.kwargs,
        )
        value = float(chrf.score) / 100
        return MetricResult(
            value,
            reason=f"chrF {value:.4f} (char_order={chrf.char_order}, "
            f"word_order={chrf.word_order}, beta={chrf.beta})",
            details={
                "char_order": int(chrf.char_order),
                "word_order": int(chrf.word_order),
                "beta": float(chrf.beta),
            },
        )


# Ragas's legacy spelling.
ChrfScore = CHRFScore
