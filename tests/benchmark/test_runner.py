"""Runner details that need no model."""

from __future__ import annotations

from types import SimpleNamespace

from assay.benchmark.runner import fit_concurrency


def test_concurrency_is_capped_at_the_local_judges_slots():
    from assay.models.providers.base import Profile

    # Capabilities are the provider's Profile, whatever its name.
    local = SimpleNamespace(
        llm=SimpleNamespace(provider=SimpleNamespace(name="any", profile=Profile(concurrency=2)))
    )
    remote = SimpleNamespace(
        llm=SimpleNamespace(provider=SimpleNamespace(name="openai", profile=Profile()))
    )
    assert fit_concurrency(local, 8) == 2
    assert fit_concurrency(local, 1) == 1
    assert fit_concurrency(remote, 8) == 8
    assert fit_concurrency(SimpleNamespace(), 8) == 8  # a metric without a judge


def test_cost_per_item_counts_only_the_rows_a_run_scored(metaeval_dir, tmp_path):
    from assay.benchmark.runner import run_benchmark
    from assay.metrics.registry import create_metric

    def run(limit):
        return run_benchmark(
            "bfcl",
            create_metric("tool_call_f1"),
            data_dir=metaeval_dir,
            limit=limit,
            runs_dir=tmp_path,
            show_progress=False,
        )

    first = run(20)
    assert first["cost"]["rows_computed"] == first["cells"]["rows"] > 0
    assert (
        first["cost"]["seconds_per_item"]
        == first["cost"]["wall_seconds"] / first["cost"]["rows_computed"]
    )
    again = run(20)  # the same run directory: every row is resumed, none is scored again
    assert again["cost"]["rows_computed"] == 0 and again["cost"]["seconds_per_item"] is None


def test_the_benchmark_reads_checkpoint_cells_with_line_separators_and_bad_lines(tmp_path):
    """Reasons may hold U+2028 or a lone surrogate; a bad line is passed over, not fatal."""
    import json as _json

    from assay.benchmark.runner import _checkpoint_cells
    from assay.schema.dataset import json_line
    from assay.schema.outcome import Cell, Ok

    good = Cell(
        row=0, metric="m", outcome=Ok(value=0.5, reason="one\u2028two\x85three"), seconds=1.0
    )
    odd = Cell(row=1, metric="m", outcome=Ok(value=1.0, reason="lone \udcff"), seconds=2.0)
    lines = [
        json_line(good.model_dump(mode="json")),
        b"\xff\xfe not json\n".decode("latin-1"),
        json_line(odd.model_dump(mode="json")),
    ]
    (tmp_path / "cells.jsonl").write_bytes(
        "".join(line if line.endswith("\n") else line + "\n" for line in lines).encode(
            "utf-8", "surrogateescape"
        )
    )

    cells = _checkpoint_cells(tmp_path, "m", 5)

    assert sorted(cells) == [0, 1]
    assert cells[0].outcome.reason == "one\u2028two\x85three"
    assert cells[1].outcome.reason == "lone \udcff"
    assert _json.loads(json_line({"a": "\udcff"}))["a"] == "\udcff"
