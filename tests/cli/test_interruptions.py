"""`assay evaluate` ends soon after its work is over or abandoned (issue #45, items 5 and 7).

A cell that times out abandons its computation: the process must not then wait for it at exit.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from tests.cli.test_cli import assay


def _words(seed: int, characters: int) -> str:
    """About `characters` characters of words drawn from a few thousand (BLEU's n-gram counting
    on it takes tens of seconds)."""
    rng = random.Random(seed)
    vocabulary = [
        "".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 8))) for _ in range(5000)
    ]
    return " ".join(rng.choices(vocabulary, k=characters // 6))


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_timed_out_cell_on_a_5_mb_text_does_not_hold_the_process(tmp_path: Path):
    data = tmp_path / "big.jsonl"
    row = {"user_input": "q", "response": _words(1, 5_000_000), "reference": _words(2, 5_000_000)}
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    began = time.monotonic()
    done = assay("evaluate", str(data), "-m", "bleu_score", "--timeout", "1", "--no-progress")
    elapsed = time.monotonic() - began
    assert done.returncode == 1, done.stderr  # nothing scored: the one cell timed out
    assert "Timeout: no result within 1 s" in done.stdout
    # Start-up, reading 10 MB and the 1 s timeout take a few seconds; the abandoned BLEU
    # computation took 20 s more, and the process waited for it before exiting.
    assert elapsed < 8, f"the process took {elapsed:.1f} s to exit"
