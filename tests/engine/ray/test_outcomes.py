"""A Ray run gives the same outcomes as a local run, and its output directory says so on its own."""

from __future__ import annotations

import json

import pytest

from assay import evaluate
from assay.engine.ray.executor import RayExecutor
from assay.engine.ray.output import OutputDirectory, row_ids
from assay.metrics.general.aspect_critic import AspectCritic
from assay.schema.dataset import EvaluationDataset
from tests.engine.ray.conftest import worker_pids
from tests.engine.scripted_metrics import ScriptedMetric

pytestmark = pytest.mark.ray

# Responses that give every kind of outcome: numbers (ok), "na" (skipped), "raise" (a metric
# error), "refuse" (the judge answers 400: a typed judge error), and 7s for the judge's "yes".
RESPONSES = ["1", "0.5", "7", "na", "raise", "17", "refuse", "0", "0.25", "70"]
ROWS = [
    {"user_input": f"question {n}", "response": RESPONSES[n % len(RESPONSES)], "id": f"r{n}"}
    for n in range(40)
]


def test_ray_run_gives_the_local_outcomes(ray_cluster, judged, server, tmp_path):
    judge = judged(latency=0.01)
    metrics = [
        AspectCritic(name="has_seven", definition="the response has a seven"),
        ScriptedMetric(),
    ]

    local = evaluate(ROWS, metrics, llm=judge, show_progress=False)
    local_calls = len(server.chat_requests)
    executor = RayExecutor(num_workers=2, max_in_flight=4, block_rows=4, output=tmp_path / "out")
    remote = evaluate(ROWS, metrics, llm=judge, executor=executor, show_progress=False)

    assert remote.outcomes == local.outcomes
    statuses = {cell.status for row in remote.outcomes for cell in row.values()}
    assert statuses == {"ok", "skipped", "error"}
    refused = remote.outcome(6, "has_seven")
    assert refused.status == "error" and "400" in refused.message
    assert remote.outcome(4, "test_scripted").error_type == "ValueError"
    assert remote.means() == local.means()
    assert len(server.chat_requests) - local_calls == local_calls  # one call per judged cell each
    assert [u.requests for row in remote.usages for u in [row["has_seven"]]] == [
        u.requests for row in local.usages for u in [row["has_seven"]]
    ]
    assert executor.last_run.rows_scored == 40 and executor.last_run.workers_lost == 0
    assert len(worker_pids(tmp_path / "out")) == 2  # both workers wrote rows
    check_output_directory(tmp_path / "out", remote)


def check_output_directory(out, result) -> None:
    """Every row once, with its outcomes, and the aggregates beside them."""
    records = [
        json.loads(line)
        for part in sorted((out / "rows").glob("part-*.jsonl"))
        for line in part.read_text().splitlines()
    ]
    ids = row_ids(EvaluationDataset.from_list(ROWS))
    assert sorted(record["row_id"] for record in records) == sorted(ids)
    assert ids[0] == 'id:"r0"'  # the rows' own ids, since they are unique
    by_row = {record["row_id"]: {c["metric"]: c for c in record["cells"]} for record in records}
    for index, row_id in enumerate(ids):
        for name in ("has_seven", "test_scripted"):
            cell = by_row[row_id][name]
            assert cell["row"] == index
            assert cell["outcome"]["status"] == result.outcome(index, name).status

    summary = json.loads((out / "summary.json").read_text())
    by_metric = {item["name"]: item for item in summary["metrics"]}
    for name in ("has_seven", "test_scripted"):
        item, mine = by_metric[name], result.summary(name)
        assert (item["n_ok"], item["n_skipped"], item["n_error"]) == (
            mine.n_ok,
            mine.n_skipped,
            mine.n_error,
        )
        assert item["n_rows"] == 40 and item["mean"] == pytest.approx(mine.mean)
    assert summary["run"]["rows_scored"] == 40
    assert json.loads((out / "run.json").read_text())["n_rows"] == 40

    position = {row_id: index for index, row_id in enumerate(ids)}
    collected = OutputDirectory(out).collect(position, {"has_seven", "test_scripted"})
    assert len(collected.cells) == 80 and collected.duplicate_cells == 0


def test_content_hash_ids_tell_repeated_rows_apart():
    data = EvaluationDataset.from_list([{"response": "a"}, {"response": "b"}, {"response": "a"}])
    first, second, third = row_ids(data)
    assert first != second and third == f"{first}#2"
    assert row_ids(data) == [first, second, third]  # stable


def test_workers_share_the_sqlite_response_cache(ray_cluster, judged, server, tmp_path):
    from assay.models import ResponseCache, llm_factory
    from tests.engine.ray.conftest import FAST_RETRY

    judged()  # the server's verdicts
    judge = llm_factory(
        server.model_string(), cache=ResponseCache(tmp_path / "cache.sqlite"), retry=FAST_RETRY
    )
    metric = AspectCritic(name="has_seven", definition="the response has a seven")
    rows = ROWS[:20]
    first = evaluate(
        rows, [metric], llm=judge, executor=RayExecutor(output=tmp_path / "a"), show_progress=False
    )
    asked = len(server.chat_requests)
    refused = sum(1 for row in rows if row["response"] == "refuse")
    assert asked == 20 and refused == 2

    second = evaluate(
        rows, [metric], llm=judge, executor=RayExecutor(output=tmp_path / "b"), show_progress=False
    )
    # Every answer came from the shared file; only the refusals (errors are never cached) again.
    assert len(server.chat_requests) == asked + refused
    assert second.outcomes == first.outcomes
    assert second.total_tokens().cached_requests == asked - refused
