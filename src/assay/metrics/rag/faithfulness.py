"""Faithfulness: the share of the response's statements that the retrieved contexts support.

By default each sentence of the response is a statement, and all of them are checked against the
contexts in ONE verdict call. `statements="claims"` first asks the judge to split the response
into self-contained claims (Ragas' algorithm: two calls; finer on long compound sentences, and
about 15x slower on a small local judge, which spends most of that time writing the claims out).
The sentence default was chosen on measurements: 0.88 pairwise accuracy on all 50 WikiEval pairs
with the embedded 1.5B judge (Ragas' claim-based faithfulness with the same judge: 0.575), at a
fraction of the time (`benchmarks/results/`).

`scoring="probability"` (default) averages P(supported) per statement, read from the judge's
token probabilities when the provider offers them; `scoring="binary"` counts statements judged
supported, as Ragas does. Without token probabilities both give the binary score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from assay.errors import NotApplicable
from assay.metrics.base import CallEstimate
from assay.metrics.judge import Verdict
from assay.metrics.llm_metric import LLMMetric
from assay.metrics.prompt_attributes import PromptAttribute
from assay.metrics.rag.anchor import anchor_note
from assay.metrics.rag.claims import (
    check_support,
    chunk_text,
    claim_details,
    grounded_statements,
    join_contexts,
    judged,
    skipped_note,
)
from assay.prompts.faithfulness import NLIStatementPrompt, StatementGeneratorPrompt
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample


def faithfulness_score(verdicts: list[Verdict], *, scoring: str = "probability") -> float:
    """Pure scoring: mean support over claims."""
    if not verdicts:
        raise NotApplicable("the response makes no factual claims to check")
    values = [v.probability if scoring == "probability" else float(v.passed) for v in verdicts]
    return sum(values) / len(values)


@dataclass(kw_only=True)
class Faithfulness(LLMMetric):
    name: str = "faithfulness"
    scoring: Literal["probability", "binary"] = "probability"
    statements: Literal["claims", "sentences"] = "sentences"
    # "list": every statement in one verdict call; "each": one call per statement (see
    # `check_support`): immune to one statement swaying the others, e.g. an injected instruction.
    verdicts: Literal["list", "each"] = "list"
    # A statement sharing no content word with the contexts is unsupported without a call (see
    # metrics/rag/anchor.py): sentences that address the judge cannot talk it into "yes".
    lexical_anchor: bool = True

    calls_per_sample = (
        "1 (2 with statements='claims'; 1 per statement with verdicts='each'); "
        "x the number of 6,000-character pieces of the contexts"
    )
    required_fields = ("response", "retrieved_contexts")
    optional_fields = ("user_input",)

    # Ragas' prompt attributes (see metrics/prompt_attributes.py)
    statement_generator_prompt = PromptAttribute("claims", StatementGeneratorPrompt)
    nli_statement_prompt = PromptAttribute("supported", NLIStatementPrompt)

    @property
    def prompt_ids(self) -> tuple[str, ...]:  # type: ignore[override]
        """The prompts this setting sends (so records and translations name only those)."""
        return ("claims", "supported") if self.statements == "claims" else ("supported",)

    async def _ascore(
        self, *, response: str, retrieved_contexts: list[str], user_input: str | None = None
    ) -> MetricResult:
        source, claims = await grounded_statements(self, response, retrieved_contexts, user_input)
        raw = await check_support(
            self.llm,
            self.judge_prompt("supported"),
            source,
            claims,
            each=self.verdicts == "each",
            anchor=self.lexical_anchor,
        )
        claims, verdicts, unjudged = judged(claims, raw)
        score = faithfulness_score(verdicts, scoring=self.scoring)
        supported = sum(v.passed for v in verdicts)
        return MetricResult(
            score,
            reason=f"{supported} of {len(claims)} {self.statements} are supported by the contexts"
            f"{anchor_note(verdicts)}{skipped_note(unjudged)}",
            details={"claims": claim_details(claims, verdicts), "unjudged": unjudged},
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        response = len(sample.response or "") // 4
        contexts = sum(len(c) for c in sample.retrieved_contexts or []) // 4
        pieces = len(
            chunk_text(join_contexts(sample.retrieved_contexts or []))
        )  # one verdict call each
        if self.verdicts == "each":
            # about one statement per 25 tokens of response; each call repeats the prefix, which a
            # caching server reads once
            statements = max(1, response // 25)
            checks = CallEstimate(
                requests=pieces * statements,
                input_tokens=pieces * statements * (300 + 25) + contexts,
                output_tokens=6 * pieces * statements,
            )
        else:
            checks = CallEstimate(
                requests=pieces,
                input_tokens=300 * pieces + contexts + pieces * response,
                output_tokens=20 * pieces,
            )
        if self.statements == "sentences":
            return checks
        return CallEstimate(
            requests=1 + pieces,
            input_tokens=600 + response + checks.input_tokens,
            output_tokens=response + checks.output_tokens,
        )


__all__ = ["Faithfulness", "faithfulness_score"]
