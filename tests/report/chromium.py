"""Render a page in headless Debian Chromium and read what is on it."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

INSTALL_HINT = (
    "chromium is required for the report tests: "
    "apt-get update -qq && apt-get install -y -qq chromium"
)


CANDIDATES = ("/usr/bin/chromium",)


def chromium() -> str:
    """The Chromium binary; missing, the test fails (never skips) with the install line."""
    found = shutil.which("chromium") or next((c for c in CANDIDATES if Path(c).is_file()), None)
    if not found:
        pytest.fail(INSTALL_HINT)
    return found


def dump_dom(page: Path, profile: Path) -> str:
    """The DOM after the page's scripts ran, serialised by Chromium (no network: file:// only)."""
    done = subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "<body" in done.stdout, done.stderr[-2000:]
    return done.stdout


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag, dict(attrs)))


def tags_of(html: str) -> list[tuple[str, dict[str, str | None]]]:
    """Every start tag of the page with its attributes."""
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def visible_text(dom: str) -> str:
    """The page's text as a reader sees it (entities decoded, whitespace collapsed)."""
    parser = _Text()
    parser.feed(dom)
    return " ".join(" ".join(parser.parts).split())


class _ElementText(HTMLParser):
    """The text of every element matching a tag and (optionally) a class, nested ones included."""

    VOID = frozenset(
        {
            "area",
            "base",
            "br",
            "col",
            "embed",
            "hr",
            "img",
            "input",
            "link",
            "meta",
            "source",
            "wbr",
        }
    )

    def __init__(self, tag: str, css: str | None) -> None:
        super().__init__()
        self.tag, self.css = tag, css
        self.open: list[list[str]] = []  # one buffer per matching element still open
        self.depths: list[int] = []
        self.depth = 0
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.VOID:
            return
        self.depth += 1
        classes = (dict(attrs).get("class") or "").split()
        if tag == self.tag and (self.css is None or self.css in classes):
            self.open.append([])
            self.depths.append(self.depth)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID:
            return
        if self.depths and self.depths[-1] == self.depth:
            self.depths.pop()
            self.found.append("".join(self.open.pop()))
        self.depth -= 1

    def handle_data(self, data: str) -> None:
        for buffer in self.open:
            buffer.append(data)


def element_texts(html: str, tag: str, css: str | None = None) -> list[str]:
    """The text content of each `tag` element (with class `css`), entities decoded."""
    parser = _ElementText(tag, css)
    parser.feed(html)
    return parser.found
