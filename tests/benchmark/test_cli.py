"""`assay benchmark` through the real command line, with a loopback judge instead of a model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.benchmark.loopback_judge import LoopbackJudge

RECORD_FIELDS = {
    "suite",
    "aspect",
    "kind",
    "split",
    "limit",
    "seed",
    "metric",
    "prompts",
    "judge",
    "data",
    "n_units",
    "n_scored",
    "coverage",
    "cells",
    "figures",
    "cost",
    "run_dir",
    "assay_version",
    "date",
}


def assay(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {
        k: v for k, v in os.environ.items() if k not in ("ASSAY_LLM", "ASSAY_METAEVAL_DIR")
    }
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=120,
    )


def test_wikieval_faithfulness_end_to_end(metaeval_dir, tmp_path):
    results = tmp_path / "results"
    with LoopbackJudge() as judge:
        env = {"ASSAY_LLM": judge.model_string, "ASSAY_CACHE_DIR": str(tmp_path / "cache")}
        done = assay(
            "benchmark",
            "wikieval",
            "--metric",
            "faithfulness(statements=claims)",
            "--limit",
            "3",
            "--data-dir",
            str(metaeval_dir),
            "--output-dir",
            str(results),
            "--no-progress",
            cwd=tmp_path,
            env=env,
        )
        assert done.returncode == 0, done.stderr
        requests = judge.count
    assert "3 of 3 scored" in done.stdout and "pairwise accuracy" in done.stdout
    assert requests >= 12  # 6 responses x (claims + at least one verdict call)

    json_files = list(results.glob("*.json"))
    assert len(json_files) == 1
    name = json_files[0].name
    assert name.startswith("wikieval__faithfulness__faithfulness__test__openai-loopback-judge__p")
    assert name.endswith("__limit3.json")
    record = json.loads(json_files[0].read_text())
    assert set(record) >= RECORD_FIELDS
    assert (record["suite"], record["aspect"], record["split"], record["limit"]) == (
        "wikieval",
        "faithfulness",
        "test",
        3,
    )
    assert (
        record["metric"]["name"] == "faithfulness"
        and record["metric"]["params"]["scoring"] == "probability"
    )
    assert {p["id"] for p in record["prompts"]} == {"claims", "supported"}
    assert all(len(p["hash"]) == 12 and p["version"] >= 1 for p in record["prompts"])
    assert record["judge"]["model"] == "loopback-judge"
    assert (
        record["cells"]["rows"] == 6
        and record["cells"]["ok"] + record["cells"]["skipped"] + record["cells"]["error"] == 6
    )
    assert record["n_units"] == 3 and record["n_scored"] <= 3
    accuracy = next(f for f in record["figures"] if f["name"] == "pairwise_accuracy")
    assert (
        accuracy["headline"] and 0 <= accuracy["low"] <= accuracy["value"] <= accuracy["high"] <= 1
    )
    assert (
        record["cost"]["calls_per_item"] == requests / 6
        and record["cost"]["input_tokens_per_item"] > 0
    )
    assert record["cost"]["seconds_per_item"] >= 0
    assert (
        tmp_path / record["run_dir"] / "cells.jsonl"
    ).exists()  # under benchmarks/runs/ of the cwd
    assert record["run_dir"].startswith(str(Path("benchmarks") / "runs"))

    markdown = json_files[0].with_suffix(".md").read_text()
    for text in (
        "| judge | openai/loopback-judge |",
        "claims v2",
        "supported v1",
        "pairwise accuracy",
        "| units scored | ",
        "Ragas paper (gpt-3.5) on the same pairs: 0.95",
    ):
        assert text in markdown

    merged = assay("benchmark", "report", "--output-dir", str(results), cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    table = (results / "README.md").read_text()
    assert (
        "| wikieval | test | faithfulness | assay | faithfulness(scoring=probability, statements=claims, verdicts=list, statements_per_call=3, "
        "lexical_anchor=True) | "
        "openai/loopback-judge |"
    ) in table
    assert "pairwise accuracy: " in table


def test_tool_call_suite_needs_no_judge(metaeval_dir, tmp_path):
    env = {"ASSAY_METAEVAL_DIR": str(metaeval_dir)}
    for metric in ("tool_call_f1", "tool_call_accuracy", "tool_call_accuracy(strict_order=false)"):
        done = assay(
            "benchmark",
            "bfcl",
            "--metric",
            metric,
            "--limit",
            "2",
            "--output-dir",
            "out",
            "--no-progress",
            cwd=tmp_path,
            env=env,
        )
        assert done.returncode == 0, done.stderr
    assert (
        len(list((tmp_path / "out").glob("bfcl__*accuracy*.json"))) == 2
    )  # parameters keep files apart
    record = json.loads(next((tmp_path / "out").glob("bfcl__*f1*.json")).read_text())
    figures = {f["name"]: f for f in record["figures"]}
    assert record["judge"] is None and record["cost"]["calls_per_item"] == 0
    assert figures["pass_canonical"]["value"] == 1.0
    assert figures["pass_swapped_order"]["value"] == 1.0  # F1 ignores the order of calls
    assert (
        figures["pass_missing_call"]["value"] == 0.0 and figures["pass_wrong_value"]["value"] == 0.0
    )
    # rows the metric does not score are counted, not dropped
    assert (
        record["cells"]["rows"]
        == record["cells"]["ok"] + record["cells"]["skipped"] + record["cells"]["error"]
    )


def test_clear_errors(tmp_path):
    missing = assay("benchmark", "wikieval", "--metric", "faithfulness", cwd=tmp_path)
    assert (
        missing.returncode == 2
        and "ASSAY_METAEVAL_DIR" in missing.stderr
        and "Traceback" not in missing.stderr
    )
    absent = assay(
        "benchmark",
        "wikieval",
        "--metric",
        "faithfulness",
        "--data-dir",
        str(tmp_path / "nope"),
        cwd=tmp_path,
    )
    assert absent.returncode == 2 and "does not exist" in absent.stderr
    unknown = assay(
        "benchmark", "nosuch", "--metric", "faithfulness", "--data-dir", str(tmp_path), cwd=tmp_path
    )
    assert unknown.returncode == 2 and "unknown suite 'nosuch'" in unknown.stderr
    no_metric = assay("benchmark", "wikieval", cwd=tmp_path)
    assert no_metric.returncode == 2 and "--metric is required" in no_metric.stderr


def test_split_and_aspect_errors(metaeval_dir, tmp_path):
    env = {"ASSAY_METAEVAL_DIR": str(metaeval_dir)}
    dev = assay(
        "benchmark", "wikieval", "--metric", "faithfulness", "--split", "dev", cwd=tmp_path, env=env
    )
    assert dev.returncode == 2 and "has no 'dev' split" in dev.stderr
    aspect = assay("benchmark", "ares", "--metric", "exact_match", cwd=tmp_path, env=env)
    assert aspect.returncode == 2 and "--aspect" in aspect.stderr


def test_a_threshold_tuned_on_begin_dev_is_applied_to_test(metaeval_dir, tmp_path):
    results = tmp_path / "results"
    with LoopbackJudge() as judge:
        env = {"ASSAY_LLM": judge.model_string, "ASSAY_CACHE_DIR": str(tmp_path / "cache")}
        common = (
            "--metric",
            "faithfulness(statements=sentences)",
            "--data-dir",
            str(metaeval_dir),
            "--output-dir",
            str(results),
            "--no-progress",
        )
        dev = assay(
            "benchmark", "begin", "--split", "dev", "--limit", "12", *common, cwd=tmp_path, env=env
        )
        assert dev.returncode == 0, dev.stderr
        [dev_json] = results.glob("*__dev__*.json")
        figures = {f["name"]: f for f in json.loads(dev_json.read_text())["figures"]}
        tuned = figures["best_threshold"]["value"]
        assert 0.0 <= tuned <= 1.0 + 1e-6 and figures["best_balanced_accuracy"]["value"] >= 0.5

        def on_test(tuned_in, metric="faithfulness(statements=sentences)"):
            return assay(
                "benchmark",
                "begin",
                "--limit",
                "12",
                "--threshold-from",
                str(tuned_in),
                *common[:1],
                metric,
                *common[2:],
                cwd=tmp_path,
                env=env,
            )

        test = on_test(dev_json)
        assert test.returncode == 0, test.stderr
        [test_json] = results.glob("*__test__*.json")
        record = json.loads(test_json.read_text())
        assert record["threshold"] == tuned and record["threshold_source"] == str(dev_json)
        assert f"balanced accuracy @ {tuned:g}" in {f["label"] for f in record["figures"]}
        assert "tuned on dev" in test_json.with_suffix(".md").read_text()

        # a test-split result cannot lend its threshold
        refused = on_test(test_json)
        # nor a dev result of the same metric with other settings (or another metric)
        other = on_test(dev_json, "faithfulness(statements=sentences, statements_per_call=None)")
    assert refused.returncode == 2 and "only be tuned on dev data" in refused.stderr
    assert other.returncode == 2 and "run the dev split with the same metric" in other.stderr
    assert '"statements_per_call": 3' in other.stderr and len(list(results.glob("*.json"))) == 2


def test_an_aligned_state_is_scored_with_and_recorded(metaeval_dir, tmp_path):
    from assay import Faithfulness
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
    results = tmp_path / "results"
    with LoopbackJudge() as judge:
        env = {"ASSAY_LLM": judge.model_string, "ASSAY_CACHE_DIR": str(tmp_path / "cache")}
        args = ("benchmark", "wikieval", "--limit", "2", "--data-dir", str(metaeval_dir))
        done = assay(
            *args,
            "--metric",
            "faithfulness(statements=claims)",
            "--aligned",
            str(aligned),
            "--output-dir",
            str(results),
            "--no-progress",
            cwd=tmp_path,
            env=env,
        )
        mismatched = assay(
            *args, "--metric", "faithfulness", "--aligned", str(aligned), cwd=tmp_path, env=env
        )
        # without --metric, the aligned file's own description rebuilds the metric
        by_file = assay(
            *args,
            "--aligned",
            str(aligned),
            "--output-dir",
            str(tmp_path / "by_file"),
            "--no-progress",
            cwd=tmp_path,
            env=env,
        )
        with_ragas = assay(
            *args,
            "--metric",
            "faithfulness",
            "--aligned",
            str(aligned),
            "--engine",
            "ragas",
            cwd=tmp_path,
            env=env,
        )
    assert done.returncode == 0, done.stderr
    [record_file] = results.glob("*.json")
    record = json.loads(record_file.read_text())
    assert record["aligned_from"] == str(aligned)
    fingerprint = record["metric"]["alignment"]
    assert fingerprint["threshold"] == 0.7 and fingerprint["k"] == 0
    assert record_file.name.endswith(f"__limit2__aligned{fingerprint['hash']}.json")
    assert mismatched.returncode == 2 and "prompt" in mismatched.stderr.lower()
    assert by_file.returncode == 0, by_file.stderr
    [rebuilt] = (tmp_path / "by_file").glob("*.json")
    assert rebuilt.name == record_file.name  # same metric (statements=claims), same alignment
    assert json.loads(rebuilt.read_text())["metric"]["params"]["statements"] == "claims"
    assert with_ragas.returncode == 2 and "--aligned applies to assay" in with_ragas.stderr


def test_prompt_variants_are_sent_recorded_apart_and_keep_their_own_threshold(
    metaeval_dir, tmp_path
):
    from tests.benchmark.test_variants import MARK, write_variant

    variants = tmp_path / "variants"
    variants.mkdir()
    write_variant(variants, "supported")
    results = tmp_path / "results"
    with LoopbackJudge() as judge:
        env = {"ASSAY_LLM": judge.model_string, "ASSAY_CACHE_DIR": str(tmp_path / "cache")}

        def run(*extra: str):
            return assay(
                "benchmark", "begin", "--limit", "12", "--metric", "faithfulness",
                "--data-dir", str(metaeval_dir), "--output-dir", str(results), "--no-progress",
                *extra, cwd=tmp_path, env=env,
            )  # fmt: skip

        shipped = run("--split", "dev")
        sent_before = len(judge.requests)
        variant = run("--split", "dev", "--prompts-dir", str(variants))
        systems = [str(r.messages[0]["content"]) for r in judge.requests]
        [shipped_dev] = [p for p in results.glob("*__dev__*.json") if "__w" not in p.name]
        mixed = run("--threshold-from", str(shipped_dev), "--prompts-dir", str(variants))
    assert shipped.returncode == 0 and variant.returncode == 0, variant.stderr
    assert sent_before and not any(MARK in text for text in systems[:sent_before])
    assert len(systems) > sent_before and all(MARK in text for text in systems[sent_before:])
    records = [json.loads(path.read_text()) for path in results.glob("*__dev__*.json")]
    assert len(records) == 2  # the variant's result sits beside the shipped one, not over it
    assert len({r["prompts"][0]["hash"] for r in records}) == 2
    assert mixed.returncode == 2 and "another wording" in mixed.stderr
