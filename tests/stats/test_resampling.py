"""The one bootstrap (seeded, percentile, paired, stratified) and the one pairing rule."""

from __future__ import annotations

import numpy as np
import pytest

from assay.stats.bootstrap import bootstrap, bootstrap_mean_ci, resample_indices
from assay.stats.classification import roc_auc
from assay.stats.estimate import Estimate
from assay.stats.pairing import Change, Difference, pair_rows, paired_differences

VALUES = [((i * 37) % 11 - 4) / 10 for i in range(60)]


def test_the_bootstrap_is_seeded():
    first = bootstrap(np.mean, [VALUES], resamples=500, seed=3)
    assert bootstrap(np.mean, [VALUES], resamples=500, seed=3) == first
    assert bootstrap(np.mean, [VALUES], resamples=500, seed=4).interval != first.interval
    assert first.low < first.value < first.high and first.n == 60
    assert first.method == "bootstrap (500, seed 3)"


def test_the_mean_interval_is_the_same_bootstrap_vectorised():
    general = bootstrap(np.mean, [VALUES], resamples=700, seed=5)
    assert bootstrap_mean_ci(VALUES, resamples=700, seed=5) == pytest.approx(general.interval)


def test_columns_are_resampled_together_and_strata_keep_their_size():
    truth = [1, 1, 1, 0, 0, 0, 0, 0]
    for chunk in resample_indices(8, resamples=50, seed=1, strata=truth):
        assert (np.asarray(truth)[chunk].sum(axis=1) == 3).all()
    paired = bootstrap(lambda a, b: float(np.mean(a - b)), [VALUES, VALUES], resamples=200)
    assert paired.interval == (0.0, 0.0)  # each resample takes the same rows of both columns


def test_undefined_resamples_are_left_out_and_counted():
    truth, scores = [1, 0, 1, 0, 1], [0.9, 0.1, 0.8, 0.3, 0.7]
    found = bootstrap(roc_auc, [truth, scores], resamples=300, seed=0)
    assert found.value == 1.0 and found.degenerate_resamples > 0
    assert bootstrap(roc_auc, [[1, 1], [0.2, 0.3]]) == Estimate(
        None, None, None, 2, "bootstrap (2000, seed 0)"
    )


def test_pairing_by_id_leaves_out_and_counts_rows_in_one_run_only():
    pairing = pair_rows(
        [{"id": "a"}, {"id": "b"}, {"id": "c"}], [{"id": "c"}, {"id": "d"}, {"id": "a"}]
    )
    assert pairing.matched_by == "id"
    assert [(p.baseline, p.other) for p in pairing.matched] == [(0, 2), (2, 0)]
    assert pairing.left_out == 2  # b only in the baseline, d only in the other run


def test_pairing_by_position_without_unique_ids():
    pairing = pair_rows([{"q": 1}, {"q": 2}], [{"q": 1}, {"q": 2}, {"q": 3}])
    assert pairing.matched_by == "position" and len(pairing.matched) == 2
    assert pairing.left_out == 1


def test_a_difference_counts_only_pairs_with_both_values():
    found = paired_differences(
        [("a", 0.2, 0.5), ("b", None, 1.0), ("c", "pass", "fail"), ("d", 1, 1)]
    )
    assert isinstance(found, Difference)
    assert found.n_pairs == 3 and found.mean_delta == pytest.approx((0.3 - 1 + 0) / 3)
    assert (found.higher, found.lower, found.same) == (1, 1, 1)
    assert found.rows[0] == Change("c", 1.0, 0.0) and found.rows[0]["delta"] == -1.0
    assert found.mean == found.mean_delta and found.better == found.higher  # the older names
    assert found.includes_zero is True and found.direction == "unclear"
