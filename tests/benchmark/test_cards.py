"""Judge reliability cards are built from benchmark records, never implied, and never borrowed by a
metric whose configuration or judge differs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import assay
from assay.benchmark.cards import (
    CORE_METRICS,
    build_cards,
    configuration,
    judge_card,
    load_cards,
)
from assay.metrics import Faithfulness
from assay.models import LLM
from assay.models.providers.scripted import ScriptedProvider

ROOT = Path(__file__).resolve().parents[2]
LOCAL = {"provider": "local", "model": "judge.gguf", "bytes": 123}


def record(metric: Faithfulness, **changes) -> dict:
    params, prompts = configuration(metric)
    base = {
        "suite": "wikieval",
        "aspect": "faithfulness",
        "split": "test",
        "threshold": None,
        "metric": {"name": metric.name, "version": type(metric).version, "params": params},
        "prompts": [{"id": i, "hash": h} for i, h in prompts.items()],
        "judge": LOCAL,
        "n_scored": 50,
        "date": "2026-12-01T10:00:00+00:00",
        "figures": [
            {"name": "pairwise_accuracy", "label": "pairwise accuracy", "headline": True,
             "value": 0.9, "low": 0.8, "high": 0.95, "n": 50, "method": "exact"},
            {"name": "wins", "label": "wins", "headline": False, "value": 45, "n": 50},
        ],
    }  # fmt: skip
    for key, value in changes.items():
        if key == "params":
            base["metric"] = {**base["metric"], "params": value}
        else:
            base[key] = value
    return base


def write(folder: Path, name: str, data: dict) -> None:
    (folder / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")


def test_a_card_holds_only_runs_of_exactly_this_configuration(tmp_path):
    metric = Faithfulness()
    write(tmp_path, "a_match", record(metric))
    write(tmp_path, "b_older_same_suite", record(metric, date="2026-11-01", n_scored=50))
    write(tmp_path, "c_other_params", record(metric, params={"scoring": "binary"}, suite="begin"))
    write(tmp_path, "d_ragas", record(metric, engine={"name": "ragas"}, suite="halueval-qa"))
    write(tmp_path, "e_edited_prompt", record(metric, prompts=[{"id": "supported", "hash": "x"}], suite="ares"))  # fmt: skip
    write(tmp_path, "f_tuned", record(metric, threshold=0.71, suite="ragchecker"))
    (tmp_path / "not_a_record.json").write_text("[1, 2]")
    (card,) = build_cards(tmp_path, metrics=("faithfulness",))
    assert card.judge == LOCAL
    assert [(m.suite, m.source, m.label) for m in card.agreement] == [
        ("wikieval", "a_match.json", "pairwise accuracy")  # the latest run; headline figures only
    ]
    assert card.agreement[0].text() == (
        "pairwise accuracy 0.900 [0.800, 0.950] on wikieval (test, n=50, 2026-12-01)"
    )
    assert any("stability" in item for item in card.unmeasured)
    assert not any("human labels" in item for item in card.unmeasured)


def test_a_metric_nobody_measured_gets_a_card_saying_so(tmp_path):
    (card,) = build_cards(tmp_path, metrics=("context_recall",))
    assert card.agreement == []
    assert any("agreement with human labels" in item for item in card.unmeasured)
    assert "unmeasured" in card.headline()


def test_judge_card_matches_the_judge_and_the_configuration(tmp_path):
    metric = Faithfulness()
    write(tmp_path, "run", record(metric))
    cards = build_cards(tmp_path, metrics=("faithfulness",))
    same = LLM(ScriptedProvider(model="judge.gguf"))
    same.provider.identity = lambda: dict(LOCAL)  # the same local file as the card's run
    assert judge_card(metric, same, cards=cards) is cards[0]
    other = LLM(ScriptedProvider(model="another-judge"))
    assert judge_card(metric, other, cards=cards) is None
    assert judge_card(Faithfulness(statements_per_call=1), same, cards=cards) is None
    edited = Faithfulness()
    prompt = edited.judge_prompt("supported")
    edited.set_prompt(prompt.model_copy(update={"instruction": prompt.instruction + " Be strict."}))
    assert judge_card(edited, same, cards=cards) is None  # changed wording: not what was measured


def test_the_shipped_cards_are_the_ones_the_committed_results_give():
    shipped = load_cards()
    assert {card.metric for card in shipped} >= set(CORE_METRICS)
    rebuilt = build_cards(ROOT / "benchmarks" / "results")
    assert [c.to_dict() for c in shipped] == [c.to_dict() for c in rebuilt], (
        "rebuild with `assay cards build` after changing results, prompts or defaults"
    )
    faithfulness = assay.judge_card("faithfulness")  # the embedded judge, never started
    assert faithfulness is not None and faithfulness.agreement
    assert all(m.low <= m.value <= m.high for m in faithfulness.agreement if m.low is not None)


def test_the_cli_lists_and_shows_cards():
    def run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "assay", "cards", *args],
            capture_output=True, text=True, timeout=120, env={"PATH": "", "HOME": "/tmp"},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    listed = run()
    assert all(name in listed for name in CORE_METRICS)
    assert "context_precision with qwen2.5-coder-1.5b-instruct-q4_k_m.gguf: agreement with people unmeasured" in listed  # fmt: skip
    shown = run("show", "faithfulness")
    assert "agreement with human labels:" in shown and "from " in shown and "unmeasured:" in shown


@pytest.mark.parametrize("name", ["no_such_metric"])
def test_an_unknown_metric_is_a_clear_error(name):
    with pytest.raises(assay.UsageError, match="unknown metric"):
        assay.judge_card(name)


def test_the_evaluate_summary_ends_with_each_judged_metric_s_card(monkeypatch):
    from rich.console import Console

    from assay import evaluate
    from assay.cli.evaluate import _summary
    from assay.metrics import BleuScore, LLMContextRecall

    monkeypatch.delenv("ASSAY_LLM", raising=False)
    monkeypatch.delenv("ASSAY_LOCAL_MODEL", raising=False)
    rows = [{"response": "a b", "reference": "a b"}]
    result = evaluate(rows, [BleuScore()], show_progress=False)
    console = Console(record=True, width=400)
    chosen = [BleuScore(), Faithfulness(), LLMContextRecall()]
    _summary(result, chosen, None, console)  # the embedded judge: cards ship for it
    text = console.export_text()
    lines = [line for line in text.splitlines() if line.startswith("card: ")]
    assert len(lines) == 2  # BLEU asks no judge
    assert lines[0].startswith("card: faithfulness with qwen2.5-coder-1.5b-instruct-q4_k_m.gguf: ")
    assert "[" in lines[0] and "n=" in lines[0]  # a figure with its interval and n
    assert lines[1] == (
        "card: context_recall with qwen2.5-coder-1.5b-instruct-q4_k_m.gguf: "
        "agreement with people unmeasured"
    )
    console = Console(record=True, width=400)
    _summary(result, [Faithfulness()], "openai/gpt-4o-mini", console)  # no card for that judge
    assert "card: faithfulness: no judge card for this judge" in console.export_text()
