"""The quality gate every candidate passes before it is kept.

Checks, cheapest first (a refused candidate costs no judge call beyond the first check it fails):

1. `empty`: a question and a reference answer are there; `language`: the question is written in
   the documents' script (Chinese documents, Chinese questions).
2. `standalone`: the question does not lean on text the user never saw ("the passage above",
   "according to the context", "本文"...).
3. `evidence`: the model gave at least one quote, and every quote is in a reference context
   verbatim (whitespace runs compared as one space).
4. `multi_hop`: a multi-hop sample has two or more distinct chunks, and its quotes come from at
   least two of them.
5. `duplicate`: the question is not a near-copy of a question already kept (rapidfuzz
   token-sort ratio on case-folded words ≥ `duplicate_threshold`).
6. `unsupported`: the library's faithfulness judge finds the reference supported by the
   reference contexts (by default every statement of it; see `support_scoring`).
7. `unanswered`: the judge finds that the reference answers the question (the library's
   `answers_question` prompt). With 6, the question is answerable from the contexts.
8. `multi_hop`, judged: no single context of a multi-hop sample supports the whole reference on
   its own (the same support judge, one context at a time), so every hop is needed; quotes from
   two chunks (check 4) alone do not show that the answer uses both.

Judge prompts are asked in the candidate's language when the library has them. Scores land in
the sample's provenance (`gate`); the reason of a refusal is `check: detail`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from assay.errors import NotApplicable, UsageError
from assay.metrics.judge import ask_yes_no
from assay.metrics.rag.faithfulness import Faithfulness
from assay.prompts.prompt import load_prompt
from assay.prompts.render import render
from assay.schema.samples import SingleTurnSample
from assay.testset.terms import detect_language
from assay.testset.text import count_tokens, locate_quote, normalize_space

# "the context manager" is a Python term, not the reader's context, hence the lookaheads; "the
# given X" / "the provided X" points at material the asker has and the reader does not.
_LEANING = re.compile(
    r"\b(?:(?:the|this|that|these|those|given|provided|above|following|attached)\s+"
    r"(?:context|contexts|text|texts|passage|passages|document|documents|excerpt|excerpts|"
    r"section|snippet|article|paragraph|extract|source)s?\b(?!\s+managers?\b)|"
    r"(?:according to|based on|in|from)\s+(?:the\s+)?(?:context|passage|excerpt|snippet)s?\b"
    r"(?!\s+managers?\b)|"
    r"\b(?:the|this|these|those)\s+(?:given|provided|shown|attached)\b|"
    r"\babove\b|\baforementioned\b)"
    r"|上文|本文|这段|该段|文中|上述|以上内容|给定的",
    re.IGNORECASE,
)


# Writing systems: a question in another script than its documents is surely in another language
# (within one script, a short question is too little text to tell languages apart reliably).
_SCRIPTS = {
    "chinese": "han",
    "japanese": "kana",
    "korean": "hangul",
    "russian": "cyrillic",
    "arabic": "arabic",
}


def leans_on_context(question: str) -> str | None:
    match = _LEANING.search(question)
    return match.group(0) if match else None


def _normalized(question: str) -> str:
    return " ".join(re.findall(r"\w+", question.lower()))


@dataclass
class GateResult:
    passed: bool
    reason: str = ""
    scores: dict[str, Any] = field(default_factory=dict)


@dataclass
class QualityGate:
    llm: Any = None  # the judge; None skips checks 6-7 (and the report says so)
    # "verdicts": the share of the reference's statements the judge finds supported (its
    # P(yes) above one half), so 1.0 asks that every statement is; "probability": the mean
    # P(yes). A 1.5B judge gives a sentence copied from the context P(yes) of about 0.75, as it
    # does to a statement it wrongly lets through: a bar on the mean refuses sound references
    # without catching more of the unsound ones.
    support_scoring: str = "verdicts"
    support_threshold: float = 1.0
    answer_threshold: float = 0.5
    duplicate_threshold: float = 90.0
    # how close (rapidfuzz 0-100) a long evidence quote must be to a span of a context; 100 asks
    # for an exact copy. The kept evidence is the context's own span either way.
    evidence_similarity: float = 95.0
    # check 8: refuse a multi-hop sample whose reference one context alone supports
    each_hop_needed: bool = True
    min_question_tokens: int = 3  # words, or CJK characters

    def __post_init__(self) -> None:
        if self.support_scoring not in ("verdicts", "probability"):
            raise UsageError(
                "QualityGate.support_scoring must be 'verdicts' or 'probability', "
                f"got {self.support_scoring!r}"
            )
        for name, high in (
            ("support_threshold", 1.0),
            ("answer_threshold", 1.0),
            ("duplicate_threshold", 100.0),
            ("evidence_similarity", 100.0),
        ):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not 0 <= value <= high
            ):
                raise UsageError(
                    f"QualityGate.{name} must be a number in [0, {high:g}], got {value!r}"
                )
        if not isinstance(self.each_hop_needed, bool):
            # a truthy string such as "no" would silently turn the check on
            raise UsageError(
                f"QualityGate.each_hop_needed must be True or False, got {self.each_hop_needed!r}"
            )
        count = self.min_question_tokens
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise UsageError(
                f"QualityGate.min_question_tokens must be a whole number of at least 1, got {count!r}"
            )

    def judge_settings(self) -> dict[str, Any]:
        """What the judge checks' verdicts depend on besides the judge: kept with each verdict,
        so a rerun with other thresholds judges again instead of trusting an old verdict."""
        return {
            "support_scoring": self.support_scoring,
            "support_threshold": self.support_threshold,
            "answer_threshold": self.answer_threshold,
            "each_hop_needed": self.each_hop_needed,
            # reworded judge prompts give other verdicts
            "prompts": {
                pid: load_prompt(pid, "english").hash for pid in ("supported", "answers_question")
            },
        }

    def cheap_checks(
        self,
        sample: SingleTurnSample,
        evidence: Sequence[str],
        kept_questions: Sequence[str],
        multi_hop: bool,
        language: str | None = None,
        *,
        sources: Sequence[int] | None = None,
    ) -> GateResult:
        """The checks that need no judge. `sources`, when given, names the context each quote
        was cited from: a quote is then looked for in that context only, and a multi-hop sample
        needs quotes cited from two contexts (a sentence that two contexts share, cited from
        the second, is not counted as the first's)."""
        scores: dict[str, Any] = {}
        question = (sample.user_input or "").strip()
        contexts = list(sample.reference_contexts or [])
        if (
            count_tokens(question) < self.min_question_tokens
            or not (sample.reference or "").strip()
        ):
            return GateResult(False, "empty: no question or no reference answer", scores)
        if language and _SCRIPTS.get(language, "latin") != _SCRIPTS.get(
            detect_language(question), "latin"
        ):
            return GateResult(
                False,
                f"language: the question is not in the documents' language ({language})",
                scores,
            )
        leaning = leans_on_context(question)
        if leaning:
            return GateResult(False, f"standalone: the question refers to {leaning!r}", scores)
        if not evidence:
            return GateResult(False, "evidence: the draft cites no evidence", scores)
        if sources is not None and len(sources) != len(evidence):
            sources = None  # not one per quote: look for each in every context
        found_in: list[int] = []
        verbatim: list[str] = []
        evidence_similarity: list[float] = []
        for number, quote in enumerate(evidence):
            source = -1 if sources is None else sources[number]
            if 0 <= source < len(contexts):
                found = locate_quote(
                    quote, [contexts[source]], min_similarity=self.evidence_similarity
                )
                found = None if found is None else (source, found[1], found[2])
            else:
                found = locate_quote(quote, contexts, min_similarity=self.evidence_similarity)
            if found is None:
                return GateResult(
                    False,
                    f"evidence: quote not found in the contexts: {normalize_space(quote)[:120]!r}",
                    scores,
                )
            found_in.append(found[0])
            verbatim.append(found[1])
            evidence_similarity.append(round(found[2], 1))
        scores["evidence_contexts"] = sorted(set(found_in))
        # what the sample cites: the contexts' own words, even when the writer's copy slipped
        scores["evidence_verbatim"] = verbatim
        scores["evidence_similarity"] = evidence_similarity
        if multi_hop:
            ids = set(sample.reference_context_ids or [])
            if len(ids) < 2 or len(contexts) < 2:
                return GateResult(False, "multi_hop: fewer than two distinct chunks", scores)
            if len(set(found_in)) < 2:
                return GateResult(
                    False, "multi_hop: the evidence comes from one chunk only", scores
                )
        similarity = self.nearest(question, kept_questions)
        scores["duplicate_similarity"] = round(similarity, 2)
        if similarity >= self.duplicate_threshold:
            return GateResult(
                False, f"duplicate: {similarity:.0f}% like a question already kept", scores
            )
        return GateResult(True, "", scores)

    def nearest(self, question: str, kept_questions: Sequence[str]) -> float:
        mine = _normalized(question)
        return max(
            (fuzz.token_sort_ratio(mine, _normalized(q)) for q in kept_questions), default=0.0
        )

    async def judged_checks(
        self, sample: SingleTurnSample, language: str, multi_hop: bool = False
    ) -> GateResult:
        scores: dict[str, Any] = {"judged_with": self.judge_settings()}
        if self.llm is None:
            return GateResult(True, "", {"judged": False})
        judge_language = language if language in ("english", "chinese") else "english"
        faithfulness = Faithfulness(
            llm=self.llm,
            language=judge_language,
            scoring="binary" if self.support_scoring == "verdicts" else "probability",
        )
        contexts = list(sample.reference_contexts or [])
        try:
            result = await faithfulness.ascore(
                response=sample.reference, retrieved_contexts=contexts, user_input=sample.user_input
            )
        except NotApplicable as exc:
            return GateResult(False, f"unsupported: {exc}", scores)
        scores["reference_supported"] = round(float(result.value), 4)
        if result.value < self.support_threshold:
            return GateResult(
                False,
                f"unsupported: support {result.value:.2f} is below {self.support_threshold:g} "
                f"({result.reason})",
                scores,
            )
        prompt = load_prompt("answers_question", judge_language)
        verdict = await ask_yes_no(
            self.llm, render(prompt, {"question": sample.user_input, "response": sample.reference})
        )
        scores["answerable"] = round(verdict.probability, 4)
        if verdict.probability < self.answer_threshold:
            return GateResult(
                False, "unanswered: the reference does not answer the question", scores
            )
        if multi_hop and self.each_hop_needed and len(contexts) > 1:
            alone: list[float] = scores.setdefault("supported_by_one_context", [])
            for number, context in enumerate(contexts, start=1):
                try:
                    own = await faithfulness.ascore(
                        response=sample.reference,
                        retrieved_contexts=[context],
                        user_input=sample.user_input,
                    )
                except NotApplicable:  # e.g. an empty context: it supports nothing alone
                    alone.append(0.0)
                    continue
                alone.append(round(float(own.value), 4))
                if own.value >= self.support_threshold:
                    return GateResult(
                        False,
                        f"multi_hop: context {number} of {len(contexts)} alone supports the "
                        "whole reference, so the other hops are not needed",
                        scores,
                    )
        return GateResult(True, "", scores)


__all__ = ["GateResult", "QualityGate", "leans_on_context"]
