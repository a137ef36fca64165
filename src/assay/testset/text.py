"""Classical text processing for the LLM-free knowledge graph: sections, chunks, token counts,
quotes (keyphrases, entities, summaries and the language are in `terms.py`).

- Sections: Markdown ATX (`## Title`) and Setext headings, and reStructuredText titles (a line
  underlined, optionally overlined, with one repeated punctuation character). Lines are scanned in
  order, so a heading is always found after the previous one (never by searching the whole text
  for its words, which gives out-of-order or empty chunks).
- Chunks: sections merged while shorter than `min_tokens` and split at paragraph, then sentence
  boundaries when longer than `max_tokens`. Every chunk is an exact slice of the document, so a
  quote taken from it is a substring of the document too.
Token counts are approximate (words and punctuation marks; one per CJK character): they only
size chunks and bins, they never price anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|\w+|[^\w\s]")
_ATX = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
UNDERLINE = re.compile(r"^([=\-~^\"'`*+#:.])\1{2,}\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def count_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


@dataclass(frozen=True)
class Section:
    """A slice `[start, end)` of a document under a heading path (outermost first)."""

    headings: tuple[str, ...]
    start: int
    end: int


def split_sections(text: str) -> list[Section]:
    """The document's sections in reading order; text before the first heading is a section too."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    marks: list[tuple[int, int, str]] = []  # (line index where the heading starts, level, title)
    underline_levels: list[str] = []
    in_fence = False
    index = 0
    while index < len(lines):
        line = lines[index].rstrip("\r\n")
        if _FENCE.match(line):
            in_fence = not in_fence
        if in_fence:
            index += 1
            continue
        atx = _ATX.match(line)
        nxt = lines[index + 1].rstrip("\r\n") if index + 1 < len(lines) else ""
        if atx and not line.startswith("#!"):
            marks.append((index, len(atx.group(1)), atx.group(2).strip()))
        elif (
            UNDERLINE.match(line)
            and index + 2 < len(lines)
            and nxt.strip()
            and lines[index + 2].rstrip("\r\n") == line
        ):  # an overlined title: === / Title / ===
            level = _level(underline_levels, "o" + line[0])
            marks.append((index, level, nxt.strip()))
            index += 3
            continue
        elif (
            line.strip()
            and not UNDERLINE.match(line)
            and UNDERLINE.match(nxt)
            and len(nxt.strip()) >= max(3, len(line.strip()) - 2)
        ):
            level = _level(underline_levels, nxt[0])
            marks.append((index, level, line.strip()))
            index += 2
            continue
        index += 1
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    if not marks or marks[0][0] > 0:
        first_end = offsets[marks[0][0]] if marks else len(text)
        if text[:first_end].strip():
            sections.append(Section((), 0, first_end))
    for position, (line_index, level, title) in enumerate(marks):
        path = [(lvl, t) for lvl, t in path if lvl < level] + [(level, title)]
        end = offsets[marks[position + 1][0]] if position + 1 < len(marks) else len(text)
        sections.append(Section(tuple(t for _, t in path), offsets[line_index], end))
    return sections


def _level(seen: list[str], style: str) -> int:
    # reStructuredText ranks heading styles by the order in which they first appear.
    if style not in seen:
        seen.append(style)
    return seen.index(style) + 1


@dataclass(frozen=True)
class Piece:
    """A chunk of a document: its exact text and where it sits."""

    text: str
    start: int
    end: int
    headings: tuple[str, ...]


def sections_at(text: str, headlines: list[str]) -> list[Section]:
    """Sections starting at the line of each headline, each searched after the previous one
    (a headline not found after it is skipped)."""
    starts: list[tuple[int, str]] = []
    position = 0
    for headline in headlines:
        at = _heading_position(text, headline.strip(), position) if headline.strip() else -1
        if at < 0:
            continue
        line_start = text.rfind("\n", 0, at) + 1
        if not starts or line_start > starts[-1][0]:
            starts.append((line_start, headline.strip()))
        position = at + len(headline)
    sections = [Section((), 0, starts[0][0])] if starts and text[: starts[0][0]].strip() else []
    for index, (start, title) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(text)
        sections.append(Section((title,), start, end))
    return sections


def _heading_position(text: str, headline: str, after: int) -> int:
    """Where `headline` occurs after `after`, preferring a line that is just the heading
    (an earlier mention inside a sentence is not the section start)."""
    first = text.find(headline, after)
    at = first
    while at >= 0:
        line_start = text.rfind("\n", 0, at) + 1
        line_end = text.find("\n", at)
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        if line.strip().lstrip("#").strip() == headline:
            return at
        at = text.find(headline, at + 1)
    return first


