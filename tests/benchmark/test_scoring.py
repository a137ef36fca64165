"""From per-row scores to figures: units with an unscored row are left out and counted."""

from __future__ import annotations

from assay.benchmark.scoring import score_suite
from assay.benchmark.suites import GradedPair, SuiteData


def _figures(scored):
    return {figure.name: figure.estimate for figure in scored.figures}


def test_pairwise_coverage_leaves_out_pairs_with_a_missing_score():
    data = SuiteData(
        "t",
        "faithfulness",
        "test",
        "pairwise",
        [{}] * 6,
        [str(i) for i in range(6)],
        3,
        [],
        pairs=[(0, 1), (2, 3), (4, 5)],
    )
    scored = score_suite(data, [0.9, 0.1, 0.5, 0.5, None, 0.3])
    assert (scored.n_units, scored.n_scored) == (3, 2)
    assert _figures(scored)["pairwise_accuracy"].value == 0.75  # one win, one tie


def test_binary_figures_over_ok_cells():
    labels = [1, 1, 1, 1, 0, 0, 0]
    data = SuiteData(
        "t",
        "faithfulness",
        "test",
        "binary",
        [{}] * 7,
        [str(i) for i in range(7)],
        7,
        [],
        labels=labels,
    )
    scored = score_suite(data, [0.9, 0.6, 0.4, 0.3, 0.7, 0.2, None], n_boot=200)
    figures = _figures(scored)
    assert scored.n_scored == 6
    assert figures["roc_auc"].value == 0.625 and figures["f1_negative"].value == 0.4
    assert figures["roc_auc"].low <= 0.625 <= figures["roc_auc"].high


def test_graded_sign_agreement_and_missing_instances():
    pairs = [
        GradedPair(0, 1, {"overall": [2, 1]}),
        GradedPair(2, 3, {"overall": [-1, 0]}),
        GradedPair(4, 5, {"overall": [1, 1]}),
    ]
    data = SuiteData(
        "t",
        "preference",
        "test",
        "graded",
        [{}] * 6,
        [str(i) for i in range(6)],
        3,
        [],
        graded=pairs,
    )
    scored = score_suite(data, [0.2, 0.8, 0.5, 0.5, None, 1.0])
    figures = _figures(scored)
    assert scored.n_scored == 2
    # deltas +0.6 (labels 2, 1) and 0 (labels -1, 0): signs agree twice, a zero delta counts 0.5 -> 2.5 / 3
    assert figures["sign_agreement_overall"].value == 2.5 / 3


def test_agreement_pass_rates_per_variant():
    data = SuiteData(
        "bfcl",
        "tool_calls",
        "test",
        "agreement",
        [{}] * 4,
        list("abcd"),
        2,
        [],
        labels=[1, 0, 1, 0],
        groups=["canonical", "wrong_value", "canonical", "wrong_value"],
    )
    figures = _figures(score_suite(data, [1.0, 0.5, 1.0, 1.0], n_boot=100))
    assert figures["agreement"].value == 0.75
    assert figures["pass_canonical"].value == 1.0 and figures["pass_wrong_value"].value == 0.5
