"""Every limit of `assay.evaluator.evaluate`, at and just past its boundary.

A violation returns None, logs a line naming the argument, the index and the limit, and makes no
model call: the scripted judge and embedder passed in must see no request at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.evaluator import evaluate
from tests.evaluator.judge import embedder, silent_judge

DATA = {
    "user_input": ["When did Apollo 11 land?"],
    "response": ["It landed in 1969."],
    "retrieved_contexts": [["Apollo 11 landed on the Moon on 20 July 1969."]],
    "reference": ["Apollo 11 landed on 20 July 1969."],
}
FOURTEEN = [
    "faithfulness",
    "answer_relevancy",
    "answer_correctness",
    "answer_similarity",
    "context_precision",
    "context_recall",
    "context_entity_recall",
    "context_utilization",
    "noise_sensitivity",
    "factual_correctness",
    "nv_accuracy",
    "nv_context_relevance",
    "nv_response_groundedness",
    "bleu_score",
]


def run(
    capsys: pytest.CaptureFixture[str],
    metrics: Any = ("faithfulness",),
    dataset: Any = None,
    **options: Any,
) -> tuple[Any, str]:
    """Call evaluate with judges that must never be used; return (result, log)."""
    llm, provider = silent_judge()
    embeddings, embedding_provider = embedder()
    metrics = list(metrics) if isinstance(metrics, tuple) else metrics
    result = evaluate(
        metrics, DATA if dataset is None else dataset, llm=llm, embeddings=embeddings, **options
    )
    log = capsys.readouterr().err
    assert provider.requests == [], "a model was called although a limit was violated"
    assert embedding_provider.batches == []
    return result, log


def rejected(capsys: pytest.CaptureFixture[str], *needles: str, **call: Any) -> str:
    result, log = run(capsys, **call)
    assert result is None
    for needle in needles:
        assert needle in log, f"{needle!r} not in log:\n{log}"
    assert "returning None" in log
    return log


def with_column(key: str, values: Any) -> dict[str, Any]:
    return {**DATA, key: values}


# -- metrics -------------------------------------------------------------------------------------
def test_no_metric_is_refused(capsys):
    rejected(capsys, "metrics: 0 names given; the limit is 1 to 14", metrics=[])


def test_fifteen_metrics_are_refused_and_fourteen_pass_the_check(capsys):
    rejected(
        capsys, "metrics: 15 names given; the limit is 1 to 14", metrics=[*FOURTEEN, "rouge_score"]
    )
    log = rejected(capsys, "language:", metrics=FOURTEEN, language="klingon")
    assert "metrics" not in log


def test_a_name_of_51_characters_is_refused_and_50_is_looked_up(capsys):
    rejected(
        capsys,
        "metrics[1]: a name of 51 characters; the limit is 1 to 50",
        metrics=["faithfulness", "m" * 51],
    )
    log = rejected(capsys, "metrics[0]: unknown metric", metrics=["m" * 50])
    assert "characters" not in log


def test_an_empty_name_is_refused(capsys):
    rejected(capsys, "metrics[0]: a name of 0 characters; the limit is 1 to 50", metrics=[""])


def test_duplicate_names_are_refused(capsys):
    rejected(
        capsys,
        "metrics[2]: 'faithfulness' repeats metrics[0]",
        metrics=["faithfulness", "context_recall", "faithfulness"],
    )


def test_answer_similarity_and_semantic_similarity_are_the_same_metric(capsys):
    rejected(
        capsys,
        "metrics[1]: 'semantic_similarity' repeats metrics[0] (both report 'semantic_similarity')",
        metrics=["answer_similarity", "semantic_similarity"],
    )


def test_an_unknown_name_is_refused_with_a_suggestion(capsys):
    rejected(
        capsys,
        "metrics[0]: unknown metric 'faithfullness'; did you mean faithfulness",
        metrics=["faithfullness"],
    )


def test_metrics_must_be_a_list_of_strings(capsys):
    rejected(capsys, "metrics: expected a list of metric names, got str", metrics="faithfulness")
    rejected(capsys, "metrics[0]: expected a metric name (str), got int", metrics=[3])


def test_a_metric_needing_a_column_no_dataset_can_hold_is_refused(capsys):
    rejected(
        capsys, "metrics[0]: 'summary_score' needs reference_contexts", metrics=["summary_score"]
    )


def test_a_metric_needing_a_key_the_dataset_lacks_is_refused(capsys):
    rejected(
        capsys,
        "metrics[1]: 'faithfulness' needs the dataset key(s) retrieved_contexts",
        metrics=["exact_match", "faithfulness"],
        dataset={"response": ["a"], "reference": ["a"]},
    )


# -- dataset keys --------------------------------------------------------------------------------
def test_a_dataset_without_keys_is_refused(capsys):
    rejected(capsys, "dataset: 0 keys; the limit is 1 to 4", dataset={})


def test_a_dataset_with_five_keys_is_refused(capsys):
    rejected(
        capsys,
        "dataset: 5 keys; the limit is 1 to 4",
        "dataset['question']: unknown key",
        dataset={**DATA, "question": ["q"]},
    )


def test_an_unknown_key_is_refused(capsys):
    rejected(
        capsys,
        "dataset['contexts']: unknown key; the allowed keys are user_input, response, "
        "retrieved_contexts, reference",
        metrics=["exact_match"],
        dataset={"response": ["a"], "reference": ["a"], "contexts": [["c"]]},
    )


def test_a_dataset_must_be_a_dict(capsys):
    rejected(capsys, "dataset: expected a dict of columns, got list", dataset=[DATA])


# -- list lengths --------------------------------------------------------------------------------
def test_a_list_of_129_items_is_refused(capsys):
    rejected(
        capsys,
        "dataset['response']: 129 items; the limit is 0 to 128",
        metrics=["exact_match"],
        dataset={"response": ["a"] * 129, "reference": ["a"] * 129},
    )


def test_an_outer_context_list_of_129_or_0_items_is_refused(capsys):
    rejected(
        capsys,
        "dataset['retrieved_contexts']: 129 items; the limit is 1 to 128",
        dataset={"retrieved_contexts": [["c"]] * 129},
    )
    rejected(
        capsys,
        "dataset['retrieved_contexts']: 0 items; the limit is 1 to 128",
        dataset={"retrieved_contexts": []},
    )


def test_an_inner_context_list_of_129_items_is_refused(capsys):
    contexts = [["c"], ["c"] * 129]
    rejected(
        capsys,
        "dataset['retrieved_contexts'][1]: 129 items; the limit is 0 to 128",
        dataset={"response": ["a", "b"], "retrieved_contexts": contexts},
    )


def test_128_items_and_128_contexts_are_scored(capsys):
    llm, provider = silent_judge()
    result = evaluate(
        ["exact_match"],
        {
            "response": ["a"] * 127 + ["b"],
            "reference": ["a"] * 128,
            "retrieved_contexts": [["c"] * 128] * 128,
        },
        llm=llm,
    )
    assert result == {"exact_match": [1.0] * 127 + [0.0]}
    assert provider.requests == []


def test_lists_of_unequal_length_are_refused(capsys):
    rejected(
        capsys,
        "dataset['reference']: 2 items, but dataset['retrieved_contexts'] has 1 item; all lists "
        "must have the same length",
        dataset=with_column("reference", ["a", "b"]),
    )
    rejected(
        capsys,
        "dataset['reference']: 1 item, but dataset['response'] has 2 items",
        metrics=["exact_match"],
        dataset={"response": ["a", "b"], "reference": ["a"]},
    )


def test_columns_must_be_lists_of_strings(capsys):
    rejected(
        capsys,
        "dataset['response']: expected a list of strings, got str",
        dataset=with_column("response", "It landed in 1969."),
    )
    rejected(
        capsys,
        "dataset['response'][0]: expected a string, got int",
        dataset=with_column("response", [7]),
    )
    rejected(
        capsys,
        "dataset['retrieved_contexts']: expected a list of lists of strings, got str",
        dataset=with_column("retrieved_contexts", "c"),
    )
    rejected(
        capsys,
        "dataset['retrieved_contexts'][0]: expected a list of strings, got str",
        dataset=with_column("retrieved_contexts", ["c"]),
    )


# -- strings -------------------------------------------------------------------------------------
def test_a_string_of_1000001_characters_is_refused(capsys):
    long = "x" * 1_000_001
    rejected(
        capsys,
        "dataset['reference'][0]: a string of 1,000,001 characters; the limit is 1 to 1,000,000",
        dataset=with_column("reference", [long]),
    )
    rejected(
        capsys,
        "dataset['retrieved_contexts'][0][1]: a string of 1,000,001 characters",
        dataset=with_column("retrieved_contexts", [["c", long]]),
    )


def test_a_string_of_1000000_characters_is_scored(capsys):
    text = "x" * 1_000_000
    llm, provider = silent_judge()
    assert evaluate(["exact_match"], {"response": [text], "reference": [text]}, llm=llm) == {
        "exact_match": [1.0]
    }
    assert provider.requests == []


def test_an_empty_string_is_refused(capsys):
    rejected(
        capsys,
        "dataset['user_input'][0]: a string of 0 characters; the limit is 1 to 1,000,000",
        dataset=with_column("user_input", [""]),
    )
    rejected(
        capsys,
        "dataset['retrieved_contexts'][0][0]: a string of 0 characters",
        dataset=with_column("retrieved_contexts", [[""]]),
    )


# -- language and show_progress ------------------------------------------------------------------
@pytest.mark.parametrize("language", ["french", "Chinese", "zh", "", 1])
def test_an_unsupported_language_is_refused(capsys, language):
    rejected(
        capsys,
        f"language: {language!r} is not supported; use None, 'english' or 'chinese'",
        language=language,
    )


def test_show_progress_must_be_a_bool(capsys):
    rejected(capsys, "show_progress: expected True or False, got 'yes'", show_progress="yes")


# -- prompts_path --------------------------------------------------------------------------------
def test_a_prompts_path_of_256_characters_is_refused_and_255_is_looked_up(capsys, tmp_path):
    rejected(
        capsys,
        "prompts_path: a path of 256 characters; the limit is 1 to 255",
        prompts_path="p" * 256,
        language="english",
    )
    log = rejected(capsys, "does not exist", prompts_path="p" * 255, language="english")
    assert "characters" not in log
    rejected(
        capsys,
        "prompts_path: a path of 0 characters; the limit is 1 to 255",
        prompts_path="",
        language="english",
    )


def test_a_prompts_path_that_is_a_file_or_missing_is_refused(capsys, tmp_path):
    file = tmp_path / "prompts.json"
    file.write_text("{}")
    rejected(capsys, "is not a directory", prompts_path=str(file), language="chinese")
    rejected(capsys, "does not exist", prompts_path=str(tmp_path / "nowhere"), language="chinese")


def nested(root: Path, depth: int) -> Path:
    path = root.joinpath(*["d"] * depth)
    path.mkdir(parents=True)
    return path


def test_a_prompts_path_65_directories_deep_is_refused_and_64_accepted(capsys, tmp_path):
    nested(tmp_path / "deep", 65)
    rejected(
        capsys,
        "is 65 directories deep, more than the limit of 64",
        prompts_path=str(tmp_path / "deep"),
        language="english",
    )
    nested(tmp_path / "ok", 64)
    log = rejected(capsys, "language:", prompts_path=str(tmp_path / "ok"), language="klingon")
    assert "prompts_path" not in log


def test_a_prompts_path_with_513_files_is_refused_and_512_accepted(capsys, tmp_path):
    for index in range(512):
        (tmp_path / f"f{index:03}.txt").touch()
    log = rejected(capsys, "language:", prompts_path=str(tmp_path), language="klingon")
    assert "prompts_path" not in log
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "one-more.txt").touch()
    rejected(
        capsys,
        "prompts_path: more than the limit of 512 files",
        prompts_path=str(tmp_path),
        language="english",
    )


@pytest.fixture
def sparse_files(tmp_path: Path) -> Iterator[Path]:
    """Two sparse files, exactly 4 MB and one byte more (no disk space used)."""
    for name, size in (("exact.json", 4 * 1024 * 1024), ("over.json", 4 * 1024 * 1024 + 1)):
        with open(tmp_path / name, "wb") as handle:
            handle.truncate(size)
    yield tmp_path


def test_a_file_over_4_mb_is_refused_and_4_mb_accepted(capsys, sparse_files):
    rejected(
        capsys,
        "over.json' has 4,194,305 bytes, more than the limit of 4,194,304 bytes (4 MB)",
        prompts_path=str(sparse_files),
        language="chinese",
    )
    (sparse_files / "over.json").unlink()
    log = rejected(capsys, "language:", prompts_path=str(sparse_files), language="klingon")
    assert "prompts_path" not in log


def test_a_link_leading_outside_prompts_path_is_refused(capsys, tmp_path):
    outside = tmp_path / "secret.json"
    outside.write_text("{}")
    inside = tmp_path / "prompts"
    inside.mkdir()
    (inside / "faithfulness_claims_chinese.json").symlink_to(outside)
    rejected(
        capsys,
        "is a link leading outside the directory",
        prompts_path=str(inside),
        language="chinese",
    )


# -- logging -------------------------------------------------------------------------------------
def test_logging_is_off_by_default_and_on_with_the_variable(capsys, monkeypatch):
    monkeypatch.delenv("ASSAY_DISABLE_LOGGING")
    result, log = run(capsys, metrics=[])
    assert result is None and log == ""
    monkeypatch.setenv("ASSAY_DISABLE_LOGGING", "1")
    result, log = run(capsys, metrics=[])
    assert result is None and log == ""
    monkeypatch.setenv("ASSAY_DISABLE_LOGGING", "0")
    result, log = run(capsys, metrics=[])
    assert result is None and "metrics: 0 names given" in log


def test_all_problems_are_reported_at_once(capsys):
    log = rejected(
        capsys,
        "metrics[0]: unknown metric",
        "dataset['foo']: unknown key",
        "language:",
        metrics=["nope"],
        dataset={"foo": ["x"]},
        language="latin",
    )
    assert log.count("ERROR") == 4
