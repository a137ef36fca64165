"""Text handling shared by metrics: sentence splitting that works beyond English.

pysbd does the splitting, but its cost grows with the square of what it is given (400 KB on one
line took minutes), so it only ever sees bounded segments:

- each line on its own. pysbd ends a sentence at a line break anyway; apart, one paragraph's
  numbers can no longer make pysbd read another's "Table 2." as a list item.
- a line longer than `MAX_SEGMENT_CHARS` a window at a time, each window starting at a sentence
  pysbd found well inside the one before.
- a sentence longer than the bound is cut near it: after sentence punctuation, else at
  whitespace, else hard.

So splitting is linear in the text's length. Async callers use `asplit_sentences`, which moves a
large text off the event loop.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterator
from typing import Any

import anyio.to_thread

# pysbd never sees more characters than this at once, and no sentence is longer.
MAX_SEGMENT_CHARS = 2000
# When a window is cut inside a line, sentences in its last this-many characters are segmented
# again at the start of the next window, so every boundary kept was decided with that much text after it.
_LOOKAHEAD_CHARS = 200
# Texts longer than this are split in a worker thread by `asplit_sentences`.
OFF_LOOP_CHARS = 20_000

_CLOSERS = '”’」』）》】")'
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_SPACE = re.compile(r"\s+")
# Where to cut a sentence longer than the bound: after sentence punctuation (and any closers) and
# the space after it; Chinese punctuation needs no space.
_STRONG_CUT = re.compile(
    r"[.!?…]+[" + re.escape(_CLOSERS) + r"]*\s+|[。！？；]+[" + re.escape(_CLOSERS) + r"]*\s*"
)


def guess_language(text: str) -> str:
    """'zh' when the text is mostly CJK characters, else 'en' (enough to pick a splitter)."""
    letters = len(text) - sum(map(len, _SPACE.findall(text)))
    if not letters:
        return "en"
    cjk = len(_CJK.findall(text))
    return "zh" if cjk / letters > 0.3 else "en"


_per_thread = threading.local()


def _segmenter(language: str) -> Any:  # a pysbd.Segmenter (pysbd ships no types)
    """This thread's pysbd segmenter for `language`. One per thread: `Segmenter.segment` keeps
    the text it is working on in an attribute, so two threads sharing one (a large text split
    off the loop while the loop splits a small one) would read each other's text."""
    segmenters = getattr(_per_thread, "segmenters", None)
    if segmenters is None:
        segmenters = _per_thread.segmenters = {}
    segmenter = segmenters.get(language)
    if segmenter is None:
        import pysbd  # imported on first use: it compiles many patterns

        segmenter = segmenters[language] = pysbd.Segmenter(language=language, clean=False)
    return segmenter


# Texts up to this length are remembered: one run splits the same response or reference for
# several metrics (faithfulness, factual correctness, context recall), and pysbd costs about
# 1.5 ms per short answer. Bounded in entries and in length, so the memory stays small.
MEMO_CHARS = 4_000
MEMO_ENTRIES = 4_096
# Longer texts (retrieved documents) get a few places of their own: a document shared by the rows
# of a pair, or a row scored again and again (`fit_cascade` routes each row under many bands),
# would otherwise be split anew each time (pysbd takes tens of milliseconds per document). At most
# LONG_MEMO_ENTRIES * LONG_MEMO_CHARS characters, with their sentences, are kept.
LONG_MEMO_CHARS = 100_000
LONG_MEMO_ENTRIES = 32


def split_sentences(text: str, language: str | None = None) -> list[str]:
    """Sentences of `text`, stripped; pieces without a letter or digit dropped. Abbreviations and
    decimals survive; a line break always ends a sentence; no sentence is longer than
    `MAX_SEGMENT_CHARS`."""
    text = text.strip()
    if not text:
        return []
    if len(text) <= MEMO_CHARS:
        return list(_split_remembered(text, language))
    if len(text) <= LONG_MEMO_CHARS:
        return list(_split_long_remembered(text, language))
    return _split(text, language)


def _split_kept(text: str, language: str | None) -> tuple[str, ...]:
    return tuple(_split(text, language))  # a tuple: a remembered split cannot be changed


