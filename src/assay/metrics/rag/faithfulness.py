"""Faithfulness: the share of the response's statements that the retrieved contexts support.

By default each sentence of the response is a statement, checked against the contexts in verdict
lists of at most three statements (`statements_per_call=3`), asked one after another after the same
source, so a caching server reads the source once. A small judge's P(yes) drifts upwards along a
long list ("herding"), which let late unsupported sentences of long answers pass: on all 50 WikiEval
pairs with the embedded 1.5B judge one list per response scored 0.86 pairwise accuracy, lists of
three 0.98, at the same seconds per item (k=3 was fixed before it was measured). A response of at
most three sentences is one call either way. `statements_per_call=None` asks all statements in one
list; `verdicts="each"` is one statement per call.

`statements="claims"` first asks the judge to split the response into self-contained claims
(Ragas' algorithm: one more call; finer on long compound sentences, and about 15x slower on a small
local judge, which spends most of that time writing the claims out). Ragas' claim-based faithfulness
scored 0.575 on WikiEval with the same judge (`benchmarks/results/`).

`scoring="probability"` (default) averages P(supported) per statement, read from the judge's
token probabilities when the provider offers them; `scoring="binary"` counts statements judged
supported, as Ragas does. Without token probabilities both give the binary score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from assay.errors import NotApplicable
from assay.metrics.base import CallEstimate, single_turn
from assay.metrics.judge import Verdict
from assay.metrics.llm_metric import LLMMetric
from assay.metrics.rag.anchor import anchor_note
from assay.metrics.rag.claims import (
    check_support,
    checked_per_call,
    chunk_text,
    claim_details,
    grounded_statements,
    join_contexts,
    judged,
    skipped_note,
)
from assay.metrics.text import split_sentences
from assay.schema.outcome import MetricResult
from assay.schema.samples import Sample

# Statements per verdict call by default: a choice made before measuring (see the docstring).
DEFAULT_STATEMENTS_PER_CALL = 3


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
    # "list": the statements in verdict lists; "each": one call per statement (see
    # `check_support`): immune to one statement swaying the others, e.g. an injected instruction.
    verdicts: Literal["list", "each"] = "list"
    # With verdicts="list", at most this many statements per call (None: all in one call).
    # Shorter lists keep a small judge from herding towards "yes" along a long answer.
    statements_per_call: int | None = DEFAULT_STATEMENTS_PER_CALL
    # A statement sharing no content word with the contexts is unsupported without a call (see
    # metrics/rag/anchor.py): sentences that address the judge cannot talk it into "yes".
    lexical_anchor: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        checked_per_call(self.statements_per_call)
        if self.verdicts == "each":
            # "each" is one statement per call; the default k stands aside, any other k conflicts
            if self.statements_per_call not in (None, 1, DEFAULT_STATEMENTS_PER_CALL):
                raise ValueError(
                    "verdicts='each' asks one statement per call; it cannot be combined with "
                    f"statements_per_call={self.statements_per_call}"
                )
            self.statements_per_call = 1

    @property
    def per_call(self) -> int | None:
        """Statements per verdict call: 1 with verdicts='each', None for one list."""
        return 1 if self.verdicts == "each" else self.statements_per_call

    @property
    def prompt_ids(self) -> tuple[str, ...]:
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
            per_call=self.per_call,
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
        sample = single_turn(sample)  # the kind it accepts
        response = len(sample.response or "") // 4
        contexts = sum(len(c) for c in sample.retrieved_contexts or []) // 4
        pieces = len(
            chunk_text(join_contexts(sample.retrieved_contexts or []))
        )  # one verdict call each
        if self.per_call is not None:
            # the response's sentences (claims: about one per 25 tokens); each call repeats the
            # prefix, which a caching server reads once
            count = max(
                1,
                len(split_sentences(sample.response or ""))
                if self.statements == "sentences"
                else response // 25,
            )
            calls = -(-count // self.per_call)
            checks = CallEstimate(
                requests=pieces * calls,
                input_tokens=pieces * calls * 300 + pieces * response + contexts,
                output_tokens=6 * pieces * count,
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
