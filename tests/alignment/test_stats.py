"""The report's statistics (`assay.stats`) against values worked out by hand on small tables;
an undefined statistic is None."""

from __future__ import annotations

import numpy as np
import pytest

from assay.alignment.labels import LabeledExample, LabeledSet
from assay.alignment.report import AlignmentReport
from assay.alignment.scoring import RowScore
from assay.stats import agreement as ag
from assay.stats import calibration as cal
from assay.stats import classification as cls
from assay.stats import correlation as cor
from assay.stats.bootstrap import bootstrap


def test_kappa_from_a_two_by_two_table():
    # TP 3, FN 1, FP 1, TN 3: observed 6/8, chance 1/2 -> kappa (0.75 - 0.5) / 0.5
    y = [1, 1, 1, 1, 0, 0, 0, 0]
    p = [1, 1, 1, 0, 0, 0, 1, 0]
    assert ag.cohen_kappa(y, p, [0, 1]) == pytest.approx(0.5)
    assert ag.confusion_matrix(y, p, [0, 1]).tolist() == [[3, 1], [1, 3]]


def test_quadratic_weighted_kappa_by_hand():
    # O has (1,1), (2,3), (3,3); margins rows [1,1,1], columns [1,0,2]; sum w*O = 1, sum w*E = 5
    assert ag.cohen_kappa([1, 2, 3], [1, 3, 3], [1, 2, 3], "quadratic") == pytest.approx(0.8)
    # linear weights: sum w*O = 1; w*E = (0+0+4/3) + (1/3+0+2/3) + (2/3+0+0) = 3 -> 1 - 1/3
    assert ag.cohen_kappa([1, 2, 3], [1, 3, 3], [1, 2, 3], "linear") == pytest.approx(2 / 3)


def test_kappa_is_undefined_when_everything_is_one_category():
    assert ag.cohen_kappa([1, 1], [1, 1], [0, 1]) is None


def test_roc_auc_counts_ties_as_half():
    y = np.array([1, 1, 0, 0])
    assert cls.roc_auc(y, np.array([0.9, 0.4, 0.5, 0.1])) == pytest.approx(0.75)
    assert cls.roc_auc(y, np.array([0.5, 0.4, 0.5, 0.1])) == pytest.approx(0.625)
    assert cls.roc_auc(np.array([1, 1]), np.array([0.2, 0.3])) is None


def test_brier_ece_and_bins():
    assert cal.brier(np.array([1, 0]), np.array([0.8, 0.3])) == pytest.approx(0.065)
    y = np.array([1, 0, 1, 1])
    p = np.array([0.05, 0.15, 0.95, 0.85])
    # bins 0, 1, 8, 9 hold one row each: (0.95 + 0.15 + 0.15 + 0.05) / 4
    assert cal.expected_calibration_error(y, p) == pytest.approx(0.325)
    bins = cal.calibration_bins(y, p)
    assert [b["n"] for b in bins] == [1, 1, 0, 0, 0, 0, 0, 0, 1, 1]
    assert bins[8]["mean_score"] == pytest.approx(0.85) and bins[8]["positive_rate"] == 1.0
    assert bins[2]["mean_score"] is None
    # a score on an edge belongs to the bin it opens: [0.3, 0.4)
    assert [b["n"] for b in cal.calibration_bins(np.array([1, 0]), np.array([0.3, 0.7]))] == [
        0,
        0,
        0,
        1,
        0,
        0,
        0,
        1,
        0,
        0,
    ]


def test_rank_correlations_and_mae():
    a, b = np.array([1.0, 2, 3, 4]), np.array([1.0, 3, 2, 4])
    assert cor.kendall(a, b) == pytest.approx(4 / 6)  # 5 concordant, 1 discordant of 6 pairs
    assert cor.spearman(a, b) == pytest.approx(1 - 6 * 2 / (4 * 15))  # sum d^2 = 2
    assert cor.mae(a, b) == pytest.approx(0.5)
    assert cor.spearman(np.array([1.0, 1, 1]), np.array([1.0, 2, 3])) is None


def test_interval_is_seeded_and_brackets_the_value():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 60).astype(float)
    s = np.clip(y * 0.5 + rng.random(60) * 0.6, 0, 1)
    first = bootstrap(cls.roc_auc, [y, s], resamples=300, seed=1)
    again = bootstrap(cls.roc_auc, [y, s], resamples=300, seed=1)
    assert (first.low, first.high) == (again.low, again.high)
    assert first.low <= first.value <= first.high
    assert first.high - first.low > 0.01


def _rows(labels, reasons=None):
    return LabeledSet(
        [
            LabeledExample(
                id=f"r{i}",
                fields={"response": f"text {i}"},
                label=label,
                reason=(reasons or {}).get(i),
            )
            for i, label in enumerate(labels)
        ]
    )


