"""What a large run keeps in memory (issue #45, item 10): the parts that do not need every row.

The figures themselves are measured by `benchmarks/memory.py` (results in benchmarks/results/);
these tests pin the behaviour the savings rest on.
"""

from __future__ import annotations

import hashlib
import json

from assay import evaluate
from assay.engine.checkpoint import fingerprint


def _as_before(rows, specs, extra) -> str:
    """The fingerprint as it was computed before it was fed a row at a time: run directories
    written then must still be recognised."""
    payload = json.dumps(
        {"rows": rows, "metrics": specs, "extra": extra},
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def test_the_fingerprint_fed_a_row_at_a_time_is_the_fingerprint_of_the_whole_list():
    cases = [
        ([], [], {}),
        ([{"b": 1, "a": "é\udcff", "c": [1.5, None]}], [{"name": "x", "k": [1, 2]}], {"x": 1}),
        ([{"z": {"y": 1, "x": None}, "a": n} for n in range(50)], [{"n": 1}], {"executor": "ray"}),
    ]
    for rows, specs, extra in cases:
        assert fingerprint(iter(rows), specs, extra) == _as_before(rows, specs, extra)


def test_cells_that_called_no_model_share_one_empty_usage(tmp_path):
    rows = [{"response": f"a{n}", "reference": f"a{n % 2}"} for n in range(20)]
    first = evaluate(rows, ["exact_match"], run_dir=tmp_path / "run", show_progress=False)
    resumed = evaluate(rows, ["exact_match"], run_dir=tmp_path / "run", show_progress=False)
    for result in (first, resumed):
        usages = [row["exact_match"] for row in result.usages]
        assert all(usage is usages[0] for usage in usages)
        assert usages[0].requests == 0 and usages[0].cost == 0
    assert resumed.resumed_cells == 20
