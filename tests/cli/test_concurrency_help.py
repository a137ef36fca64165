"""`assay evaluate --help` states the default concurrency the code really uses (issue #45, item 5).

The help once said 16 while a run started about 150 cells at once. The numbers here are read from
the code that decides (`engine.run._concurrency`, `models.limits.Limits`), so changing a default
without its help text fails this test."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from assay.cli.app import app
from assay.engine.run import _concurrency
from assay.metrics.registry import create_metric
from assay.models import LLM, ScriptedProvider
from assay.models.limits import Limits


def concurrency_help() -> str:
    """The --concurrency entry of the help, in one line (the box and the wrapping removed)."""
    shown = CliRunner().invoke(app, ["evaluate", "--help"], env={"COLUMNS": "120"})
    assert shown.exit_code == 0, shown.output
    flat = " ".join(re.sub(r"[│╭╮╰╯─]", " ", shown.output).split())
    start = flat.index("--concurrency")
    return flat[start : flat.index("--", start + len("--concurrency"))]


def judged_by(limits: Limits) -> list:
    metric = create_metric("faithfulness")
    metric.llm = LLM(ScriptedProvider([]), limits=limits)
    return [metric]


def test_the_help_states_the_default_the_run_uses():
    text = concurrency_help()
    cap = _concurrency(None, [])  # no model: the pool's own bound
    start = Limits().initial_concurrency
    assert f"at most {cap}" in text, text
    assert f"start at {start} at once" in text, text
    assert "twice the judge's ceiling" in text, text
    # the rule it states holds: twice a judge's ceiling, capped; a remote judge's default
    # ceiling (an OpenAI-compatible server) gives the cap itself
    assert _concurrency(None, judged_by(Limits(max_concurrency=6))) == 12
    assert _concurrency(None, judged_by(Limits())) == min(cap, 2 * Limits().max_concurrency)
    # a judge that starts at the stated number still grows past it: the run's default pool is
    # not the starting number (what the help got wrong before)
    assert _concurrency(None, judged_by(Limits())) > start
