"""RougeScore: ROUGE-N or ROUGE-L overlap of the response with the reference (rouge-score).

rouge-score fills a Python table of every token pair to find the longest common subsequence, so
ROUGE-L took minutes and gigabytes on 100 KB texts. Here ROUGE-L's subsequence length comes from
rapidfuzz's bit-parallel LCS (64 token pairs per machine operation, GIL released) on the same
tokens, which gives the same length and so the same scores. It is still quadratic: texts whose
token counts multiply beyond `max_tokens`² are refused with a `MetricError`. rougeLsum keeps
rouge-score's own per-sentence tables (the union of subsequences depends on which one its
backtracking picks) under a much lower default limit. ROUGE-N is linear and has no limit. Large
texts are scored in a worker thread (`_offload`).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from assay.errors import UsageError
from assay.metrics.base import Metric
from assay.metrics.classic._offload import (
    OFF_LOOP_CHARS,
    check_limit,
    check_product,
    load,
    released_gil,
    run,
)
from assay.schema.outcome import MetricResult

_MODES = ("fmeasure", "precision", "recall")
# What rouge-score itself understands: n-gram overlap rouge1..rouge9, and the two LCS variants.
_ROUGE_TYPE = re.compile(r"rouge[1-9]|rougeL|rougeLsum")
# Default `max_tokens` of the LCS variants: at the limit (both texts that long) 5 to 10 s for
# rougeL (a 1 MB text has about 170,000 tokens: 4 to 8 s) and about 5 s for rougeLsum on a 2-core
# machine (benchmarks/results/classic_metrics_large_inputs.md).
DEFAULT_MAX_TOKENS = {"rougeL": 200_000, "rougeLsum": 3_000}
# rougeLsum's per-sentence tables are pure Python (about a second for 10 KB a side): only tiny
# texts are scored on the event loop.
_LSUM_INLINE_CHARS = 2_000
_WORK = {
    "rougeL": "the longest common subsequence",
    "rougeLsum": "the summary-level longest common subsequence",
}


@functools.lru_cache(maxsize=2)
def _tokenizer(use_stemmer: bool) -> Any:
    """rouge-score's default tokenizer, with each word's Porter stem remembered (stemming is
    most of the tokenizer's time, and a text repeats its words)."""
    from nltk.stem import porter
    from rouge_score import tokenize

    stemmer = None
    if use_stemmer:
        stemmer = SimpleNamespace(
            stem=functools.lru_cache(maxsize=200_000)(porter.PorterStemmer().stem)
        )
    return SimpleNamespace(tokenize=functools.partial(tokenize.tokenize, stemmer=stemmer))


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two token lists.

    Tokens missing from the other list cannot be in it, so they are dropped first; the rest are
    numbered by frequency (rapidfuzz looks the commonest up fastest)."""
    from rapidfuzz.distance import LCSseq

    shared = set(a) & set(b)
    counts = Counter(token for token in a if token in shared)
    counts.update(token for token in b if token in shared)
    number = {token: rank for rank, (token, _) in enumerate(counts.most_common())}
    ids_a = [number[token] for token in a if token in shared]
    ids_b = [number[token] for token in b if token in shared]
    if not ids_a or not ids_b:
        return 0
    import numpy as np

    return int(released_gil(LCSseq.similarity, ids_a, ids_b, np.int64))


def rouge(
    owner: str,
    rouge_type: str,
    use_stemmer: bool,
    max_tokens: int | None,
    reference: str,
    response: str,
) -> Any:
    """rouge-score's `Score` of `response` (the prediction) against `reference` (the target)."""
    from rouge_score import rouge_scorer, scoring

    tokenizer = _tokenizer(use_stemmer)
    if rouge_type in DEFAULT_MAX_TOKENS:
        target, prediction = tokenizer.tokenize(reference), tokenizer.tokenize(response)
        limit = max_tokens if max_tokens is not None else DEFAULT_MAX_TOKENS[rouge_type]
        sizes = {"response": len(prediction), "reference": len(target)}
        check_product(
            f"{owner} ({rouge_type})", sizes, "tokens", limit, "max_tokens", _WORK[rouge_type]
        )
        if rouge_type == "rougeL":  # as rouge_scorer._score_lcs, with a faster LCS
            if not target or not prediction:
                return scoring.Score(precision=0, recall=0, fmeasure=0)
            lcs = lcs_length(target, prediction)
            precision, recall = lcs / len(prediction), lcs / len(target)
            return scoring.Score(precision, recall, scoring.fmeasure(precision, recall))
    scorer = rouge_scorer.RougeScorer([rouge_type], tokenizer=tokenizer)
    # rouge-score takes (target, prediction): precision is measured against the prediction.
    return scorer.score(reference, response)[rouge_type]


@dataclass(kw_only=True)
class RougeScore(Metric):
    """ROUGE between response and reference.

    `rouge_type` "rougeL" (longest common subsequence, default) or "rouge1" (unigrams; "rouge2"
    etc. also work); `mode` picks the F-measure (default), precision (share of the response
    covered) or recall (share of the reference covered). Tokens are Porter-stemmed, as in Ragas.
    `max_tokens` bounds the quadratic LCS variants: the product of the two token counts may not
    exceed `max_tokens`²; None means 200,000 for rougeL and 3,000 for rougeLsum. Beyond it the
    cell is a `MetricError`, never a truncated value. The limit changes no value, so it is not
    part of the metric's spec.
    """

    name: str = "rouge_score"
    rouge_type: str = "rougeL"
    mode: str = "fmeasure"
    use_stemmer: bool = True
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.rouge_type, str) or not _ROUGE_TYPE.fullmatch(self.rouge_type):
            raise UsageError(
                f"rouge_type must be 'rouge1' or 'rougeL' (or rouge2..rouge9, rougeLsum), got {self.rouge_type!r}"
            )
        if self.mode not in _MODES:
            raise UsageError(f"mode must be one of {', '.join(_MODES)}, got {self.mode!r}")
        self.max_tokens = check_limit("max_tokens", self.max_tokens)

    def params(self) -> dict[str, Any]:
        values = super().params()
        values.pop("max_tokens")  # decides whether a value is computed, never which
        return values

    async def _ascore(self, *, response: str, reference: str) -> MetricResult:
        await load("rouge_score.rouge_scorer")  # seconds the first time (nltk): not on the loop
        score = await run(
            len(response) + len(reference),
            rouge,
            self.name,
            self.rouge_type,
            self.use_stemmer,
            self.max_tokens,
            reference,
            response,
            inline_up_to=_LSUM_INLINE_CHARS if self.rouge_type == "rougeLsum" else OFF_LOOP_CHARS,
        )
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
