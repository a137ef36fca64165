"""How `blocks.py` reads a page: which fences are Python blocks, and which comment belongs to which
block (a directive applies to the block right after it, and only to that one)."""

from __future__ import annotations

import pytest

from tests.docs.blocks import DirectiveError, blocks_of

PAGE = """# A page

<!-- docs-test: skip — needs a hosted model -->
```python
hosted()
```

Prose between.

<!-- docs-test: setup
rows = [1, 2]
-->

<!-- docs-test: slow -->
```py
total = sum(rows)
```

```bash
echo not python
```

1. In a list:

    ```python
    x = 1
    ```

<!-- docs-test: tested-by tests/test_docs_site.py -->
```python
y = 2
```
"""


def test_blocks_and_their_directives(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    blocks = blocks_of(page)
    assert [b.code for b in blocks] == ["hosted()\n", "total = sum(rows)\n", "x = 1\n", "y = 2\n"]
    skipped, summed, listed, elsewhere = blocks
    assert skipped.skip == "needs a hosted model" and skipped.line == 5
    assert summed.setup == ["rows = [1, 2]"] and summed.slow and summed.skip is None
    assert listed.setup == [] and listed.runs_here
    assert elsewhere.tested_by == "tests/test_docs_site.py" and not elsewhere.runs_here


@pytest.mark.parametrize(
    "comment", ["<!-- docs-test: skip -->", "<!-- docs-test: skipp — typo -->"]
)
def test_a_skip_without_reason_or_an_unknown_directive_is_refused(tmp_path, comment):
    page = tmp_path / "page.md"
    page.write_text(f"{comment}\n```python\npass\n```\n", encoding="utf-8")
    with pytest.raises(DirectiveError):
        blocks_of(page)


def test_a_missing_module_turns_requires_into_a_skip(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- docs-test: requires no_such_module_here -->\n```python\npass\n```\n",
        encoding="utf-8",
    )
    (block,) = blocks_of(page)
    assert block.skip == "needs no_such_module_here, which is not installed here"
