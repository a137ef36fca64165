"""`--repeats N` (#42, 2) from the file runner and the command line: the estimate counts every
asking of a judged metric, a run reports its stability under the summary, and a bad N is a
one-line error before any work."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from assay.cli.evaluate import _summary
from assay.engine import FileRunOptions, ModelChoice, estimate_file, evaluate_file
from assay.errors import UsageError
from tests.cli.test_cli import ROWS, assay
from tests.models.fake_openai import FakeOpenAI, dynamic, ok
from tests.models.judge import JudgeMetric, verdict


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    return path


def test_the_estimate_counts_each_asking_of_a_judged_metric(data_file, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with FakeOpenAI() as server:
        models = ModelChoice(llm="openai/gpt-4o-mini", base_url=server.url, cache=False)
        found = {
            n: estimate_file(
                data_file,
                ["exact_match", "coherence"],
                FileRunOptions(models=models, repeats=n, show_progress=False),
            ).estimate
            for n in (1, 3)
        }
        assert server.requests == []
    once, thrice = ({m.name: m for m in found[n].metrics} for n in (1, 3))
    assert thrice["coherence"].calls.requests == 3 * once["coherence"].calls.requests > 0
    assert thrice["coherence"].calls.input_tokens == 3 * once["coherence"].calls.input_tokens
    assert thrice["coherence"].cost == pytest.approx(3 * once["coherence"].cost)
    assert thrice["exact_match"].calls == once["exact_match"].calls  # no judge: asked once
    assert thrice["coherence"].cells == once["coherence"].cells


def test_a_repeated_run_says_how_many_cells_kept_their_decision(tmp_path):
    data = tmp_path / "rows.json"  # not .jsonl: the result is whole, not streamed
    data.write_text(json.dumps([{"response": f"row-{i}"} for i in range(3)]))
    with FakeOpenAI() as server:
        # the third asking of every cell disagrees with the first two
        server.default = dynamic(
            lambda request: ok(verdict(0.2 if request.body.get("seed") == 2 else 0.8))
        )
        models = ModelChoice(llm=server.model_string(), cache=False)
        run = evaluate_file(
            data, [JudgeMetric()], FileRunOptions(models=models, repeats=3, show_progress=False)
        )
        assert len(server.chat_requests) == 9
    shown = io.StringIO()
    _summary(run.result, [JudgeMetric()], None, Console(file=shown, width=200))
    assert "asked again: judge: 0 of 3 cells unanimous (3 flipped)" in shown.getvalue()
    assert run.result.outcome(0, "judge").value == pytest.approx(0.6)


def test_a_bad_number_of_askings_is_refused_before_any_work(data_file):
    with pytest.raises(UsageError, match="repeats must be from 1 to 20, got 21"):
        FileRunOptions(repeats=21)
    done = assay("evaluate", str(data_file), "--metrics", "exact_match", "--repeats", "0")
    assert done.returncode == 2 and "repeats must be from 1 to 20, got 0" in done.stderr
