"""assay.stats against reference values: scipy's live where scipy has the statistic, worked by hand
where only scikit-learn has it (scikit-learn is not installed here, so no value is claimed from
it; the hand working is in the comments). Arguments are always (truth, predicted)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from assay.stats.agreement import agreement, cohen_kappa, confusion_matrix
from assay.stats.calibration import brier, expected_calibration_error
from assay.stats.classification import balanced_accuracy, best_threshold, f1_score, roc_auc
from assay.stats.correlation import average_ranks, kendall, mae, pearson, spearman, with_fisher
from assay.stats.proportion import clopper_pearson, proportion, wilson

RNG = np.random.default_rng(11)
TRUTH = RNG.integers(0, 2, 40)
SCORES = np.round(np.clip(TRUTH * 0.3 + RNG.random(40) * 0.7, 0, 1), 1)  # rounded: many ties
GRADES = RNG.integers(1, 6, 30).astype(float)
JUDGED = np.clip(GRADES + RNG.integers(-1, 2, 30), 1, 5)


def test_roc_auc_is_the_mann_whitney_u_over_the_pairs():
    positives, negatives = SCORES[TRUTH == 1], SCORES[TRUTH == 0]
    u = sps.mannwhitneyu(positives, negatives).statistic
    assert roc_auc(TRUTH, SCORES) == pytest.approx(u / (len(positives) * len(negatives)))


def test_correlations_equal_scipys():
    assert pearson(GRADES, JUDGED) == pytest.approx(sps.pearsonr(GRADES, JUDGED).statistic)
    assert spearman(GRADES, JUDGED) == pytest.approx(sps.spearmanr(GRADES, JUDGED).statistic)
    assert kendall(GRADES, JUDGED) == pytest.approx(sps.kendalltau(GRADES, JUDGED).statistic)
    assert average_ranks(JUDGED).tolist() == sps.rankdata(JUDGED).tolist()
    assert mae([1, 2, 3], [1, 3, 5]) == pytest.approx(1.0)


def test_fisher_interval_uses_the_normal_quantile():
    found = with_fisher(pearson, GRADES, JUDGED)
    half = sps.norm.ppf(0.975) / np.sqrt(len(GRADES) - 3)
    r = sps.pearsonr(GRADES, JUDGED).statistic
    expected = np.tanh(np.arctanh(r) - half), np.tanh(np.arctanh(r) + half)
    assert found.interval == pytest.approx(expected)
    assert found.n == 30 and found.method == "fisher-z"


def test_proportion_intervals_equal_scipys():
    exact = sps.binomtest(7, 20).proportion_ci(confidence_level=0.9, method="exact")
    assert clopper_pearson(7, 20, 0.9) == pytest.approx((exact.low, exact.high))
    score = sps.binomtest(44, 50).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson(44, 50) == (score.low, score.high)
    assert proportion(0, 0).value is None


def test_classification_by_hand():
    # the balanced_accuracy_score example of scikit-learn's user guide, worked by hand:
    # truth 0 1 0 0 1 0, predicted 0 1 0 0 0 1: TPR 1/2, TNR 3/4 -> 0.625
    truth, predicted = [0, 1, 0, 0, 1, 0], [0, 1, 0, 0, 0, 1]
    assert balanced_accuracy(truth, predicted) == pytest.approx(0.625)
    # class 1: TP 1, FP 1, FN 1 -> 2/4; class 0: TP 3, FP 1, FN 1 -> 6/8
    assert f1_score(truth, predicted) == pytest.approx(0.5)
    assert f1_score(truth, predicted, positive=0) == pytest.approx(0.75)
    assert best_threshold([0, 0, 1, 1], [0.1, 0.2, 0.7, 0.9]) == (pytest.approx(0.45), 1.0)


def test_kappa_by_hand_unweighted_linear_quadratic():
    # truth 1 2 3 3, predicted 1 3 3 2: O has (1,1), (2,3), (3,3), (3,2); rows [1, 1, 2], columns [1, 1, 2].
    # E = outer / 4: unweighted sum(w*E) = 1 - (1 + 1 + 4) / 16 = 10/16, sum(w*O) = 2/4 -> 1 - 0.5/0.625 = 0.2
    truth, predicted = [1, 2, 3, 3], [1, 3, 3, 2]
    assert cohen_kappa(truth, predicted) == pytest.approx(0.2)
    # linear: sum(w*O) = 2 (two off by one); sum(w*E) = (1*1*1 + 1*2*2 + 1*1*1 + 1*2*1 + 2*1*2 + 2*1*1) / 4
    # = (1 + 4 + 1 + 2 + 4 + 2) / 4 = 3.5 -> 1 - 2 / 3.5 = 3/7
    assert cohen_kappa(truth, predicted, weights="linear") == pytest.approx(3 / 7)
    # quadratic: sum(w*O) = 2; sum(w*E) = (1 + 2*4 + 1 + 2 + 2*4 + 2) / 4 = 5.5 -> 1 - 2 / 5.5 = 7/11
    assert cohen_kappa(truth, predicted, weights="quadratic") == pytest.approx(7 / 11)
    assert confusion_matrix(truth, predicted, [1, 2, 3]).tolist() == [
        [1, 0, 0],
        [0, 0, 1],
        [0, 1, 1],
    ]
    assert agreement(truth, predicted) == 0.5
    assert cohen_kappa([1, 1.0, True], [1, 1, 1]) is None  # 1, 1.0 and True are one category


def test_calibration_by_hand():
    assert brier([1, 0], [0.8, 0.3]) == pytest.approx(0.065)
    assert expected_calibration_error([1, 0], [0.95, 0.05]) == pytest.approx(0.05)


@pytest.mark.parametrize(
    "undefined",
    [
        lambda: roc_auc([1, 1, 1], [0.2, 0.5, 0.9]),  # one class only
        lambda: balanced_accuracy([0, 0], [0, 1]),
        lambda: best_threshold([1, 1], [0.2, 0.4]),
        lambda: cohen_kappa(["a", "a"], ["a", "a"]),  # chance agreement is total
        lambda: cohen_kappa([], []),
        lambda: pearson([1, 2, 3], [5, 5, 5]),  # no spread
        lambda: pearson([1], [2]),
        lambda: spearman([1, 1, 1], [1, 2, 3]),
        lambda: kendall([1, 1, 1], [1, 2, 3]),
        lambda: agreement([], []),
        lambda: brier([], []),
        lambda: with_fisher(pearson, [1, 1, 1, 1, 1], [1, 2, 3, 4, 5]).value,
    ],
)
def test_undefined_is_none_never_nan(undefined):
    assert undefined() is None


def test_the_human_labels_come_first():
    truth, scores = [0, 0, 1, 1], [0.1, 0.6, 0.4, 0.9]
    assert roc_auc(truth, scores) == pytest.approx(0.75)
    with pytest.raises(ValueError, match="0 or 1"):
        roc_auc(scores, truth)  # scores where the labels belong
    assert balanced_accuracy(truth, [0, 0, 0, 1]) == pytest.approx(0.75)
    # f1 of class 1 is not symmetric in its arguments: predicted 1 1 1 1 vs truth 0 0 1 1
    assert f1_score([0, 0, 1, 1], [1, 1, 1, 1]) == pytest.approx(2 / 3)
