"""The Python blocks of the documentation, and the directives that say how each one is tested.

A page's blocks are every fenced block tagged `python` (or `py`) in README.md and docs/**/*.md,
except the API reference pages (generated from docstrings, no code of their own). A block runs as
written unless an HTML comment right before its fence (only blank lines between) says otherwise;
the comment is invisible on the site and visible to whoever edits the block:

    <!-- docs-test: skip — WHY -->              not run (WHY is required); counts against the floor
    <!-- docs-test: tested-by tests/PATH.py --> run by that test, which asserts more than "it
                                                runs"; not run again here
    <!-- docs-test: setup
    CODE
    -->                                         CODE runs just before the block, in its namespace:
                                                stand-ins for what the reader brings (their app,
                                                their data file)
    <!-- docs-test: requires MODULE -->         run only where MODULE (an optional extra's
                                                package) is installed; skipped otherwise
    <!-- docs-test: slow -->                    the page's run is marked slow

Several comments may stand before one block. The page's blocks that run, run in order in one
namespace, like cells of one notebook (see `run_page.py`).
"""

from __future__ import annotations

import importlib.util
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LANGUAGES = ("python", "py")

_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


class DirectiveError(ValueError):
    """A docs-test comment that says nothing this module knows."""


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the block's first code line in the page
    lang: str
    code: str
    skip: str | None = None  # why it is not run
    tested_by: str | None = None  # the test that runs it
    setup: list[str] = field(default_factory=list)  # hidden code run before it
    slow: bool = False

    @property
    def runs_here(self) -> bool:
        return self.skip is None and self.tested_by is None

    @property
    def where(self) -> str:
        page = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page
        return f"{page.as_posix()}:{self.line}"


def pages() -> list[Path]:
    """README.md and every docs page but the generated API reference, in a stable order."""
    docs = sorted(
        p for p in (ROOT / "docs").rglob("*.md") if "reference" not in p.relative_to(ROOT).parts
    )
    return [ROOT / "README.md", *docs]


def _directives(before: str, block: Block) -> None:
    """Fill `block` from the docs-test comments that end right before its fence."""
    text = before.rstrip()
    while text.endswith("-->"):
        start = text.rfind("<!--")
        comment = text[start + 4 : -3].strip()
        if start < 0 or not comment.startswith("docs-test:"):
            return
        _apply(comment[len("docs-test:") :], block)
        text = text[:start].rstrip()


def _apply(text: str, block: Block) -> None:
    head, _, rest = text.strip().partition("\n")
    head = head.strip()
    word, _, argument = head.partition(" ")
    argument = argument.strip()
    if word == "skip":
        reason = argument.lstrip("—–-: ").strip()
        if not reason:
            raise DirectiveError(f"{block.where}: a skip says why")
        block.skip = reason
    elif word == "tested-by":
        if not argument:
            raise DirectiveError(f"{block.where}: tested-by names the test file")
        block.tested_by = argument
    elif word == "setup":
        code = textwrap.dedent(rest if not argument else f"{argument}\n{rest}")
        block.setup.insert(0, code)
    elif word == "requires":
        if not argument:
            raise DirectiveError(f"{block.where}: requires names a module")
        if importlib.util.find_spec(argument) is None:
            block.skip = f"needs {argument}, which is not installed here"
    elif word == "slow":
        block.slow = True
    else:
        raise DirectiveError(f"{block.where}: unknown docs-test directive {head!r}")


def blocks_of(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        if match["lang"] not in LANGUAGES:
            continue
        line = text.count("\n", 0, match.start("body")) + 1
        indent = len(match["indent"])
        code = "".join(
            row[indent:] if row[:indent].strip() == "" else row
            for row in match["body"].splitlines(keepends=True)
        )
        block = Block(page=page, line=line, lang=match["lang"], code=code)
        _directives(text[: match.start()], block)
        found.append(block)
    return found


def all_blocks() -> list[Block]:
    return [block for page in pages() for block in blocks_of(page)]
