"""The integration pages' examples run: every ```python block of a page is executed, in order, in
one namespace per page (```py blocks are shown, not run: they need an account or a server)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "integrations"
PAGES = ["langgraph.md", "swarm.md", "openai-agents.md", "amazon-bedrock.md", "ag-ui.md"]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("page", PAGES)
def test_the_page_examples_run(page):
    blocks = BLOCK.findall((DOCS / page).read_text(encoding="utf-8"))
    assert blocks, f"{page} has no runnable example"
    namespace: dict = {"__name__": f"docs_{page}"}
    for number, block in enumerate(blocks):
        exec(compile(block, f"{page} block {number + 1}", "exec"), namespace)
