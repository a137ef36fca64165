"""Every Python block on docs/coming-from-ragas.md runs as written against the loopback server, and
a `print(...)  # text` line prints that text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.compat.docs_corpus.test_docs_corpus import (  # noqa: F401 - fixtures
    example_env,
    run_example,
    server,
)

PAGE = Path(__file__).resolve().parents[2] / "docs" / "coming-from-ragas.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


def test_the_page_has_its_examples():
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_block_runs_as_written(index, example_env, server, tmp_path, capsys):  # noqa: F811
    block = BLOCKS[index]
    path = tmp_path / f"block_{index}.py"
    path.write_text(block, encoding="utf-8")
    run_example(path, example_env)
    printed = capsys.readouterr().out
    for expected in re.findall(r"^\s*print\(.*\)\s+#\s*(.+)$", block, re.M):
        assert expected.strip() in printed, f"block {index} printed {printed!r}"
    if "llm_factory" in block:
        assert server.count > 0, "the block builds a model but never called it"
