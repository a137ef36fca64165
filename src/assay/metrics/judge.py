"""How metrics ask the judge: for a structured answer, or for yes/no verdicts with probabilities.

`ask_verdicts` judges a numbered list of items in ONE call. The judge answers one line per item
("1. yes"); only those lines are read, so an answer that runs on after its last verdict and is
cut off is still whole (one cut off before it is asked again with room to finish). When the provider returns token log-probabilities, each verdict also gets P(yes),
read from the alternatives at the verdict token, which separates confident from hesitant calls.
Without log-probabilities the verdicts are 1.0 / 0.0. A reply that does not cover every item
exactly once gets None for the items it skipped (callers score the rest and say so); a reply with
no usable verdict is an `OutputParseError` carrying the raw text, never a silent guess.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from assay.errors import OutputParseError
from assay.models.cascade import verdicts_asked
from assay.models.types import TokenLogprob
from assay.prompts.prompt import Prompt
from assay.prompts.render import render

T = TypeVar("T", bound=BaseModel)

_LINE = re.compile(
    r"^\s*(?:\[)?(\d+)(?:\])?\s*[.):\-]?\s*\**\s*([A-Za-z\u4e00-\u9fff]+)", re.MULTILINE
)


@dataclass(frozen=True)
class Verdict:
    """A judgement on one item: the label chosen and the probability of the positive label."""

    label: str
    probability: float  # P(positive label); 1.0/0.0 when the provider gives no log-probabilities
    # "judge", or the rule that decided without a call (e.g. "no shared word": metrics/rag/anchor.py)
    decided_by: str = "judge"

    @property
    def passed(self) -> bool:
        return self.probability >= 0.5


def consecutive_calls(llm: Any) -> AbstractAsyncContextManager[Any]:
    """`llm.consecutive()` for a run of calls sharing a long prefix; a no-op for a judge that is
    not an assay `LLM` (e.g. a scripted one in tests)."""
    consecutive = getattr(llm, "consecutive", None)
    return consecutive() if consecutive is not None else nullcontext()


async def ask_json(
    llm: Any, prompt: Prompt, values: Mapping[str, Any], schema: type[T], **params: Any
) -> T:
    response = await llm.agenerate(render(prompt, values), schema=schema, **params)
    parsed: T = response.parsed  # an instance of `schema`
    return parsed


def _numbered(items: Sequence[str]) -> str:
    return "\n".join(f"{i}. {item}" for i, item in enumerate(items, start=1))


async def ask_verdicts(
    llm: Any,
    prompt: Prompt,
    values: Mapping[str, Any],
    items: Sequence[str],
    *,
    items_input: str = "items",
    on_extra_items: Literal["ignore", "negative"] = "ignore",
) -> list[Verdict | None]:
    """Judge every item in one call; `prompt.choices[0]` is the positive label (e.g. 'yes').
    An item the judge skipped comes back as None (callers report it); none at all is an error.

    A reply with verdicts for items that were never asked (an "11." when there are 3) was led
    off its task, usually by text inside the items that looks like a list or an instruction.
    `on_extra_items="negative"` makes every asked item negative then (P(yes) = 0): text that
    steers the judge is not supported by anything. The default ignores the extra lines."""
    if not items:
        return []
    positive, negative = prompt.choices[0].lower(), prompt.choices[1].lower()
    messages = render(prompt, {**values, items_input: _numbered(items)})
    with verdicts_asked(len(items)):  # a Cascade reads (and lets its first judge write) only these
        generation = await _first_words(
            llm,
            messages,
            8 * len(items) + 16,
            lambda text: _all_labelled(text, len(items), positive, negative),
        )
    if on_extra_items == "negative" and _extra_items(
        generation.text, len(items), positive, negative
    ):
        return [Verdict(label=negative, probability=0.0) for _ in items]
    labels = _labels(generation.text, len(items), positive, negative)
    probabilities = _verdict_probabilities(generation.logprobs, positive, negative)
    if probabilities is not None and (None in labels or len(probabilities) != len(items)):
        probabilities = None  # cannot align token positions with items; fall back to the labels
    verdicts: list[Verdict | None] = []
    for index, label in enumerate(labels):
        if label is None:
            verdicts.append(None)
            continue
        probability = (
            probabilities[index] if probabilities is not None else float(label == positive)
        )
        verdicts.append(Verdict(label=label, probability=probability))
    return verdicts


@dataclass(frozen=True)
class Rating:
    """One choice among `prompt.choices` (e.g. "0"/"1"/"2"), with the judge's probability for each
    choice when log-probabilities are available (else all mass on the chosen label)."""

    label: str
    distribution: dict[str, float]

    def expected(self, value_of: Mapping[str, float]) -> float:
        """The probability-weighted value of the rating."""
        return sum(p * value_of[choice] for choice, p in self.distribution.items())


async def _first_words(
    llm: Any, messages: Any, max_tokens: int, readable: Any, **params: Any
) -> Any:
    """The generation of a call whose answer is read from its start (a label, or one verdict line
    per item). Only that is read, so an answer cut off after it is still whole; one cut off before a readable label is asked again
    with room to finish (the model layer doubles the budget until the answer completes)."""
    response = await llm.agenerate(
        messages,
        max_tokens=max_tokens,
        logprobs=True,
        top_logprobs=10,
        allow_truncated=True,
        **params,
    )
    generation = response.generations[0]
    if generation.finish_reason == "length" and not readable(generation.text):
        response = await llm.agenerate(
            messages, max_tokens=max_tokens, logprobs=True, top_logprobs=10, **params
        )
        generation = response.generations[0]
    return generation


def _rating_label(text: str, choices: list[str]) -> str | None:
    words = re.findall(r"[A-Za-z]+|\d+", text.lower())
    return next((word for word in words if word in choices), None)


def _yes_no(text: str) -> str | None:
    words = re.findall(r"[a-z]+", text.lower())
    return words[0] if words and words[0] in ("yes", "no") else None


async def ask_rating(llm: Any, prompt: Prompt, values: Mapping[str, Any]) -> Rating:
    """Ask for one label from `prompt.choices`; an answer outside them is an OutputParseError."""
    choices = [choice.lower() for choice in prompt.choices]
    generation = await _first_words(
        llm, render(prompt, values), 4, lambda text: _rating_label(text, choices)
    )
    label = _rating_label(generation.text, choices)
    if label is None:
        raise OutputParseError(f"the judge answered outside {prompt.choices}", raw=generation.text)
    distribution = {choice: float(choice == label) for choice in choices}
    for token in generation.logprobs or []:
        if token.token.strip().lower() != label:
            continue
        mass = {choice: 0.0 for choice in choices}
        for alternative, logprob in {**token.top, token.token: token.logprob}.items():
            cleaned = alternative.strip().lower()
            if cleaned in mass:
                mass[cleaned] += math.exp(logprob)
        total = sum(mass.values())
        if total > 0:
            distribution = {choice: p / total for choice, p in mass.items()}
        break
    return Rating(label=label, distribution=distribution)


async def ask_yes_no(llm: Any, messages: list[Any], **params: Any) -> Verdict:
    """A single yes/no answer to already-built messages (e.g. with image parts)."""
    generation = await _first_words(
        llm, messages, 2, lambda text: _yes_no(text) is not None, **params
    )
    words = re.findall(r"[a-z]+", generation.text.lower())
    if not words or words[0] not in ("yes", "no"):
        raise OutputParseError("the judge did not answer yes or no", raw=generation.text)
    probabilities = _verdict_probabilities(generation.logprobs, "yes", "no")
    return Verdict(words[0], probabilities[0] if probabilities else float(words[0] == "yes"))


def _extra_items(text: str, count: int, positive: str, negative: str) -> bool:
    return any(
        int(number) > count and word.lower() in (positive, negative)
        for number, word in _LINE.findall(text)
    )


def _all_labelled(text: str, count: int, positive: str, negative: str) -> bool:
    """Does the text already hold a verdict for every item? (What comes after is never read.)"""
    try:
        return None not in _labels(text, count, positive, negative)
    except OutputParseError:
        return False


def _labels(text: str, count: int, positive: str, negative: str) -> list[str | None]:
    """The label per item number; None for items the judge skipped. No label at all is an error."""
    found: dict[int, str] = {}
    for number, word in _LINE.findall(text):
        word = word.lower()
        if word in (positive, negative) and 1 <= int(number) <= count:
            found.setdefault(int(number), word)
    if len(found) != count:
        # Small models sometimes drop the numbers: accept bare words, one per line, if the count fits.
        bare = [
            w.lower()
            for w in re.findall(r"\b([A-Za-z]+)\b", text)
            if w.lower() in (positive, negative)
        ]
        if len(bare) == count:
            return list(bare)
    if not found:
        raise OutputParseError(
            f"the judge gave no usable verdict for any of the {count} items", raw=text
        )
    return [found.get(i) for i in range(1, count + 1)]


def _verdict_probabilities(
    logprobs: list[TokenLogprob] | None, positive: str, negative: str
) -> list[float] | None:
    """P(positive) at each token where the judge wrote a verdict word."""
    if not logprobs:
        return None
    result = []
    for token in logprobs:
        word = token.token.strip().lower()
        if word not in (positive, negative):
            continue
        p_pos = p_neg = 0.0
        for alternative, logprob in {**token.top, token.token: token.logprob}.items():
            cleaned = alternative.strip().lower()
            if cleaned == positive:
                p_pos += math.exp(logprob)
            elif cleaned == negative:
                p_neg += math.exp(logprob)
        total = p_pos + p_neg
        result.append(p_pos / total if total > 0 else float(word == positive))
    return result


__all__ = [
    "Rating",
    "Verdict",
    "ask_json",
    "ask_rating",
    "ask_verdicts",
    "ask_yes_no",
    "consecutive_calls",
]
