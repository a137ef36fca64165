"""Measured figures live in `benchmarks/results/`, and the docs point to them instead of copying
them: a timing or a date copied into prose goes stale as soon as the code or the machine changes.

Two checks: every `benchmarks/results/...` file the README or a docs page names exists (a `*` in the
name must match at least one file), and no docs page states a machine timing or a date in its prose
(code blocks and inline code are left alone, and so are settings such as a timeout of 600 s per
cell: a condition such as `created_at > '2026-01-31'` is
syntax, not a measurement). The README may keep one-line claims, each with its link to the result.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.docs.blocks import ROOT, pages

RESULTS = re.compile(r"benchmarks/results/[\w.*{},/-]+")
TIMING = re.compile(
    r"\b20\d\d-\d\d-\d\d\b"  # a date
    r"|\d\s?s/item"  # seconds per item
    r"|\d(?:[.,]\d+)?\s?µs\b"  # microseconds
    r"|\d(?:[.,]\d+)?\s?(?:s|seconds?|minutes?)\s(?:per|a|an|each)\s(?:sample|item|row)\b"
    r"|\d(?:\.\d+)?\s?(?:×|x)\s(?:faster|slower)"
)
FENCE = re.compile(r"^[ \t]*```.*?^[ \t]*```", re.MULTILINE | re.DOTALL)
INLINE = re.compile(r"`[^`\n]*`")
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def prose(text: str, *, inline: bool = False) -> str:
    """The page without fenced blocks and HTML comments, and without inline code unless `inline`
    (line numbers kept)."""
    for pattern in (FENCE, COMMENT) if inline else (FENCE, COMMENT, INLINE):
        text = pattern.sub(_blank, text)
    return text


def test_every_named_result_file_exists():
    missing = []
    for page in pages():
        for name in RESULTS.findall(prose(page.read_text(encoding="utf-8"), inline=True)):
            name = name.rstrip(".,)")
            if name.endswith("/"):
                continue
            expanded = re.sub(r"\{([^}]*)\}", lambda m: m.group(1).split(",")[0], name)
            if not list(ROOT.glob(expanded)):
                missing.append(f"{page.relative_to(ROOT)}: {name}")
    assert missing == []


def test_docs_prose_copies_no_timing_or_date():
    found = []
    for page in pages():
        lines = prose(page.read_text(encoding="utf-8")).splitlines()
        for number, line in enumerate(lines, 1):
            if not TIMING.search(line):
                continue
            if page.name == "README.md" and page.parent == ROOT and "benchmarks/results/" in line:
                continue  # a one-line claim, with its link
            found.append(f"{page.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == [], "\n".join(found)


def test_the_guard_sees_what_it_should():
    assert TIMING.search("about 13 µs per call") and TIMING.search("1.2 s/item")
    assert TIMING.search("6.5 s per sample") and TIMING.search("measured on 2026-12-05")
    assert not TIMING.search("a timeout of 600 s per cell") and not TIMING.search("in 3 calls")
    assert prose("see `created_at > '2026-01-31'`").strip() == "see"
    assert Path(__file__).name in {p.name for p in (ROOT / "tests" / "docs").iterdir()}