_split_remembered = functools.lru_cache(maxsize=MEMO_ENTRIES)(_split_kept)
_split_long_remembered = functools.lru_cache(maxsize=LONG_MEMO_ENTRIES)(_split_kept)


def _split(text: str, language: str | None) -> list[str]:
    language = language or guess_language(text)
    sentences: list[str] = []
    for piece in _pieces(_segmenter(language), text):
        piece = piece.strip()
        # pysbd can cut a Chinese sentence before its closing quote or bracket; put it back
        # (unless that would make the sentence longer than the bound).
        while (
            piece and piece[0] in _CLOSERS and sentences and len(sentences[-1]) < MAX_SEGMENT_CHARS
        ):
            sentences[-1] += piece[0]
            piece = piece[1:].strip()
        # A piece with no letter or digit ('. . . .', '---') states nothing: as a "statement" it
        # would be judged, and padding a response with dots would change its faithfulness.
        if any(ch.isalnum() for ch in piece):
            sentences.append(piece)
    return sentences


async def asplit_sentences(text: str, language: str | None = None) -> list[str]:
    """`split_sentences` for async code: a text longer than `OFF_LOOP_CHARS` is split in a worker
    thread, so the event loop (and the engine's per-cell timeout) keeps running; a cancelled caller
    returns at once and leaves the thread to finish on its own."""
    if len(text) <= OFF_LOOP_CHARS:
        return split_sentences(text, language)
    return await anyio.to_thread.run_sync(split_sentences, text, language, abandon_on_cancel=True)


def _segment(segmenter: Any, text: str) -> list[str]:
    """pysbd's sentences of `text`, as `Segmenter.segment` finds them but without its last step:
    with clean=False, `segment` locates every sentence in the text again with a regular expression
    built for that sentence (compiled each time, a third of the split's cost) only to add back
    the whitespace around it, which `_split` strips anyway. The same sentences on 1,621 texts
    of the meta-evaluation sets, English and Chinese."""
    sentences: list[str] = segmenter.processor(text).process() if text else []
    return sentences


def _pieces(segmenter: Any, text: str) -> Iterator[str]:
    """pysbd's pieces of each line of `text`, asking it about at most `MAX_SEGMENT_CHARS` characters
    at a time."""
    for line in text.split("\n"):
        start, end = 0, len(line)
        while end - start > MAX_SEGMENT_CHARS:
            window = line[start : start + MAX_SEGMENT_CHARS]
            pieces = _segment(segmenter, window)
            kept = _kept(window, pieces)
            if kept:
                yield from pieces[: kept[0]]
                start += kept[1]
            else:  # one sentence longer than the bound
                cut = _cut_point(window)
                yield window[:cut]
                start += cut
        if line[start:].strip():
            yield from _segment(segmenter, line[start:])


def _kept(window: str, pieces: list[str]) -> tuple[int, int] | None:
    """How many of the window's pieces to keep, and where in the window they end: all but those in
    its last `_LOOKAHEAD_CHARS` (the last piece is cut off by the window's end), at least one. None
    when pysbd found no sentence boundary, or its pieces cannot be found in the window."""
    if len(pieces) < 2:
        return None
    count, tail = len(pieces) - 1, len(pieces[-1])
    while count > 1 and tail < _LOOKAHEAD_CHARS:
        count -= 1
        tail += len(pieces[count])
    position = 0
    for piece in pieces[:count]:
        found = window.find(piece, position)
        if found < 0:
            return None
        position = found + len(piece)
    return (count, position) if position > 0 else None


def _cut_point(window: str) -> int:
    """Where to cut a sentence that fills the whole window, in its second half: after sentence
    punctuation, else after whitespace, else at the window's end."""
    half = len(window) // 2
    for pattern in (_STRONG_CUT, _SPACE):
        matches = list(pattern.finditer(window, half))
        if matches and matches[-1].end() > half:
            return matches[-1].end()
    return len(window)


__all__ = [
    "MAX_SEGMENT_CHARS",
    "OFF_LOOP_CHARS",
    "asplit_sentences",
    "guess_language",
    "split_sentences",
]
