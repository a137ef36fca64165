"""The one module for aggregates, row pairing and paired differences (results, reports, experiments)."""

from __future__ import annotations

import math

import pytest

from assay.schema.aggregate import (
    aggregate,
    bootstrap_mean_ci,
    pair_rows,
    paired_differences,
    unique_ids,
)


def test_aggregate_reads_numbers_bools_and_pass_fail_labels():
    found = aggregate([0.5, 1, True, "Pass", "no", None, "positive", float("nan"), [1]])
    assert found == (pytest.approx(3.5 / 5), 5, 9, pytest.approx(5 / 9))
    mean, n_scored, n_rows, coverage = aggregate(["pass", "fail", "pass", None])  # a pass rate
    assert (mean, n_scored, n_rows, coverage) == (pytest.approx(2 / 3), 3, 4, 0.75)


def test_aggregate_of_nothing_scored():
    assert aggregate([]) == (None, 0, 0, 0.0)
    assert aggregate([None, "a sentence"]) == (None, 0, 2, 0.0)
    assert aggregate(iter([0.1] * 10)).mean == pytest.approx(0.1)  # any iterable; fsum: no drift


def test_unique_ids():
    assert unique_ids([{"id": 1}, {"id": "1"}])  # 1 and "1" are distinct ids
    assert not unique_ids([{"id": 1}, {"id": 1}])
    assert (
        not unique_ids([{"id": 1}, {"q": 2}])
        and not unique_ids([{"id": None}])
        and not unique_ids([])
    )
    assert unique_ids([{"id": {"b": 1, "a": 2}}], [{"id": {"a": 2, "b": 1}}])
    assert not unique_ids([{"id": 1}], [])


def test_pairs_by_id_whatever_the_order_then_rows_only_in_other():
    a = [{"id": "x"}, {"id": "y"}, {"id": "z"}]
    b = [{"id": "w"}, {"id": "z"}, {"id": "x"}]
    pairing = pair_rows(a, b)
    assert pairing.matched_by == "id"
    assert [(p.baseline, p.other) for p in pairing.pairs] == [(0, 2), (1, None), (2, 1), (None, 0)]
    assert pairing.pairs[0].key == '"x"'


def test_pairs_by_position_without_unique_ids():
    a, b = [{"id": 1}, {"id": 1}], [{"id": 1}, {"id": 2}, {"id": 3}]
    pairing = pair_rows(a, b)
    assert pairing.matched_by == "position"
    assert [(p.key, p.baseline, p.other) for p in pairing.pairs] == [
        (0, 0, 0),
        (1, 1, 1),
        (2, None, 2),
    ]
    # positions in the dataset (an experiment's `index`), and a decision made over more runs
    pairing = pair_rows([{}, {}], [{}], positions=([3, 5], [5]))
    assert [(p.key, p.baseline, p.other) for p in pairing.pairs] == [(3, 0, None), (5, 1, 0)]
    assert pair_rows([{"id": 1}], [{"id": 1}], by_id=False).matched_by == "position"


def test_paired_differences_skip_rows_without_both_values_and_read_labels():
    pairs = [
        ("a", 0.5, 0.7),
        ("b", None, 0.9),
        ("c", 0.4, "n/a"),
        ("d", "fail", "pass"),
        ("e", 1, 1.0),
    ]
    found = paired_differences(pairs)
    assert found.n_pairs == 3 and found.mean == pytest.approx((0.2 + 1.0 + 0.0) / 3)
    assert (found.higher, found.lower, found.same) == (2, 0, 1)
    assert [key for key, _, _ in found.rows] == ["d", "a", "e"]  # biggest change first
    assert found.rows[0] == ("d", 0.0, 1.0)
    assert found.low is not None and found.low <= found.mean <= found.high


@pytest.mark.parametrize(
    ("pairs", "direction"),
    [
        ([], "none"),
        ([("a", 1, 2)], "one"),
        ([(i, 0.0, 0.3) for i in range(10)], "higher"),
        ([(i, 0.3, 0.0) for i in range(10)], "lower"),
        ([(i, 0.5, 0.5 + (0.1 if i % 2 else -0.1)) for i in range(10)], "unclear"),
    ],
)
def test_direction(pairs, direction):
    found = paired_differences(pairs)
    assert found.direction == direction
    if direction in ("none", "one"):
        assert found.low is None and found.high is None


def test_the_bootstrap_is_seeded_and_is_the_one_every_surface_uses():
    deltas = [((i * 37) % 11 - 4) / 10 for i in range(120)]
    first = bootstrap_mean_ci(deltas, resamples=2000, seed=7, confidence=0.95)
    assert bootstrap_mean_ci(deltas, resamples=2000, seed=7, confidence=0.95) == first
    assert bootstrap_mean_ci(deltas, resamples=2000, seed=8, confidence=0.95) != first
    found = paired_differences([(i, 0.0, d) for i, d in enumerate(deltas)], resamples=2000, seed=7)
    assert (found.low, found.high) == first
    assert bootstrap_mean_ci([0.2] * 5) == (pytest.approx(0.2), pytest.approx(0.2))
    low, high = bootstrap_mean_ci(deltas)
    assert low < math.fsum(deltas) / len(deltas) < high


def test_the_surfaces_reexport_the_shared_functions():
    from assay.experiments import compare as experiments_compare
    from assay.schema import aggregate as shared

    assert experiments_compare.bootstrap_mean_ci is shared.bootstrap_mean_ci