def test_report_binary_statistics_equal_hand_values():
    labels = [1, 1, 1, 1, 0, 0, 0, 0]
    scores = [0.9, 0.8, 0.7, 0.2, 0.1, 0.3, 0.6, 0.05]
    rows = _rows(labels, {3: "clearly supported"})
    results = [RowScore(f"r{i}", v, reason=f"judge {i}") for i, v in enumerate(scores)]
    report = AlignmentReport.build(
        metric="faith", kind="binary", rows=rows, scores=results, threshold=0.5, n_resamples=200
    )
    # at 0.5: TP 3 (0.9, 0.8, 0.7), FN 1 (0.2), FP 1 (0.6), TN 3
    assert report.value("agreement") == pytest.approx(0.75)
    assert report.value("balanced_accuracy") == pytest.approx(0.75)
    assert report.value("kappa") == pytest.approx(0.5)
    # AUC: positives 0.9, 0.8, 0.7, 0.2 vs negatives 0.1, 0.3, 0.6, 0.05: 3*4 + 2 (0.2 beats 0.1, 0.05) = 14 / 16
    assert report.value("roc_auc") == pytest.approx(14 / 16)
    assert report.value("brier") == pytest.approx(
        np.mean((np.array(scores) - np.array(labels)) ** 2)
    )
    assert report.confusion["matrix"] == [[3, 1], [1, 3]]
    assert report["agreement_rate"] == pytest.approx(0.75)
    assert report["correlation"] == pytest.approx(0.5)
    worst = report.worst
    assert [w["id"] for w in worst] == ["r3", "r6"]  # the two misses, largest gap first
    assert worst[0]["human_reason"] == "clearly supported" and worst[0]["judge_reason"] == "judge 3"
    for estimate in report.statistics.values():
        if estimate.value is not None and estimate.low is not None:
            assert estimate.low - 1e-9 <= estimate.value <= estimate.high + 1e-9


def test_report_counts_failed_rows_and_leaves_them_out():
    rows = _rows([1, 0, 1, 0])
    results = [
        RowScore("r0", 0.9),
        RowScore("r1", 0.1),
        RowScore("r2", error_type="OutputParseError", error="no verdict"),
        RowScore("r3", 0.2),
    ]
    report = AlignmentReport.build(
        metric="m", kind="binary", rows=rows, scores=results, threshold=0.5, n_resamples=50
    )
    assert report.n_rows == 4 and report.n_scored == 3
    assert report.failures == {"OutputParseError": 1}
    assert report.statistics["agreement"].n == 3
    assert report.to_dict()["per_row"][2]["error"] == "OutputParseError: no verdict"


def test_paired_differences_equal_after_minus_before():
    labels = [1, 1, 1, 0, 0, 0]
    before = [RowScore(f"r{i}", v) for i, v in enumerate([0.4, 0.45, 0.6, 0.3, 0.2, 0.1])]
    after = [RowScore(f"r{i}", v) for i, v in enumerate([0.4, 0.45, 0.6, 0.3, 0.2, 0.1])]
    report = AlignmentReport.build(
        metric="m",
        kind="binary",
        rows=_rows(labels),
        scores=after,
        threshold=0.35,
        before=before,
        before_threshold=0.5,
        n_resamples=200,
    )
    # same scores, different cut: before 4/6 right (0.4, 0.45 missed), after 6/6
    assert report.before["agreement"].value == pytest.approx(4 / 6)
    assert report.value("agreement") == pytest.approx(1.0)
    assert report.differences["agreement"].value == pytest.approx(2 / 6)
    assert report.differences["roc_auc"].value == pytest.approx(0.0)
    assert report.differences["agreement"].low >= 0  # never worse on any resample


def test_ordinal_and_nominal_reports():
    rows = _rows([1, 2, 3])
    report = AlignmentReport.build(
        metric="rubric",
        kind="ordinal",
        rows=rows,
        scores=[RowScore("r0", 1), RowScore("r1", 3), RowScore("r2", 3)],
        threshold=None,
        n_resamples=50,
    )
    assert report.value("weighted_kappa") == pytest.approx(0.8)
    assert report.value("agreement") == pytest.approx(2 / 3)
    assert report.value("mae") == pytest.approx(1 / 3)
    assert report["correlation"] == pytest.approx(0.8)
    nominal = AlignmentReport.build(
        metric="d",
        kind="nominal",
        rows=_rows(["good", "bad", "good", "bad"]),
        scores=[RowScore(f"r{i}", v) for i, v in enumerate(["good", "bad", "bad", "bad"])],
        threshold=None,
        n_resamples=50,
    )
    assert nominal.value("agreement") == pytest.approx(0.75)
    # categories sorted: bad, good. O = [[2,0],[1,1]]; po = .75, pe = (2/4*3/4)+(2/4*1/4) = .5
    assert nominal.value("kappa") == pytest.approx(0.5)
    assert nominal.confusion["categories"] == ["bad", "good"]


