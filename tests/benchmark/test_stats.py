"""The benchmark's statistics (`assay.stats`) against small fixtures computed by hand (the working
is in the comments). Arguments are (truth, predicted): the human labels first."""

from __future__ import annotations

import math

import pytest

from assay.benchmark.scoring import _stratified
from assay.benchmark.suites import stratified_sample
from assay.stats import classification, correlation, proportion


def test_clopper_pearson_closed_forms():
    # k = 0: the upper bound solves (1 - p)^n = 0.025, so p = 1 - 0.025^(1/5) = 1 - 0.47818 = 0.52182.
    assert proportion.clopper_pearson(0, 5) == pytest.approx((0.0, 0.5218238), abs=1e-6)
    # k = n: the lower bound solves p^n = 0.025, so p = 0.025^(1/5) = 0.47818.
    assert proportion.clopper_pearson(5, 5) == pytest.approx((0.4781762, 1.0), abs=1e-6)
    # k = 1, n = 2: lower = Beta(1, 2) quantile 0.025, CDF 1 - (1 - x)^2 -> x = 1 - sqrt(0.975) = 0.012579;
    # upper = Beta(2, 1) quantile 0.975, CDF x^2 -> x = sqrt(0.975) = 0.987421.
    assert proportion.clopper_pearson(1, 2) == pytest.approx((0.0125791, 0.9874209), abs=1e-6)


def test_pairwise_accuracy_counts_ties_as_half():
    # pairs (3 vs 1) win, (2 vs 2) tie, (1 vs 2) loss, (5 vs 4) win: (2 + 0.5) / 4 = 0.625
    estimate = proportion.pairwise_accuracy([3, 2, 1, 5], [1, 2, 2, 4])
    assert estimate.value == 0.625 and estimate.n == 4
    assert 0 < estimate.low < 0.625 < estimate.high < 1
    # k = n / 2 makes the exact interval symmetric about 1/2: Beta(a; k, n-k+1) = 1 - Beta(1-a; n-k+1, k)
    half = proportion.pairwise_accuracy([3, 2, 1], [1, 2, 2])  # win, tie, loss: 1.5 / 3
    assert half.value == 0.5
    assert half.low == pytest.approx(1 - half.high, abs=1e-12)
    # all wins: the lower bound is 0.025^(1/n), here n = 5 -> 0.47818
    assert proportion.pairwise_accuracy([1] * 5, [0] * 5).low == pytest.approx(0.4781762, abs=1e-6)


def test_roc_auc_balanced_accuracy_and_f1_by_hand():
    scores = [0.9, 0.6, 0.4, 0.3, 0.7, 0.2]
    labels = [1, 1, 1, 1, 0, 0]
    # AUC over the 4 x 2 (positive, negative) pairs: 0.9 beats 0.7 and 0.2 (2); 0.6, 0.4 and 0.3 beat
    # only 0.2 (1 each): 5 / 8 = 0.625
    assert classification.roc_auc(labels, scores) == pytest.approx(0.625)
    # threshold 0.5 predicts positive for 0.9, 0.6, 0.7: TP 2, FP 1, FN 2, TN 1
    # TPR 2/4, TNR 1/2 -> balanced accuracy 0.5
    decisions = [s >= 0.5 for s in scores]
    assert classification.balanced_accuracy(labels, decisions) == pytest.approx(0.5)
    # class 1: precision 2/3, recall 1/2 -> F1 = 2 * 2 / (2 * 2 + 1 + 2) = 4/7
    assert classification.f1_score(labels, decisions, positive=1) == pytest.approx(4 / 7)
    # class 0 (predicted when score < 0.5: 0.4, 0.3, 0.2): TP 1 (0.2), FP 2, FN 1 (0.7) -> 2 / (2 + 2 + 1) = 0.4
    assert classification.f1_score(labels, decisions, positive=0) == pytest.approx(0.4)


def test_roc_auc_ties_count_half():
    # positives 0.5, 0.5; negatives 0.5, 0.2: each positive ties 0.5 (0.5) and beats 0.2 (1): 3 / 4
    assert classification.roc_auc([1, 1, 0, 0], [0.5, 0.5, 0.5, 0.2]) == pytest.approx(0.75)
    assert classification.roc_auc([1, 1], [0.1, 0.2]) is None  # one class only


