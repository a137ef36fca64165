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

import re
from collections.abc import Sequence
from dataclasses import dataclass

from assay.metrics.text import split_sentences
from assay.testset.text import locate_quote, normalize_space

# Lines that begin a block of their own, never a continuation of the line before: prompts and
# output of interactive sessions, list items, headings, tables, directives, code fences.
_BLOCK_START = re.compile(r"(?:>>>|\.\.\.|[-*+] |#|\d+[.)] |\||\.\. |```|~~~)")


def unwrap(text: str) -> str:
    """`text` with hard-wrapped prose lines joined by a space, so a sentence split over lines
    is one sentence (the splitter ends a sentence at every line break). Indented lines, code
    fences, interactive sessions, list items, headings and their underlines keep their breaks;
    blank lines stay paragraph breaks. Only line breaks become spaces, so every sentence of the
    result is found in the original with whitespace runs read as one space."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        stripped = line.strip()
        opens_fence = stripped.startswith(("```", "~~~"))
        previous = out[-1] if out else ""
        joins = (
            not fenced
            and not opens_fence
            and stripped
            and previous.strip()
            and not line[:1].isspace()
            and not previous[:1].isspace()
            and any(ch.isalnum() for ch in stripped)
            and any(ch.isalnum() for ch in previous)
            and not _BLOCK_START.match(stripped)
            and not _BLOCK_START.match(previous.lstrip())
        )
        if opens_fence:
            fenced = not fenced
        if joins:
            out[-1] = f"{previous} {stripped}"
        else:
            out.append(line)
    return "\n".join(out)


def _label(index: int) -> str:
    """A context's name in a multi-hop prompt: A..Z, then numbers (never a bracket, which
    would read as a sentence number)."""
    return chr(ord("A") + index) if index < 26 else str(index + 1)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) >= 3}


# A run of letters (no digits or underscores), and the CJK ideographs and kana, each of which
# carries about a word's meaning
_LETTER_RUN = re.compile(r"[^\W\d_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


_CALL = re.compile(r"[\w.]+\(")  # a line that starts with a call is code, not prose
# a sentence's end: a full stop, question or exclamation mark (ASCII or CJK), then perhaps
# closing quotes, brackets or inline markup
_SENTENCE_END = re.compile(r"[.!?\u3002\uff01\uff1f][\"'\u201d\u2019)\]`*]*$")


def reads_as_prose(sentence: str) -> bool:
    """Could this sentence hold a fact? Headings ("Tuples and Sequences"), reference labels
    ("_tut-intro:"), lines that introduce what follows ("For example:") and code
    (`print("-- Do you have any", kind, "?")`, `>>> f(1)`) do not: at least five words (or
    eight CJK characters), ending like a sentence, not an interactive session's line."""
    stripped = sentence.strip()
    if stripped.startswith((">>>", "...")) or _CALL.match(stripped):
        return False
    if not _SENTENCE_END.search(stripped):
        return False
    return len(_LETTER_RUN.findall(stripped)) >= 5 or len(_CJK.findall(stripped)) >= 8


def _sentences(context: str) -> list[str]:
    """The context's sentences; a piece cut inside an inline role (":keyword:`!if`", where the
    splitter took the "!" for a sentence end) is joined to the next again."""
    text = unwrap(context)
    flat = normalize_space(text)
    sentences: list[str] = []
    for piece in split_sentences(text):
        # only a cut right after "!" or "?" inside backquotes: a fence such as ```python also
        # leaves an odd count, and gluing on from there would swallow the rest of the text
        if sentences and sentences[-1].endswith(("!", "?")) and sentences[-1].count("`") % 2:
            glued = sentences[-1] + piece
            joined = normalize_space(glued) in flat
            sentences[-1] = glued if joined else f"{sentences[-1]} {piece}"
        else:
            sentences.append(piece)
    return sentences


@dataclass(frozen=True)
class NumberedContexts:
    """The sentences of some contexts, numbered from 1 across all of them."""

    sentences: tuple[tuple[int, str], ...]  # (context index, sentence)
    # numbers of the sentences the gate can find in their own context: a sentence of two
    # characters ("42", "OK") is too short to count as a quote, and the splitter can glue a
    # closing bracket from the next line onto a sentence ("a=1,)" of "a=1,\n)")
    findable: frozenset[int] = frozenset()

    @classmethod
    def of(cls, contexts: Sequence[str]) -> NumberedContexts:
        sentences = tuple(
            (index, sentence)
            for index, context in enumerate(contexts)
            for sentence in _sentences(context)
        )
        findable = frozenset(
            number
            for number, (index, sentence) in enumerate(sentences, start=1)
            if locate_quote(sentence, [contexts[index]], min_similarity=100.0) is not None
        )
        return cls(sentences, findable)

    def citable(self, context_index: int) -> list[int]:
        """The numbers a draft may cite from one context: its findable sentences that read as
        prose; else its findable ones; else all of them. Offered a heading first, a small writer
        whose schema asks for one number per context takes it (in one benchmark run 5 of 5
        multi-hop drafts cited a heading or a label of at least one context) and then writes an
        answer that no chosen sentence holds."""
        own = [n for n, (i, _) in enumerate(self.sentences, start=1) if i == context_index]
        findable = [n for n in own if n in self.findable]
        prose = [n for n in findable if reads_as_prose(self.sentences[n - 1][1])]
        return prose or findable or own

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
        labels = list(labels or (f"Context {_label(i)}" for i in range(count)))
        parts: list[str] = []
        for context_index in range(count):
            numbered = [
                f"[{number}] {sentence}"
                for number, (i, sentence) in enumerate(self.sentences, start=1)
                if i == context_index
            ]
            parts.append(f"{labels[context_index]}:\n" + "\n".join(numbered))
        return "\n\n".join(parts)

    def evidence(
        self, numbers: Sequence[int], answer: str, keep: int = 3
    ) -> tuple[list[str], list[int]]:
        """The quotes of the sentences cited for `answer` and the context each comes from (-1
        for a number naming no sentence): at most `keep` of them (more when a multi-hop answer
        cites more contexts: each cited context keeps one). A small writer often cites every
        sentence it was shown; what supports the answer is then the cited sentences sharing
        most words with it, kept in the contexts' order. Sentences too short to be found as a
        quote are left out while others remain. A number naming no sentence is always kept, so
        the gate refuses the draft and says why."""
        cited = list(dict.fromkeys(numbers))
        valid = [n for n in cited if 1 <= n <= len(self.sentences)]
        invalid = [n for n in cited if n not in valid]
        valid = [n for n in valid if n in self.findable] or valid
        if len(valid) > keep:
            wanted = _words(answer)
            overlap = {n: len(_words(self.sentences[n - 1][1]) & wanted) for n in valid}
            # the best of each cited context first, then the best of the rest
            ranked = sorted(valid, key=lambda n: (-overlap[n], cited.index(n)))
            chosen: list[int] = []
            for context in dict.fromkeys(self.sentences[n - 1][0] for n in valid):
                chosen.append(next(n for n in ranked if self.sentences[n - 1][0] == context))
            chosen += [n for n in ranked if n not in chosen][: max(0, keep - len(chosen))]
            valid = chosen
        ordered = sorted(valid) + invalid
        sources = [self.sentences[n - 1][0] if n in valid else -1 for n in ordered]
        return self.quotes(ordered), sources

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


__all__ = ["NumberedContexts", "reads_as_prose", "unwrap"]