def test_report_renders_as_table_json_and_html(tmp_path):
    rows = _rows([1, 0, 1, 0], {0: "<b>bold</b> claim"})
    results = [RowScore(f"r{i}", v) for i, v in enumerate([0.2, 0.7, 0.9, 0.1])]
    report = AlignmentReport.build(
        metric="m", kind="binary", rows=rows, scores=results, threshold=0.5, n_resamples=50
    )
    from rich.console import Console

    console = Console(record=True, width=120)
    console.print(report.table())
    text = console.export_text()
    assert "agreement" in text and "0.500" in text
    data = report.to_dict()
    assert data["statistics"]["agreement"]["value"] == 0.5
    report.to_json(tmp_path / "r.json")
    assert (tmp_path / "r.json").read_text().startswith("{")
    page = report.to_html(tmp_path / "r.html")
    assert "Reliability diagram" in page and "<svg" in page and "Confusion matrix" in page
    assert (
        "&lt;b&gt;bold&lt;/b&gt;" in page and "<b>bold</b>" not in page
    )  # reviewer text is escaped


def test_a_report_where_every_row_failed_has_no_numbers_and_no_nan():
    rows = _rows([1, 0])
    failed = [
        RowScore("r0", error_type="ModelTimeout", error="slow"),
        RowScore("r1", error_type="ModelTimeout", error="slow"),
    ]
    report = AlignmentReport.build(
        metric="m",
        kind="binary",
        rows=rows,
        scores=failed,
        threshold=0.5,
        before=[RowScore("r0", 0.9), RowScore("r1", 0.1)],
        n_resamples=20,
    )
    assert report.n_scored == 0 and report.failures == {"ModelTimeout": 2}
    assert all(e.value is None and e.n == 0 for e in report.statistics.values())
    assert report.n_paired == 0 and all(e.value is None for e in report.differences.values())
    assert "NaN" not in report.to_json()


def test_the_html_section_renders_from_a_saved_report(tmp_path):
    import json

    from assay.alignment.html import render_report

    rows = _rows([1, 0, 1, 0])
    results = [RowScore(f"r{i}", v) for i, v in enumerate([0.8, 0.3, 0.4, 0.2])]
    report = AlignmentReport.build(
        metric="m", kind="binary", rows=rows, scores=results, threshold=0.35, n_resamples=50
    )
    saved = json.loads(report.to_json())
    section = render_report(saved, section=True)
    assert section.lstrip().startswith("<section") and "<html" not in section
    assert section == render_report(report, section=True)


def test_ranking_report_by_hand():
    human = [["a", "b", "c"], ["a", "b", "c"], ["a", "b", "c"], ["x", "y"]]
    judge = [["a", "b", "c"], ["b", "a", "c"], ["c", "b", "a"], ["x", "z"]]
    before = [["c", "b", "a"], ["a", "b", "c"], ["c", "b", "a"], ["y", "x"]]
    report = AlignmentReport.build(
        metric="rank",
        kind="ranking",
        rows=_rows(human),
        scores=[RowScore(f"r{i}", v) for i, v in enumerate(judge)],
        threshold=None,
        before=[RowScore(f"r{i}", v) for i, v in enumerate(before)],
        n_resamples=100,
    )
    assert report.value("agreement") == pytest.approx(1 / 4)
    assert report.value("top1_agreement") == pytest.approx(2 / 4)  # r0 and r3 (x first)
    # tau per row: r0 1; r1 (b, a, c): 2 of 3 pairs concordant -> 1/3; r2 reversed -1;
    # r3 shares one item only: undefined, left out
    assert report.value("kendall") == pytest.approx((1 + 1 / 3 - 1) / 3)
    assert report["correlation"] == pytest.approx(1 / 9)
    # before: r0 -1, r1 1, r2 -1, r3 (y, x) -1 -> mean -1/2
    assert report.before["kendall"].value == pytest.approx(-0.5)
    assert report.differences["kendall"].value == pytest.approx(1 / 9 + 0.5)
    assert [w["id"] for w in report.worst] == ["r1", "r2", "r3"]


def test_the_worst_disagreements_show_values_readably():
    from assay.alignment.html import render_report

    scores = [RowScore("r0", 0.123456789), RowScore("r1", 0.9)]
    binary = AlignmentReport.build(
        metric="m", kind="binary", rows=_rows([1, 0]), scores=scores, threshold=0.5, n_resamples=20
    )
    page = render_report(binary, section=True)
    assert "<td>0.123" in page and "0.123456789" not in page
    ranked = AlignmentReport.build(
        metric="r",
        kind="ranking",
        rows=_rows([["a", "b"]]),
        scores=[RowScore("r0", ["b", "a"])],
        threshold=None,
        n_resamples=20,
    )
    assert "<td>b &gt; a" in render_report(ranked, section=True)
