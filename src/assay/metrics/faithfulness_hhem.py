"""FaithfulnesswithHHEM: faithfulness whose verdicts come from a hallucination/NLI classifier.

The response's statements come from the judge's claim split (the first step of Ragas'
faithfulness; `statements="sentences"` uses the response's sentences and needs no judge at all);
then each (retrieved contexts, statement) pair is scored by the classifier the user points at,
`batch_size` pairs per classifier call. A statement whose P(consistent) reaches `threshold` is
supported; the score is supported / statements, as Ragas' HHEM variant counts.

No such classifier ships with assay (none is on PyPI): `classifier` is a local ONNX model
directory, an http(s) URL, or an object with `consistency(pairs)`; see `docs/hhem.md` and
`assay.models.nli_classifier` (how long contexts are windowed, which label means supported).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from assay.errors import NotApplicable, UsageError
from assay.metrics.base import CallEstimate, single_turn
from assay.metrics.llm_metric import LLMMetric
from assay.metrics.rag.claims import grounded_statements
from assay.models.nli_classifier import ClassifierFailed, NLIClassifier, nli_classifier
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample


def hhem_score(probabilities: list[float], threshold: float) -> float:
    """Pure scoring: the share of statements whose P(consistent) reaches the threshold."""
    if not probabilities:
        raise NotApplicable("the response makes no factual claims to check")
    return sum(p >= threshold for p in probabilities) / len(probabilities)


@dataclass(kw_only=True)
class FaithfulnesswithHHEM(LLMMetric):
    name: str = "faithfulness_with_hhem"
    classifier: Any = None
    threshold: float = 0.5
    batch_size: int = 10
    device: str = "cpu"
    statements: Literal["claims", "sentences"] = "claims"
    # passed to the classifier when `classifier` is a directory or URL (max_length, template, ...)
    classifier_options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.classifier is None:
            raise UsageError(
                "FaithfulnesswithHHEM needs classifier=: a local ONNX model directory, an http(s) "
                "URL, or a classifier object (no HHEM model ships with assay; see docs/hhem.md)"
            )
        if not 0.0 < self.threshold < 1.0:
            raise UsageError(f"threshold must be between 0 and 1, got {self.threshold}")
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise UsageError(f"batch_size must be a positive integer, got {self.batch_size!r}")
        if not isinstance(self.classifier, NLIClassifier):
            options = dict(self.classifier_options)
            if not str(self.classifier).startswith(("http://", "https://")):
                options.setdefault("device", self.device)
            self.classifier = nli_classifier(self.classifier, **options)
        # the judge only splits claims; with sentences no judge is needed
        self.needs_llm = self.statements == "claims"  # type: ignore[misc]  # per instance

    @property
    def prompt_ids(self) -> tuple[str, ...]:
        return ("claims",) if self.statements == "claims" else ()

    def params(self) -> dict[str, Any]:
        params = super().params()
        params["classifier"] = self.classifier.identity()
        params.pop("classifier_options", None)  # reflected in the identity; may hold headers
        return params

    async def _ascore(
        self, *, response: str, retrieved_contexts: list[str], user_input: str | None = None
    ) -> MetricResult:
        source, claims = await grounded_statements(self, response, retrieved_contexts, user_input)
        probabilities = await self.classifier.consistency(
            [(source, claim) for claim in claims], batch_size=self.batch_size
        )
        if len(probabilities) != len(claims):
            raise ClassifierFailed(
                f"the classifier returned {len(probabilities)} scores for {len(claims)} statements"
            )
        score = hhem_score(probabilities, self.threshold)
        supported = sum(p >= self.threshold for p in probabilities)
        return MetricResult(
            score,
            reason=f"{supported} of {len(claims)} {self.statements} are supported by the "
            f"contexts (classifier P(consistent) >= {self.threshold:g})",
            details={
                "claims": [
                    {
                        "claim": claim,
                        "verdict": "yes" if p >= self.threshold else "no",
                        "probability": round(p, 4),
                    }
                    for claim, p in zip(claims, probabilities, strict=True)
                ]
            },
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        sample = single_turn(sample)  # the kind it accepts
        if self.statements == "sentences":
            return CallEstimate()
        response = len(sample.response or "") // 4
        return CallEstimate(requests=1, input_tokens=600 + response, output_tokens=response)


__all__ = ["FaithfulnesswithHHEM", "hhem_score"]
