"""A resumed run tells what this invocation sent apart from what the whole run cost (#45, 6).

Against the fake OpenAI server on 127.0.0.1, whose request log is the truth: a first invocation
scores some rows (one cell pays for an answer, fails, and is tried again on resume), the run is cut short by removing
saved cells, and a second invocation finishes it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from rich.console import Console

from assay import evaluate
from assay.engine.progress import print_summary
from assay.models import RetryPolicy, llm_factory
from assay.schema.outcome import MetricResult
from tests.models.fake_openai import FakeOpenAI, ok, serve
from tests.models.judge import JudgeMetric, rows, verdict

FAILING: set[int] = set()


@dataclass(kw_only=True)
class FlakyJudge(JudgeMetric):
    """The judge's answer is paid for, then the cell fails while `FAILING` names its row (kept
    outside the metric, whose settings are part of the run's fingerprint)."""

    async def _ascore(self, *, response: str) -> MetricResult:
        result = await super()._ascore(response=response)
        if int(response.removeprefix("row-")) in FAILING:
            raise ValueError("the answer could not be used")
        return result


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    yield from serve()


def test_a_resumed_run_counts_this_invocation_and_the_whole_run_apart(server, tmp_path: Path):
    server.default = ok(verdict(0.5), usage=(10, 2))
    FAILING.clear()
    FAILING.add(5)
    metric = FlakyJudge()
    llm = llm_factory(
        server.model_string(), cache=False, retry=RetryPolicy(max_attempts=1, initial_wait=0.01)
    )
    run_dir = tmp_path / "run"
    first = evaluate(rows(8), [metric], llm=llm, run_dir=run_dir, show_progress=False)
    assert first.summary("judge").n_error == 1
    first_requests = server.count
    assert first.sent_usage().requests == first.whole_run_usage().requests
    assert first.resumed_cells == 0

    # Cut the run short: keep the first three saved cells and the failed one.
    lines = (run_dir / "cells.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if json.loads(line)["row"] in {0, 1, 2, 5}]
    (run_dir / "cells.jsonl").write_text("".join(kept), encoding="utf-8")

    FAILING.clear()
    server.reset_records()
    second = evaluate(rows(8), [metric], llm=llm, run_dir=run_dir, show_progress=False)
    assert second.summary("judge").n_ok == 8
    assert second.resumed_cells == 3  # rows 0-2; the failed row 5 is tried again
    assert server.count == 5  # rows 3, 4, 5, 6 and 7
    assert second.sent_usage().requests == 5
    assert second.sent_usage().input_tokens == 5 * 10
    saved = [json.loads(line)["usage"]["requests"] for line in kept]
    assert saved == [1, 1, 1, 1]  # the failed cell of row 5 had paid for its answer
    assert second.whole_run_usage().requests == 5 + 4
    # the cells in the result: 3 kept and 5 scored now, the failed attempt no longer among them
    assert second.usage().requests == 8
    assert first_requests == 8

    console = Console(record=True, width=200)
    print_summary(second, console)
    text = console.export_text()
    assert "model calls by this invocation: 5 requests" in text
    assert f"the whole run (3 cells resumed from {run_dir}): 9 requests" in text
