"""`assay.stats.ppi_mean`: PPI++ for a mean, checked against ppi-python and by simulation."""

from __future__ import annotations

import math

import numpy as np
import ppi_py
import pytest

from assay.errors import UsageError
from assay.stats import Estimate
from assay.stats.ppi import ppi_mean


def draw(rng, n, big_n, *, bias=0.15, noise=0.25, p=0.6):
    """Labels ~ Bernoulli(p); the judge's score tracks the label but runs `bias` high."""

    def judge(labels):
        return np.clip(0.6 * labels + 0.2 + bias + rng.normal(0, noise, labels.size), 0, 1)

    labels = rng.binomial(1, p, n).astype(float)
    hidden = rng.binomial(1, p, big_n).astype(float)
    return labels, judge(labels), judge(hidden)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("weighted", [False, True])
def test_agrees_with_ppi_python(seed, weighted):
    rng = np.random.default_rng(seed)
    y, f, f_u = draw(rng, 40 + 30 * seed, 500, noise=0.1 + 0.2 * seed)
    w = rng.uniform(0.5, 3.0, y.size) if weighted else None
    w_u = rng.uniform(0.5, 3.0, f_u.size) if weighted else None
    ours = ppi_mean(y, f, f_u, alpha=0.05, weights=w, weights_unlabeled=w_u)
    point = ppi_py.ppi_mean_pointestimate(y, f, f_u, w=w, w_unlabeled=w_u)
    low, high = ppi_py.ppi_mean_ci(y, f, f_u, alpha=0.05, w=w, w_unlabeled=w_u)
    assert isinstance(ours, Estimate)
    assert ours.value == pytest.approx(float(np.ravel(point)[0]), abs=1e-9)
    assert (ours.low, ours.high) == pytest.approx(
        (float(np.ravel(low)[0]), float(np.ravel(high)[0])), abs=1e-9
    )
    assert 0 <= ours.lam <= 1 and ours.n == y.size and ours.n_unlabeled == f_u.size


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_a_fixed_lambda_agrees_too(lam):
    y, f, f_u = draw(np.random.default_rng(7), 80, 400)
    ours = ppi_mean(y, f, f_u, alpha=0.1, lam=lam)
    low, high = ppi_py.ppi_mean_ci(y, f, f_u, alpha=0.1, lam=lam)
    assert (ours.low, ours.high) == pytest.approx((float(low[0]), float(high[0])), abs=1e-9)


def test_the_interval_covers_the_truth_and_is_narrower_than_the_labels_alone():
    rng = np.random.default_rng(2026)
    truth, covered, ppi_width, label_width, judge_covers = 0.6, 0, 0.0, 0.0, 0
    draws = 500
    for _ in range(draws):
        y, f, f_u = draw(rng, 100, 1000)
        estimate = ppi_mean(y, f, f_u)
        covered += estimate.low <= truth <= estimate.high
        ppi_width += estimate.high - estimate.low
        label_width += 2 * 1.959964 * y.std() / math.sqrt(y.size)  # the labels' normal interval
        pooled = np.concatenate([f, f_u])
        half = 1.959964 * pooled.std() / math.sqrt(pooled.size)
        judge_covers += abs(pooled.mean() - truth) <= half
    assert covered / draws >= 0.93
    assert ppi_width < 0.9 * label_width  # the judge's scores buy a narrower interval
    assert judge_covers / draws < 0.05  # while the judge's own mean is biased: it misses


def test_an_uninformative_judge_falls_back_to_the_labels():
    rng = np.random.default_rng(3)
    y = rng.binomial(1, 0.5, 200).astype(float)
    estimate = ppi_mean(y, rng.uniform(size=200), rng.uniform(size=2000))
    assert estimate.lam < 0.15
    assert estimate.value == pytest.approx(y.mean(), abs=0.03)
    constant = ppi_mean(y, [0.7] * 200, [0.7] * 50)
    assert constant.lam == 0 and constant.value == pytest.approx(y.mean())
    assert constant.method == "labels (judge uninformative)"


def test_labels_to_halve_the_interval():
    y, f, f_u = draw(np.random.default_rng(11), 50, 100_000, noise=0.3)
    estimate = ppi_mean(y, f, f_u)
    # with a nearly unlimited unlabelled pool only the labels' part matters: about 4x the labels
    assert 180 <= estimate.labels_to_halve <= 220
    more = ppi_mean(*draw(np.random.default_rng(12), estimate.labels_to_halve, 100_000, noise=0.3))
    assert (more.high - more.low) == pytest.approx((estimate.high - estimate.low) / 2, rel=0.25)


def test_undefined_and_bad_input():
    assert ppi_mean([1.0], [0.9], [0.5, 0.6]).value is None  # one label: no interval
    with pytest.raises(UsageError, match="y_labeled has 3 values and yhat_labeled 2"):
        ppi_mean([1, 0, 1], [0.9, 0.1], [0.5])
    with pytest.raises(UsageError, match=r"yhat_unlabeled\[1\] is nan"):
        ppi_mean([1, 0], [0.9, 0.1], [0.5, float("nan")])
    with pytest.raises(UsageError, match="alpha must be between 0 and 1"):
        ppi_mean([1, 0], [0.9, 0.1], [0.5], alpha=5)
    with pytest.raises(UsageError, match="weights has 1 values for 2 rows"):
        ppi_mean([1, 0], [0.9, 0.1], [0.5], weights=[1.0])