def chunk_document(
    text: str,
    *,
    min_tokens: int = 100,
    max_tokens: int = 500,
    sections: list[Section] | None = None,
) -> list[Piece]:
    """Heading-aware chunks: small sections merged, large ones split at paragraphs/sentences.
    A document with no headings, or shorter than `min_tokens`, is cut by size alone.
    `sections` replaces the headings found by `split_sections` (e.g. headlines an LLM found)."""
    if min_tokens < 1 or max_tokens < min_tokens:
        raise ValueError(
            f"need 1 <= min_tokens <= max_tokens, got min_tokens={min_tokens}, max_tokens={max_tokens}"
        )
    spans: list[tuple[int, int, tuple[str, ...]]] = []
    for section in sections if sections is not None else split_sections(text):
        for start, end in _bounded(text, section.start, section.end, max_tokens):
            spans.append((start, end, section.headings))
    merged: list[list] = []
    for start, end, headings in spans:
        if (
            merged
            and count_tokens(text[merged[-1][0] : merged[-1][1]]) < min_tokens
            and count_tokens(text[merged[-1][0] : end]) <= max_tokens
        ):
            merged[-1][1] = end
            continue
        merged.append([start, end, headings])
    # A piece still below min_tokens joins a neighbour when the two fit (the next one first).
    index = 0
    while index < len(merged) and len(merged) > 1:
        start, end, _ = merged[index]
        if count_tokens(text[start:end]) >= min_tokens:
            index += 1
            continue
        if (
            index + 1 < len(merged)
            and count_tokens(text[start : merged[index + 1][1]]) <= max_tokens
        ):
            merged[index + 1][0] = start
            merged[index + 1][2] = merged[index][2] or merged[index + 1][2]
            merged.pop(index)
        elif index > 0 and count_tokens(text[merged[index - 1][0] : end]) <= max_tokens:
            merged[index - 1][1] = end
            merged.pop(index)
        else:
            index += 1
    pieces = []
    for start, end, headings in merged:
        # trim surrounding whitespace but keep the slice exact
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end:
            pieces.append(Piece(text[start:end], start, end, headings))
    return pieces


def _bounded(text: str, start: int, end: int, max_tokens: int) -> list[tuple[int, int]]:
    """Cut `text[start:end]` into spans of at most `max_tokens`: at blank lines, then sentence
    ends, then line breaks, then whitespace. Sentence ends come before line breaks because prose
    is hard-wrapped: a cut at a line break would start the next chunk mid-sentence."""
    if count_tokens(text[start:end]) <= max_tokens:
        return [(start, end)]
    for pattern in (r"\n\s*\n", r"(?<=[.!?。！？])\s+", r"\n", r"\s+"):
        cuts = [m.end() for m in re.finditer(pattern, text[start:end])]
        if not cuts:
            continue
        spans: list[tuple[int, int]] = []
        piece_start = start
        last_ok = None
        for cut in (start + c for c in cuts):
            if count_tokens(text[piece_start:cut]) > max_tokens and last_ok is not None:
                spans.append((piece_start, last_ok))
                piece_start = last_ok
            last_ok = cut
        spans.append((piece_start, end))
        if len(spans) > 1:
            return [span for s in spans for span in _bounded(text, s[0], s[1], max_tokens)]
    # one unbreakable run of characters: cut by tokens
    tokens = list(_TOKEN.finditer(text, start, end))
    return [
        (tokens[i].start(), tokens[min(i + max_tokens, len(tokens)) - 1].end())
        for i in range(0, len(tokens), max_tokens)
    ]


def normalize_space(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def quote_in(quote: str, contexts: list[str]) -> int | None:
    """The index of the first context holding `quote` verbatim (whitespace runs compared as one
    space, surrounding quotation marks ignored); None when none does."""
    found = locate_quote(quote, contexts, min_similarity=100.0)
    return None if found is None else found[0]


# A small writer copies a sentence with slips (a dropped backquote, "::" for ":", a changed
# article). Quotes at least this long may differ that little from the context; the evidence kept
# is then the context's own span, so what a sample cites is always verbatim.
FUZZY_MIN_CHARS = 24


def locate_quote(
    quote: str, contexts: list[str], *, min_similarity: float = 95.0
) -> tuple[int, str, float] | None:
    """(context index, the context's verbatim span, similarity 0-100) for `quote`: an exact match
    (whitespace runs as one space, surrounding quotation marks ignored) first, else the best
    near-verbatim span (rapidfuzz alignment, at least `min_similarity`) for a quote of at least
    FUZZY_MIN_CHARS; None when no context holds it."""
    wanted = normalize_space(quote).strip("\"'“”‘’「」")
    if len(wanted) < 3:
        return None
    spaced = [normalize_space(context) for context in contexts]
    for index, context in enumerate(spaced):
        if wanted in context:
            return index, wanted, 100.0
    if min_similarity >= 100.0 or len(wanted) < FUZZY_MIN_CHARS:
        return None
    from rapidfuzz import fuzz

    best: tuple[int, str, float] | None = None
    for index, context in enumerate(spaced):
        aligned = fuzz.partial_ratio_alignment(wanted, context, score_cutoff=min_similarity)
        if aligned is None or (best is not None and aligned.score <= best[2]):
            continue
        span = context[aligned.dest_start : aligned.dest_end].strip()
        # the span must be about as long as the quote: a short common part is no evidence
        if len(span) >= 0.9 * len(wanted):
            best = (index, span, aligned.score)
    return best


__all__ = [
    "Piece",
    "Section",
    "chunk_document",
    "count_tokens",
    "locate_quote",
    "normalize_space",
    "quote_in",
    "sections_at",
    "split_sections",
]
