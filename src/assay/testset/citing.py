"""Evidence by citation: the writer sees its contexts as numbered sentences and cites numbers.

A small writer asked to copy supporting sentences word for word paraphrases them (in the first
benchmark run 34 of 54 candidates were refused for a quote the contexts did not hold, most of
them with a sound answer). Asked for sentence numbers instead, its evidence is the contexts' own
words by construction: the number is looked up here, and the gate still checks the quote it gets
like any other. A number that names no sentence is kept as a marker the gate cannot find, so the
refusal names it.

Sentences are numbered across all of a draft's contexts ([1]..[n], no number used twice), so a
multi-hop citation also says which context it comes from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assay.metrics.text import split_sentences


@dataclass(frozen=True)
class NumberedContexts:
    """The sentences of some contexts, numbered from 1 across all of them."""

    sentences: tuple[tuple[int, str], ...]  # (context index, sentence)

    @classmethod
    def of(cls, contexts: Sequence[str]) -> NumberedContexts:
        return cls(
            tuple(
                (index, sentence)
                for index, context in enumerate(contexts)
                for sentence in split_sentences(context)
            )
        )

    def texts(self) -> list[str]:
        """Every sentence shown to the writer, in order (what a draft's budget is counted on)."""
        return [s for _, s in self.sentences]

    def lines(self, context_index: int = 0) -> list[str]:
        """One context's sentences, unnumbered, in order (the prompt renderer numbers a list of
        strings [1]..[n] itself, which is right for a draft with one context)."""
        return [s for i, s in self.sentences if i == context_index]

    def block(self, labels: Sequence[str] | None = None) -> str:
        """All contexts as one text: a heading per context, then its numbered sentences."""
        count = 1 + max((i for i, _ in self.sentences), default=-1)
        labels = list(labels or (f"Context {chr(ord('A') + i)}" for i in range(count)))
        parts: list[str] = []
        for context_index in range(count):
            numbered = [
                f"[{number}] {sentence}"
                for number, (i, sentence) in enumerate(self.sentences, start=1)
                if i == context_index
            ]
            parts.append(f"{labels[context_index]}:\n" + "\n".join(numbered))
        return "\n\n".join(parts)

    def quotes(self, numbers: Sequence[int]) -> list[str]:
        """The cited sentences, each once, in the order cited; a number naming no sentence
        becomes a marker that no context holds, so the gate's refusal says which it was."""
        quotes: list[str] = []
        for number in dict.fromkeys(numbers):
            if 1 <= number <= len(self.sentences):
                quotes.append(self.sentences[number - 1][1])
            else:
                quotes.append(f"<sentence {number}: there are {len(self.sentences)}>")
        return quotes


__all__ = ["NumberedContexts"]
