"""BleuScore: sacrebleu's corpus BLEU of the response against the reference, scaled to [0, 1]."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.metrics.base import Metric
from assay.metrics.classic._offload import load, run
from assay.metrics.classic._sacrebleu import check_kwargs, corpus_score
from assay.schema.outcome import MetricResult


@dataclass(kw_only=True)
class BleuScore(Metric):
    """BLEU (n-gram precision with a brevity penalty). `kwargs` go to `sacrebleu.corpus_bleu`,
    e.g. `{"smooth_method": "exp", "lowercase": True}`."""

    name: str = "bleu_score"
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.kwargs = check_kwargs(type(self).__name__, self.kwargs)

    async def _ascore(self, *, response: str, reference: str) -> MetricResult:
        await load("sacrebleu")
        bleu = await run(
            len(response) + len(reference),
            corpus_score,
            "corpus_bleu",
            type(self).__name__,
            response,
            reference,
            self.kwargs,
        )
        # sacrebleu reports percentages; Ragas (and we) report fractions.
        value = float(bleu.score) / 100
        precisions = [float(p) / 100 for p in bleu.precisions]
        return MetricResult(
            value,
            reason=(
                f"BLEU {value:.4f}: n-gram precisions "
                + ", ".join(f"{p:.3f}" for p in precisions)
                + f", brevity penalty {float(bleu.bp):.3f}"
            ),
            details={
                "precisions": precisions,
                "brevity_penalty": float(bleu.bp),
                "hypothesis_length": int(bleu.sys_len),
                "reference_length": int(bleu.ref_len),
            },
        )
