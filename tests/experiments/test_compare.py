"""compare: means with coverage, paired per-row deltas, and a seeded paired bootstrap interval."""

from __future__ import annotations

import random

import pytest

from assay.errors import UsageError
from assay.experiments import Experiment, compare_experiments
from assay.experiments.compare import bootstrap_mean_ci

from .helpers import write_experiment


def scores(seed: int, n: int = 40) -> list[float]:
    generator = random.Random(seed)
    return [round(generator.uniform(0.0, 0.7), 3) for _ in range(n)]


def runs(tmp_path, a_rows, b_rows, **kwargs):
    write_experiment(tmp_path, "A", a_rows)
    write_experiment(tmp_path, "B", b_rows, **kwargs)
    return [Experiment.load("A", root_dir=tmp_path), Experiment.load("B", root_dir=tmp_path)]


def test_a_constant_improvement_has_an_interval_excluding_zero(tmp_path):
    base = scores(1)
    a = [{"id": f"r{i}", "score": s} for i, s in enumerate(base)]
    b = [{"id": f"r{i}", "score": s + 0.2} for i, s in enumerate(base)]
    result = compare_experiments(runs(tmp_path, a, b))
    diff = result.difference("B", "score")
    assert diff.mean_delta == pytest.approx(0.2)
    assert diff.low == pytest.approx(0.2) and diff.high == pytest.approx(0.2)
    assert diff.includes_zero is False and diff.verdict.startswith("B higher")
    assert (diff.better, diff.worse, diff.same, diff.n_pairs) == (40, 0, 0, 40)
    assert result.mean("B", "score").mean == pytest.approx(result.mean("A", "score").mean + 0.2)


def test_identical_runs_have_an_interval_including_zero(tmp_path):
    rows = [{"id": i, "score": s} for i, s in enumerate(scores(2))]
    diff = compare_experiments(runs(tmp_path, rows, rows)).difference("B", "score")
    assert diff.mean_delta == 0 and diff.includes_zero is True
    assert "includes 0" in diff.verdict and diff.same == 40


def test_noise_without_a_shift_includes_zero_and_a_real_shift_does_not(tmp_path):
    base = scores(3, n=60)
    noise = random.Random(4)
    jitter = [noise.gauss(0, 0.1) for _ in base]
    a = [{"score": s} for s in base]
    unshifted = [{"score": s + j} for s, j in zip(base, jitter, strict=True)]
    shifted = [{"score": s + 0.15 + j} for s, j in zip(base, jitter, strict=True)]
    write_experiment(tmp_path, "A", a)
    write_experiment(tmp_path, "same", unshifted)
    write_experiment(tmp_path, "better", shifted)
    loaded = [Experiment.load(name, root_dir=tmp_path) for name in ("A", "same", "better")]
    result = compare_experiments(loaded)
    assert result.matched_by == "position"
    assert result.difference("same", "score").includes_zero is True
    better = result.difference("better", "score")
    assert better.includes_zero is False and 0.1 < better.low < 0.15 < better.high < 0.2


def test_the_interval_is_reproducible_with_a_seed():
    deltas = [random.Random(5).uniform(-1, 1) for _ in range(30)]
    deltas = [d + i / 100 for i, d in enumerate(deltas)]
    first = bootstrap_mean_ci(deltas, resamples=2000, seed=7, confidence=0.95)
    assert bootstrap_mean_ci(deltas, resamples=2000, seed=7, confidence=0.95) == first
    assert bootstrap_mean_ci(deltas, resamples=2000, seed=8, confidence=0.95) != first
    wider = bootstrap_mean_ci(deltas, resamples=2000, seed=7, confidence=0.99)
    assert wider[0] < first[0] and wider[1] > first[1]


def test_rows_are_matched_by_id_whatever_their_order(tmp_path):
    a = [{"id": "x", "score": 0.1}, {"id": "y", "score": 0.5}, {"id": "z", "score": 0.9}]
    b = [{"id": "z", "score": 1.0}, {"id": "x", "score": 0.1}, {"id": "y", "score": 0.2}]
    result = compare_experiments(runs(tmp_path, a, b))
    assert result.matched_by == "id"
    by_key = {row["key"]: row["delta"] for row in result.difference("B", "score").rows}
    assert by_key == pytest.approx({"x": 0.0, "y": -0.3, "z": 0.1})
    assert result.difference("B", "score").rows[0]["key"] == "y"  # biggest change first


def test_coverage_counts_rows_with_a_number_and_errors_do_not_pair(tmp_path):
    a = [{"id": i, "score": 0.5} for i in range(4)]
    b = [
        {"id": 0, "score": 0.7},
        {"id": 1, "score": "n/a"},
        {"id": 2, "score": {"value": 0.9, "reason": "ok"}},
        {"id": 3, "score": 0.1},
    ]
    result = compare_experiments(runs(tmp_path, a, b, errors={3: "judge down"}))
    assert result.mean("B", "score").coverage == "2/4"
    assert result.mean("A", "score").coverage == "4/4"
    diff = result.difference("B", "score")
    assert diff.n_pairs == 2 and diff.mean_delta == pytest.approx(0.3)


def test_metrics_are_detected_or_chosen(tmp_path):
    a = [{"id": 1, "score": 0.5, "latency": 3, "answer": "x", "passed": True}]
    b = [{"id": 1, "score": 0.6, "latency": 2, "answer": "y", "passed": False}]
    loaded = runs(tmp_path, a, b)
    assert compare_experiments(loaded).metrics == ["score", "latency", "passed"]
    assert compare_experiments(loaded, ["latency"]).metrics == ["latency"]
    with pytest.raises(UsageError, match=r"no numeric column 'answer'.*latency, passed, score"):
        compare_experiments(loaded, ["answer"])


def test_one_pair_has_no_interval(tmp_path):
    diff = compare_experiments(runs(tmp_path, [{"s": 1}], [{"s": 2}])).difference("B", "s")
    assert diff.low is None and diff.includes_zero is None and "too few" in diff.verdict


def test_bad_requests_are_usage_errors(tmp_path):
    loaded = runs(tmp_path, [{"s": 1}], [{"s": 2}])
    with pytest.raises(UsageError, match="at least two"):
        compare_experiments(loaded[:1])
    with pytest.raises(UsageError, match="distinct"):
        compare_experiments([loaded[0], loaded[0]])
    with pytest.raises(UsageError, match="confidence"):
        compare_experiments(loaded, confidence=95)


def test_pass_fail_labels_compare_as_pass_rates(tmp_path):
    verdicts_a = ["pass", "fail", "fail", "pass"] * 10
    verdicts_b = ["pass", "pass", "fail", "pass"] * 10
    a = [
        {"id": i, "judge": {"value": v, "reason": "r"}, "expected": "yes"}
        for i, v in enumerate(verdicts_a)
    ]
    b = [
        {"id": i, "judge": {"value": v, "reason": "r"}, "expected": "yes"}
        for i, v in enumerate(verdicts_b)
    ]
    loaded = runs(tmp_path, a, b)
    # labels alone do not make a column a metric when detecting; named, they count as 1/0
    assert "expected" not in compare_experiments(loaded).metrics
    result = compare_experiments(loaded, ["judge"])
    assert result.mean("A", "judge").mean == 0.5 and result.mean("B", "judge").mean == 0.75
    diff = result.difference("B", "judge")
    assert diff.mean_delta == pytest.approx(0.25) and (diff.better, diff.worse, diff.same) == (
        10,
        0,
        30,
    )
