"""Prompt variants for benchmark runs (`--prompts-dir`): which prompts they replace, what they
must keep, and the errors for a folder that would silently change nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from assay.benchmark.variants import with_prompt_variants
from assay.errors import UsageError
from assay.metrics import AnswerRelevancy, BleuScore, Faithfulness
from assay.prompts.prompt import DATA_DIR

MARK = "Also answer no when the response adds material the question did not ask for."


def write_variant(folder: Path, prompt_id: str, **changes) -> Path:
    data = yaml.safe_load((DATA_DIR / f"{prompt_id}.english.yaml").read_text(encoding="utf-8"))
    data["instruction"] = data["instruction"].rstrip() + "\n" + MARK + "\n"
    data.update(changes)
    path = folder / f"{prompt_id}.english.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def hashes(metric) -> dict[str, str]:
    return {p["id"]: p["hash"] for p in metric.spec()["prompts"]}


def test_a_variant_replaces_only_its_own_prompt_on_a_copy(tmp_path):
    write_variant(tmp_path, "answers_question")
    shipped = AnswerRelevancy(method="verdict")
    variant = with_prompt_variants(shipped, tmp_path)
    assert MARK in variant.judge_prompt("answers_question").instruction
    assert (
        MARK not in shipped.judge_prompt("answers_question").instruction
    )  # the original untouched
    assert hashes(variant)["answers_question"] != hashes(shipped)["answers_question"]
    assert variant.spec()["params"] == shipped.spec()["params"]


def test_a_variant_must_keep_the_inputs_and_the_answer_shape(tmp_path):
    write_variant(tmp_path, "answers_question", inputs=["question"])
    with pytest.raises(UsageError, match=r"answers_question\.english\.yaml field 'inputs'"):
        with_prompt_variants(AnswerRelevancy(method="verdict"), tmp_path)
    write_variant(tmp_path, "answers_question", choices=["1", "0"])
    with pytest.raises(UsageError, match="field 'choices'"):
        with_prompt_variants(AnswerRelevancy(method="verdict"), tmp_path)


def test_a_folder_that_would_change_nothing_is_refused(tmp_path):
    write_variant(tmp_path, "answers_question")
    with pytest.raises(UsageError, match=r"has none of faithfulness's prompts \(supported"):
        with_prompt_variants(Faithfulness(), tmp_path)
    with pytest.raises(UsageError, match="not a directory"):
        with_prompt_variants(AnswerRelevancy(method="verdict"), tmp_path / "missing")
    with pytest.raises(UsageError, match="sends no prompt to a judge"):
        with_prompt_variants(BleuScore(), tmp_path)


def test_a_malformed_file_names_itself(tmp_path):
    (tmp_path / "answers_question.english.yaml").write_text("id: answers_question\n", "utf-8")
    with pytest.raises(UsageError, match=r"answers_question\.english\.yaml is not a prompt file"):
        with_prompt_variants(AnswerRelevancy(method="verdict"), tmp_path)


def test_the_table_of_record_tells_a_wording_under_trial_from_the_shipped_one(tmp_path):
    from assay.benchmark.report import merge_results

    committed = Path(__file__).parents[2] / "benchmarks" / "results"
    runs = sorted(
        committed.glob("ragchecker-relevance__*__p9449a7*.json")
    )  # verdict: shipped, focused
    assert len(runs) == 2
    for path in runs:
        (tmp_path / path.name).write_text(path.read_text())
    merge_results(tmp_path)
    lines = [
        line
        for line in (tmp_path / "README.md").read_text().splitlines()
        if line.startswith("| ragchecker-relevance |")
    ]
    assert len(lines) == 2
    [trial] = [line for line in lines if "(from benchmarks/data/answer_relevance/focused)" in line]
    [shipped] = [line for line in lines if line != trial]
    assert "answers_question c53ced" in trial and "answers_question a3f6f3" in shipped