def test_stratified_bootstrap_is_seeded_and_keeps_the_classes():
    scores = [0.9, 0.8, 0.75, 0.6, 0.55, 0.4, 0.7, 0.5, 0.3, 0.2, 0.1, 0.05]
    labels = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    first = _stratified(classification.roc_auc, labels, scores, seed=7, n_boot=500)
    again = _stratified(classification.roc_auc, labels, scores, seed=7, n_boot=500)
    assert (first.low, first.high) == (again.low, again.high)
    assert first.low <= first.value <= first.high
    # every resample has exactly the 6 positives and 6 negatives of the data
    positives = _stratified(lambda y, s: float(y.sum()), labels, scores, seed=1, n_boot=300)
    assert positives.interval == (6.0, 6.0)
    # perfectly separated classes stay separated in every resample that keeps both classes: [1, 1]
    separated = _stratified(classification.roc_auc, [1, 1, 0, 0], [0.9, 0.8, 0.2, 0.1], 0, 200)
    assert (separated.value, separated.low, separated.high) == (1.0, 1.0, 1.0)


def test_pearson_with_fisher_interval():
    # x = 1..4, y = 1, 3, 2, 4: deviations (-1.5, -0.5, 0.5, 1.5) and (-1.5, 0.5, -0.5, 1.5);
    # sum of products 2.25 - 0.25 - 0.25 + 2.25 = 4, sums of squares 5 and 5 -> r = 0.8.
    # Fisher: atanh(0.8) = 1.098612, se = 1/sqrt(4 - 3) = 1 -> tanh(1.098612 -/+ 1.959964) = -0.69695, 0.99560
    estimate = correlation.with_fisher(correlation.pearson, [1, 2, 3, 4], [1, 3, 2, 4])
    assert estimate.value == pytest.approx(0.8)
    assert (estimate.low, estimate.high) == pytest.approx((-0.6969534, 0.9956003), abs=1e-6)
    # n_eff overrides the count used for the interval (duplicated rows), not the coefficient
    assert (
        correlation.with_fisher(correlation.pearson, [1, 2, 3, 4], [1, 3, 2, 4], n_eff=3).low
        is None
    )


def test_spearman_by_hand():
    # ranks x = 1..5, y = 2, 1, 4, 3, 5: d = -1, 1, -1, 1, 0, sum d^2 = 4 -> rho = 1 - 6*4 / (5*24) = 0.8
    # interval: se = sqrt(1.06 / 2) = 0.728011 -> tanh(1.098612 -/+ 1.426872) = -0.31696, 0.98728
    estimate = correlation.with_fisher(correlation.spearman, [1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    assert estimate.value == pytest.approx(0.8)
    assert (estimate.low, estimate.high) == pytest.approx((-0.3169592, 0.9872753), abs=1e-6)
    # ties get average ranks: y = 1, 1, 2 -> 1.5, 1.5, 3; r = 1.5 / sqrt(2 * 1.5) = 0.866025 (n = 3: no interval)
    tied = correlation.with_fisher(correlation.spearman, [1, 2, 3], [1, 1, 2])
    assert tied.value == pytest.approx(math.sqrt(3) / 2) and tied.low is None


def test_stratified_sample_keeps_proportions_and_is_seeded():
    labels = [0] * 70 + [1] * 30
    sample = stratified_sample(labels, 10, seed=3)
    assert sample == sorted(sample) and len(set(sample)) == 10
    assert sum(labels[i] for i in sample) == 3  # 30% of 10
    assert stratified_sample(labels, 10, seed=3) == sample
    assert stratified_sample(labels, 10, seed=4) != sample
    # 172 / 28 into 20: exact 17.2 / 2.8 -> 17 + 2, the larger remainder (0.8) gets the last one -> 17 / 3
    skewed = [1] * 172 + [0] * 28
    assert sum(skewed[i] for i in stratified_sample(skewed, 20)) == 17
    assert stratified_sample([1, 0], 5) == [0, 1]


def test_best_threshold_by_hand():
    # scores 0.1 0.3 0.6 0.8 0.9 with labels 0 0 1 0 1: midpoints 0.2, 0.45, 0.7, 0.85 and one
    # below 0.1. At 0.45: TPR 2/2, TNR 2/3 -> 0.8333; at 0.85: TPR 1/2, TNR 3/3 -> 0.75.
    threshold, accuracy = classification.best_threshold([0, 0, 1, 0, 1], [0.1, 0.3, 0.6, 0.8, 0.9])
    assert threshold == pytest.approx(0.45) and accuracy == pytest.approx(5 / 6)
    # perfectly separated: any midpoint between the classes; the one nearest 0.5 wins the tie
    threshold, accuracy = classification.best_threshold([0, 0, 1, 1], [0.1, 0.2, 0.7, 0.9])
    assert threshold == pytest.approx(0.45) and accuracy == 1.0
    assert classification.best_threshold([1, 1], [0.2, 0.4]) is None
