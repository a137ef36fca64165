"""Runner details that need no model."""

from __future__ import annotations

from types import SimpleNamespace

from assay.benchmark.runner import fit_concurrency


def test_concurrency_is_capped_at_the_local_judges_slots():
    local = SimpleNamespace(llm=SimpleNamespace(provider=SimpleNamespace(name="local",
                                                                         settings=SimpleNamespace(n_parallel=2))))
    remote = SimpleNamespace(llm=SimpleNamespace(provider=SimpleNamespace(name="openai")))
    assert fit_concurrency(local, 8) == 2
    assert fit_concurrency(local, 1) == 1
    assert fit_concurrency(remote, 8) == 8
    assert fit_concurrency(SimpleNamespace(), 8) == 8  # a metric without a judge


def test_cost_per_item_counts_only_the_rows_a_run_scored(metaeval_dir, tmp_path):
    from assay.benchmark.runner import run_benchmark
    from assay.metrics.registry import create_metric

    def run(limit):
        return run_benchmark("bfcl", create_metric("tool_call_f1"), data_dir=metaeval_dir, limit=limit,
                             runs_dir=tmp_path, show_progress=False)

    first = run(20)
    assert first["cost"]["rows_computed"] == first["cells"]["rows"] > 0
    assert first["cost"]["seconds_per_item"] == first["cost"]["wall_seconds"] / first["cost"]["rows_computed"]
    again = run(20)  # the same run directory: every row is resumed, none is scored again
    assert again["cost"]["rows_computed"] == 0 and again["cost"]["seconds_per_item"] is None
