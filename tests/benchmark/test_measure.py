"""`assay.benchmark.measure`: what `assay benchmark` does, called from Python.

The outcomes test_cli.py asserts through the command line, reached without a subprocess and with
the same loopback judge: the record and its files, a suite that needs no judge, the errors, a
threshold tuned on dev carried to test, an aligned state, prompt variants, and Ragas' engine (the
stand-in package of fake_ragas.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay import Faithfulness
from assay.benchmark import BenchmarkOptions, measure
from assay.engine import ModelChoice
from assay.errors import UsageError
from tests.benchmark.fake_ragas import ScoreJudge, make_fake_ragas
from tests.benchmark.loopback_judge import LoopbackJudge
from tests.benchmark.test_cli import RECORD_FIELDS


def options(tmp_path: Path, metaeval_dir: Path, judge=None, **fields) -> BenchmarkOptions:
    fields.setdefault("models", ModelChoice(llm=judge.model_string if judge else None, cache=False))
    fields.setdefault("output_dir", tmp_path / "results")
    return BenchmarkOptions(
        data_dir=metaeval_dir,
        runs_dir=tmp_path / "runs",
        show_progress=False,
        **fields,
    )


def test_a_suite_is_scored_recorded_and_written(metaeval_dir, tmp_path):
    with LoopbackJudge() as judge:
        run = measure(
            "wikieval",
            Faithfulness(statements="claims"),
            options(tmp_path, metaeval_dir, judge, limit=3),
        )
        requests = judge.count
    record = run.record
    assert set(record) >= RECORD_FIELDS
    assert (record["suite"], record["aspect"], record["split"], record["limit"]) == (
        "wikieval",
        "faithfulness",
        "test",
        3,
    )
    assert record["judge"]["model"] == "loopback-judge" and requests >= 12
    assert record["n_units"] == 3 and record["cells"]["rows"] == 6
    accuracy = run.figures["pairwise_accuracy"]
    assert 0 <= accuracy["low"] <= accuracy["value"] <= accuracy["high"] <= 1
    assert [f["name"] for f in run.headline] == ["pairwise_accuracy"]
    assert record["cost"]["calls_per_item"] == requests / 6
    assert run.json_path.name.startswith(
        "wikieval__faithfulness__faithfulness__test__openai-loopback-judge__p"
    )
    assert json.loads(run.json_path.read_text()) == json.loads(json.dumps(record))
    assert "pairwise accuracy" in run.markdown_path.read_text()


def test_a_tool_call_suite_needs_no_judge_and_need_not_be_written(metaeval_dir, tmp_path):
    run = measure("bfcl", "tool_call_f1", options(tmp_path, metaeval_dir, limit=2, output_dir=None))
    assert run.json_path is None and not (tmp_path / "results").exists()
    assert run.record["judge"] is None and run.record["cost"]["calls_per_item"] == 0
    figures = run.figures
    assert figures["pass_canonical"]["value"] == 1.0
    assert figures["pass_swapped_order"]["value"] == 1.0
    assert figures["pass_missing_call"]["value"] == 0.0


def test_clear_errors(metaeval_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("ASSAY_METAEVAL_DIR", raising=False)
    bare = BenchmarkOptions(show_progress=False, runs_dir=tmp_path / "runs")
    with pytest.raises(UsageError, match="ASSAY_METAEVAL_DIR"):
        measure("wikieval", "faithfulness", bare)
    with pytest.raises(UsageError, match="does not exist"):
        measure("wikieval", "faithfulness", options(tmp_path, tmp_path / "nope"))
    with pytest.raises(UsageError, match="unknown suite 'nosuch'"):
        measure("nosuch", "faithfulness", options(tmp_path, metaeval_dir))
    with pytest.raises(UsageError, match="--metric is required"):
        measure("wikieval", None, options(tmp_path, metaeval_dir))
    with pytest.raises(UsageError, match="has no 'dev' split"):
        measure("wikieval", "faithfulness", options(tmp_path, metaeval_dir, split="dev"))
    with pytest.raises(UsageError, match="--aspect"):
        measure("ares", "exact_match", options(tmp_path, metaeval_dir))
    for fields, needle in (
        ({"engine": "other"}, "--engine must be assay or ragas"),
        ({"engine": "ragas", "aligned": tmp_path / "a.json"}, "--aligned applies to assay"),
        ({"engine": "ragas", "prompts_dir": tmp_path}, "--prompts-dir applies to assay"),
    ):
        with pytest.raises(UsageError, match=needle):
            BenchmarkOptions(**fields)
    assert not (tmp_path / "results").exists()


def test_a_threshold_tuned_on_dev_is_applied_to_test(metaeval_dir, tmp_path):
    metric = Faithfulness(statements="sentences")
    with LoopbackJudge() as judge:
        dev = measure(
            "begin", metric, options(tmp_path, metaeval_dir, judge, split="dev", limit=12)
        )
        tuned = dev.figures["best_threshold"]["value"]
        test = measure(
            "begin",
            metric,
            options(tmp_path, metaeval_dir, judge, limit=12, threshold_from=dev.json_path),
        )
        with pytest.raises(UsageError, match="only be tuned on dev data"):
            measure(
                "begin",
                metric,
                options(tmp_path, metaeval_dir, judge, limit=12, threshold_from=test.json_path),
            )
        with pytest.raises(UsageError, match="run the dev split with the same metric"):
            measure(
                "begin",
                Faithfulness(statements="sentences", statements_per_call=None),
                options(tmp_path, metaeval_dir, judge, limit=12, threshold_from=dev.json_path),
            )
    assert test.record["threshold"] == tuned
    assert test.record["threshold_source"] == str(dev.json_path)
    assert f"balanced accuracy @ {tuned:g}" in {f["label"] for f in test.record["figures"]}


def test_an_aligned_state_is_scored_with_and_names_its_metric(metaeval_dir, tmp_path):
    from assay.metrics.aligned.state import AlignedState, prompt_fingerprints

    metric = Faithfulness(statements="claims")
    state = AlignedState(
        metric_class="Faithfulness",
        metric_name="faithfulness",
        prompts=prompt_fingerprints(metric),
        k=0,
        threshold=0.7,
    )
    aligned = metric.set_alignment(state).save_alignment(tmp_path / "aligned.json")
    with LoopbackJudge() as judge:
        given = measure(
            "wikieval",
            Faithfulness(statements="claims"),
            options(tmp_path, metaeval_dir, judge, limit=2, aligned=aligned),
        )
        by_file = measure(
            "wikieval",
            None,
            options(tmp_path, metaeval_dir, judge, limit=2, aligned=aligned, output_dir=None),
        )
        with pytest.raises(UsageError, match=r"(?i)prompt"):
            measure(
                "wikieval", "faithfulness", options(tmp_path, metaeval_dir, judge, aligned=aligned)
            )
    assert given.record["aligned_from"] == str(aligned)
    assert given.record["metric"]["alignment"]["threshold"] == 0.7
    assert by_file.record["metric"] == given.record["metric"]  # rebuilt from the file


def test_prompt_variants_are_sent_and_recorded(metaeval_dir, tmp_path):
    from tests.benchmark.test_variants import MARK, write_variant

    variants = tmp_path / "variants"
    variants.mkdir()
    write_variant(variants, "supported")
    with LoopbackJudge() as judge:
        run = measure(
            "begin",
            "faithfulness",
            options(tmp_path, metaeval_dir, judge, split="dev", limit=12, prompts_dir=variants),
        )
        systems = [str(r.messages[0]["content"]) for r in judge.requests]
    assert systems and any(MARK in text for text in systems)
    assert run.record["prompts_dir"] == str(variants)


def test_ragas_engine_gets_the_metric_id_and_its_options(metaeval_dir, tmp_path):
    with ScoreJudge() as judge:  # every response scores 0.5; the fake metric adds its offset
        models = ModelChoice(llm=f"openai/fake-judge@{judge.url}", cache=False)
        run = measure(
            "wikieval",
            Faithfulness(),  # a metric object names its id
            options(
                tmp_path,
                metaeval_dir,
                limit=1,
                models=models,
                engine="ragas",
                ragas_python=make_fake_ragas(tmp_path),
                ragas_options={"offset": 0.25},
            ),
        )
    assert run.record["engine"]["name"] == "ragas"
    assert run.record["metric"]["params"] == {"offset": 0.25}
    values = {
        json.loads(line)["value"]
        for line in (Path(run.record["run_dir"]) / "ragas_cells.jsonl").read_text().splitlines()
    }
    assert values == {0.75}
