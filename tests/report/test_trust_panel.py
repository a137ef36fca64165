"""The report shows a judged metric's reliability card beside its scores (#42, 1): for a run
directory (whose run.json records each metric's parameters, prompts and judge), the headline of the
shipped card that matches, or that agreement with people is unmeasured; nothing for a metric without
a judge or a results file that does not say which judge scored it."""

from __future__ import annotations

import json
from pathlib import Path

from assay.benchmark.cards import card_for_spec, load_cards
from assay.engine.checkpoint import RunDirectory
from assay.metrics.registry import create_metric
from assay.report import build_report
from assay.schema.outcome import Cell, Ok
from tests.report.test_escaping import visible_text


def _run_dir(path: Path, specs: list[dict]) -> Path:
    directory = RunDirectory(path)
    directory.open(run_fingerprint="test", description={"n_rows": 2, "metrics": specs})
    for row in range(2):
        for spec in specs:
            directory.append(Cell(row=row, metric=spec["name"], outcome=Ok(value=0.5 * row)))
    directory.close()
    return path


def _faithfulness_judged_by(judge: dict) -> dict:
    return {**create_metric("faithfulness").spec(), "llm": judge}


def test_a_run_judged_by_a_measured_judge_shows_its_card(tmp_path):
    [card] = [c for c in load_cards() if c.metric == "faithfulness"]
    spec = _faithfulness_judged_by(card.judge)
    assert card_for_spec(spec) == card  # the spec a run records matches the shipped card
    bleu = create_metric("bleu_score").spec()
    page = visible_text(build_report([_run_dir(tmp_path / "run", [spec, bleu])]))
    assert f"card: {card.headline()}" in page
    assert page.count("card: ") == 1  # BLEU has no judge, so no card line


def test_an_unmeasured_judge_or_configuration_says_so(tmp_path):
    other_judge = _faithfulness_judged_by({"provider": "openai", "model": "gpt-4o-mini"})
    assert card_for_spec(other_judge) is None
    [card] = [c for c in load_cards() if c.metric == "faithfulness"]
    changed = _faithfulness_judged_by(card.judge)
    changed["params"] = {**changed["params"], "statements_per_call": 1}
    assert card_for_spec(changed) is None  # a changed parameter is another configuration
    first = _run_dir(tmp_path / "a", [other_judge])
    second = _run_dir(tmp_path / "b", [changed])
    page = visible_text(build_report([first, second]))
    assert "card: a: faithfulness with gpt-4o-mini: agreement with people unmeasured" in page
    assert "card: b: faithfulness with qwen2.5-coder-1.5b" in page and "unmeasured" in page


def test_a_results_file_names_no_judge_and_shows_no_card(tmp_path):
    results = tmp_path / "results.jsonl"
    results.write_text(
        json.dumps({"id": "r0", "metrics": {"faithfulness": {"status": "ok", "value": 1.0}}}) + "\n"
    )
    assert "card: " not in visible_text(build_report([results]))
