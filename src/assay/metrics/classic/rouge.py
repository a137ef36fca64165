"""RougeScore: ROUGE-N or ROUGE-L overlap of the response with the reference (rouge-score)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from assay.errors import UsageError
from assay.metrics.base import Metric
from assay.schema.outcome import MetricResult

_MODES = ("fmeasure", "precision", "recall")
# What rouge-score itself understands: n-gram overlap rouge1..rouge9, and the two LCS variants.
_ROUGE_TYPE = re.compile(r"rouge[1-9]|rougeL|rougeLsum")


@dataclass(kw_only=True)
class RougeScore(Metric):
    """ROUGE between response and reference.

    `rouge_type` "rougeL" (longest common subsequence, default) or "rouge1" (unigrams; "rouge2"
    etc. also work); `mode` picks the F-measure (default), precision (share of the response
    covered) or recall (share of the reference covered). Tokens are Porter-stemmed, as in Ragas.
    """

    name: str = "rouge_score"
    rouge_type: str = "rougeL"
    mode: str = "fmeasure"
    use_stemmer: bool = True
    required_fields = ("response", "reference")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.rouge_type, str) or not _ROUGE_TYPE.fullmatch(self.rouge_type):
            raise UsageError(
                f"rouge_type must be 'rouge1' or 'rougeL' (or rouge2..rouge9, rougeLsum), got {self.rouge_type!r}"
            )
        if self.mode not in _MODES:
            raise UsageError(f"mode must be one of {', '.join(_MODES)}, got {self.mode!r}")

    async def _ascore(self, *, response: str, reference: str) -> MetricResult:
        from rouge_score import rouge_scorer

        scorer = rouge_scorer.RougeScorer([self.rouge_type], use_stemmer=self.use_stemmer)
        # rouge-score takes (target, prediction): precision is measured against the prediction.
        score = scorer.score(reference, response)[self.rouge_type]
        value = float(getattr(score, self.mode))
        return MetricResult(
            value,
            reason=(
                f"{self.rouge_type} {self.mode} {value:.4f} "
                f"(precision {score.precision:.4f}, recall {score.recall:.4f})"
            ),
            details={
                "precision": float(score.precision),
                "recall": float(score.recall),
                "fmeasure": float(score.fmeasure),
            },
        )
