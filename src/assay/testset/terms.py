"""Terms and gists of a text without a model: keyphrases, entities, extractive summaries and the
language.

- Keyphrases: YAKE (statistical, unsupervised, no model to download).
- Entities: capitalised multi-word names, acronyms and code identifiers (`like.this()`), ranked by
  frequency then first appearance.
- Summaries: the sentences whose content words are most frequent in the text (Luhn's method),
  kept in reading order.
- Language: by script (CJK, Cyrillic, Arabic, ...), then for Latin script by counting each
  candidate language's commonest function words.
"""

from __future__ import annotations

import collections
import re

from assay._util.deps import require
from assay.metrics.text import split_sentences
from assay.testset.text import UNDERLINE, count_tokens

_YAKE_CODES = {
    "english": "en",
    "german": "de",
    "french": "fr",
    "spanish": "es",
    "italian": "it",
    "portuguese": "pt",
    "dutch": "nl",
    "russian": "ru",
    "chinese": "zh",
    "japanese": "ja",
}


def keyphrases(text: str, *, max_num: int = 10, language: str = "english") -> list[str]:
    """The `max_num` best YAKE keyphrases (1-3 words), best first."""
    if not text.strip():
        return []
    if language in ("chinese", "japanese"):
        return cjk_keyphrases(text, max_num=max_num)
    yake = require("yake", extra="testset", feature="classical keyphrase extraction")
    extractor = yake.KeywordExtractor(lan=_YAKE_CODES.get(language, "en"), n=3, top=max_num)
    found = [phrase for phrase, _ in extractor.extract_keywords(text)]
    # YAKE can join words across a blank line (a heading and the next paragraph): not a phrase
    return [p for p in found if "\n" not in p and count_tokens(p) <= 8][:max_num]


_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]{2,}")


def cjk_keyphrases(text: str, *, max_num: int = 10) -> list[str]:
    """Keyphrases of Chinese or Japanese text, which has no spaces for YAKE to split words at:
    the 2-4 character strings repeated most often (at least twice), longest first among equals;
    a string inside a longer one that occurs as often is left out."""
    counts: collections.Counter[str] = collections.Counter()
    for run in _CJK_RUN.findall(text):
        for size in (2, 3, 4):
            for start in range(len(run) - size + 1):
                counts[run[start : start + size]] += 1
    repeated = {g: n for g, n in counts.items() if n >= 2}
    kept = [
        g
        for g, n in repeated.items()
        if not any(g != other and g in other and repeated[other] == n for other in repeated)
    ]
    kept.sort(key=lambda g: (-repeated[g] * len(g), -len(g), text.find(g)))
    return kept[:max_num]


_CODE = re.compile(r"``([^`\n]{2,60})``|`([^`\n]{2,60})`")
_NAME = re.compile(
    r"\b(?:[A-Z][\w'-]*[a-z0-9][\w'-]*|[A-Z]{2,}[0-9]*)(?:[ \t]+(?:(?:of|de|the|van|von|der|da|di|du|la|le)[ \t]+)?(?:[A-Z][\w'-]+|[A-Z]{2,}))*"
)
_SENTENCE_START = re.compile(r"(?:^|[.!?:]\s+|\n\s*[-*#>\d.]*\s*)$")


def entities(text: str, *, max_num: int = 15) -> list[str]:
    """Named things by their surface form: code identifiers, capitalised names and acronyms.
    A single capitalised word at the start of a sentence counts only if it also appears elsewhere."""
    counts: collections.Counter[str] = collections.Counter()
    first: dict[str, int] = {}
    for match in _CODE.finditer(text):
        name = (match.group(1) or match.group(2)).strip()
        if name:
            counts[name] += 2  # marked up as code: surely a named thing
            first.setdefault(name, match.start())
    prose = _CODE.sub(" ", text)
    starts: collections.Counter[str] = collections.Counter()
    for match in _NAME.finditer(prose):
        name = match.group(0).strip()
        if len(name) < 2:
            continue
        at_start = bool(_SENTENCE_START.search(prose[: match.start()]))
        if at_start and " " not in name:
            starts[name] += 1
            continue
        counts[name] += 1
        first.setdefault(name, match.start())
    for name, n in starts.items():
        if name in counts:
            counts[name] += n
    ranked = sorted(counts, key=lambda name: (-counts[name], first[name]))
    return ranked[:max_num]


_WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]|[^\W\d_]{3,}")


def extractive_summary(text: str, *, max_sentences: int = 3, max_chars: int = 600) -> str:
    """Luhn-style extract: sentences scored by the mean document frequency of their content words,
    the best ones kept in reading order."""
    flat = re.sub(r"(?<!\n)\n(?!\n)", " ", text)  # paragraph lines joined: sentences, not lines
    sentences = [s for s in split_sentences(flat) if _WORD.search(s) and not UNDERLINE.match(s)]
    if not sentences:
        return text.strip()[:max_chars]
    stop = _stopwords()
    words = [w.lower() for w in _WORD.findall(flat) if w.lower() not in stop]
    freq = collections.Counter(words)

    def score(sentence: str) -> float:
        content = [w.lower() for w in _WORD.findall(sentence) if w.lower() not in stop]
        return sum(freq[w] for w in content) / (len(content) + 3) if content else 0.0

    best = sorted(range(len(sentences)), key=lambda i: (-score(sentences[i]), i))[:max_sentences]
    summary = " ".join(sentences[i] for i in sorted(best))
    return summary[:max_chars]


_FUNCTION_WORDS = {
    "english": "the and of to is in that it for with as are this be on not or",
    "german": "der die und das ist nicht mit den von zu ein eine auch sich dem",
    "french": "le la les et des est une un pour dans que qui pas sur du avec",
    "spanish": "el la los las y de que en un una es por para con no del se",
    "italian": "il la di che e è un una per non con del della sono gli le",
    "portuguese": "o a os as de que e do da em um uma para com não é se",
    "dutch": "de het een en van is dat op te niet met voor zijn er die",
}


def _stopwords() -> set[str]:
    return {w for words in _FUNCTION_WORDS.values() for w in words.split()}


def detect_language(text: str) -> str:
    """The language of a text, as a prompt language name ('english', 'chinese', 'german', ...)."""
    sample = text[:20000]
    letters = [ch for ch in sample if ch.isalpha()]
    if not letters:
        return "english"

    def share(low: int, high: int) -> float:
        return sum(low <= ord(ch) <= high for ch in letters) / len(letters)

    if share(0x3040, 0x30FF) > 0.05:
        return "japanese"
    if share(0xAC00, 0xD7AF) > 0.2:
        return "korean"
    if share(0x3400, 0x9FFF) > 0.2:
        return "chinese"
    if share(0x0400, 0x04FF) > 0.3:
        return "russian"
    if share(0x0600, 0x06FF) > 0.3:
        return "arabic"
    words = collections.Counter(w.lower() for w in re.findall(r"[^\W\d_]+", sample))
    scores = {
        language: sum(words[w] for w in function_words.split())
        for language, function_words in _FUNCTION_WORDS.items()
    }
    best = max(scores, key=lambda language: (scores[language], language == "english"))
    return best if scores[best] > 0 else "english"


__all__ = ["cjk_keyphrases", "detect_language", "entities", "extractive_summary", "keyphrases"]
