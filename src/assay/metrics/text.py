"""Text handling shared by metrics: sentence splitting that works beyond English."""

from __future__ import annotations

import functools
import re

_CLOSERS = "”’」』）》】\")"
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def guess_language(text: str) -> str:
    """'zh' when the text is mostly CJK characters, else 'en' (enough to pick a splitter)."""
    letters = [ch for ch in text if not ch.isspace()]
    if not letters:
        return "en"
    cjk = sum(1 for ch in letters if _CJK.match(ch))
    return "zh" if cjk / len(letters) > 0.3 else "en"


@functools.lru_cache(maxsize=8)
def _segmenter(language: str):
    import pysbd  # imported on first use: it compiles many patterns

    return pysbd.Segmenter(language=language, clean=False)


def split_sentences(text: str, language: str | None = None) -> list[str]:
    """Sentences of `text`, stripped, empty ones dropped. Abbreviations and decimals survive."""
    text = text.strip()
    if not text:
        return []
    language = language or guess_language(text)
    sentences: list[str] = []
    for piece in _segmenter(language).segment(text):
        piece = piece.strip()
        # pysbd can cut a Chinese sentence before its closing quote or bracket; put it back.
        while piece and piece[0] in _CLOSERS and sentences:
            sentences[-1] += piece[0]
            piece = piece[1:].strip()
        if piece:
            sentences.append(piece)
    return sentences


__all__ = ["guess_language", "split_sentences"]
