"""`align(max_similar_examples="auto")`: the number of examples is chosen on the training rows.

The scripted judge's P(yes) depends on whether the prompt carries worked examples, so which
candidate calibrates better on the training rows is known in advance.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from assay.alignment.calibration import K_TOLERANCE, k_candidates
from assay.errors import UsageError
from assay.metrics.rag.faithfulness import Faithfulness
from tests.alignment.scripted import faithfulness_judge, keyword_embedder, last_items
from tests.alignment.test_align import city_rows, p_by_marker, shown_examples


def by_row_number(request):
    # A score that follows the row number, not the label: no cut separates the labels.
    number = int(last_items(request).split()[-1].rstrip("."))
    return 0.1 + 0.8 * (number % 5) / 4


def judge_where(without_examples, with_examples):
    return faithfulness_judge(
        lambda request: (
            with_examples(request) if shown_examples(request) else without_examples(request)
        )
    )


def align_auto(llm, **options):
    embeddings, _ = keyword_embedder()
    rows = city_rows(24)
    metric = Faithfulness(llm=llm).align(
        rows, embeddings, max_similar_examples="auto", show_progress=False, **options
    )
    return metric, rows


def test_examples_that_blur_the_judge_are_left_out():
    llm, provider = judge_where(p_by_marker, by_row_number)
    metric, rows = align_auto(llm)
    state = metric.alignment
    assert state.k == 0
    assert state.threshold == pytest.approx(0.3)
    candidates = state.provenance["k_candidates"]
    assert set(candidates) == {"0", "3"}
    assert candidates["0"]["train_value"] == pytest.approx(1.0)
    assert candidates["3"]["train_value"] < 1.0 - K_TOLERANCE
    # each candidate scored every training row once
    assert len(provider.requests) == 2 * len(rows)
    assert state.provenance["judge_calls"] == 2 * len(rows)
    assert any("k chosen on the training rows: 0" in n for n in state.provenance["notes"])
    # scoring with the chosen state shows no example, and reads the fitted threshold
    provider.requests.clear()
    result = metric.score(
        response="The meeting is in rome indeed 3.", retrieved_contexts=["The meeting is in rome."]
    )
    assert shown_examples(provider.requests[0]) == []
    assert result.details["alignment"] == {"threshold": pytest.approx(0.3), "passed": True}


def test_examples_that_help_are_kept():
    llm, provider = judge_where(by_row_number, p_by_marker)
    metric, _ = align_auto(llm)
    state = metric.alignment
    assert state.k == 3
    assert state.provenance["k_candidates"]["3"]["train_value"] == pytest.approx(1.0)
    provider.requests.clear()
    metric.score(
        response="The meeting is in rome indeed 3.", retrieved_contexts=["The meeting is in rome."]
    )
    assert len(shown_examples(provider.requests[0])) == 3


def test_a_tie_goes_to_fewer_examples():
    llm, _ = judge_where(p_by_marker, p_by_marker)
    metric, _ = align_auto(llm)
    assert metric.alignment.k == 0
    values = metric.alignment.provenance["k_candidates"]
    assert values["0"]["train_value"] == values["3"]["train_value"] == pytest.approx(1.0)


def test_a_list_of_candidates_is_tried_in_full():
    llm, provider = judge_where(by_row_number, p_by_marker)
    embeddings, _ = keyword_embedder()
    rows = city_rows(24)
    state = (
        Faithfulness(llm=llm)
        .align(rows, embeddings, max_similar_examples=[4, 0, 2], show_progress=False)
        .alignment
    )
    assert set(state.provenance["k_candidates"]) == {"0", "2", "4"}
    assert state.k == 2  # 2 and 4 both separate the labels; the smaller wins
    assert len(provider.requests) == 3 * len(rows)


def test_without_calibration_auto_uses_the_largest_candidate_and_says_so():
    llm, provider = judge_where(p_by_marker, p_by_marker)
    metric, _ = align_auto(llm, calibrate=False)
    assert metric.alignment.k == 3 and metric.alignment.threshold is None
    assert provider.requests == []
    assert any("largest candidate" in n for n in metric.alignment.provenance["notes"])


@pytest.mark.parametrize("bad", [-1, True, "some", [], [1, -2], 2.5])
def test_bad_k_is_refused_by_name(bad):
    with pytest.raises(UsageError, match="max_similar_examples"):
        k_candidates(bad)


def test_candidates_are_sorted_and_unique():
    assert k_candidates("auto") == (0, 3)
    assert k_candidates([3, 0, 3]) == (0, 3)
    assert k_candidates(2) == (2,)


def test_cli_refuses_a_bad_examples_value_before_loading_a_model(tmp_path):
    train = tmp_path / "train.jsonl"
    train.write_text('{"response": "x", "retrieved_contexts": ["y"], "label": 1}\n')
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "align",
            "faithfulness",
            "--train",
            str(train),
            "--examples",
            "three",
            "-o",
            str(tmp_path / "o.json"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--examples" in done.stderr and "'three'" in done.stderr
    assert not (tmp_path / "o.json").exists()


def test_each_candidate_gets_its_share_of_the_call_budget():
    llm, provider = judge_where(p_by_marker, by_row_number)
    metric, _ = align_auto(llm, max_calls=30)  # 24 rows, two candidates: 15 calls each
    state = metric.alignment
    candidates = state.provenance["k_candidates"]
    assert candidates["0"]["calibration_failures"] == candidates["3"]["calibration_failures"] == 9
    assert len(provider.requests) == 30 and state.provenance["judge_calls"] == 30


def test_a_metric_with_no_examples_to_show_is_calibrated_once():
    from assay.metrics.rag.context_precision import LLMContextPrecisionWithReference
    from tests.alignment.test_families import BINARY, judge, labelled

    llm, _ = judge()
    embeddings, _ = keyword_embedder()
    train = labelled(BINARY)
    state = (
        LLMContextPrecisionWithReference(llm=llm)
        .align(train, embeddings, max_similar_examples="auto", show_progress=False)
        .alignment
    )
    assert state.k == 0 and "k_candidates" not in state.provenance
    assert state.provenance["judge_calls"] == len(train)
    assert any("no k to choose" in n for n in state.provenance["notes"])


def test_any_sequence_of_whole_numbers_and_any_case_of_auto_are_taken():
    import numpy as np

    assert k_candidates(range(0, 4, 3)) == (0, 3)
    assert k_candidates([np.int64(2), 0]) == (0, 2)
    assert k_candidates("AUTO") == k_candidates("auto")
