"""Every cell ends as ok, skipped or error; aggregates report their coverage."""

from __future__ import annotations

import asyncio
import sys

import pytest

from assay import EvaluationDataset, RunFailed, UsageError, evaluate
from assay.schema.outcome import Error, Ok, Skipped
from tests.engine.scripted_metrics import ConcurrencyProbe, ReferenceOnly, ScriptedMetric

ROWS = [
    {"response": "0.5", "reference": "0.5"},
    {"response": "raise", "reference": "x"},
    {"response": "na"},
    {"response": "nan", "reference": "nan"},
    {"response": "1.0", "reference": "other"},
]


def run(rows=ROWS, metrics=None, **options):
    return evaluate(
        rows, metrics or [ScriptedMetric(), ReferenceOnly()], show_progress=False, **options
    )


def test_each_cell_has_a_typed_outcome():
    result = run()
    scripted = [result.outcome(row, "test_scripted") for row in range(5)]
    assert (
        isinstance(scripted[0], Ok)
        and scripted[0].value == 0.5
        and scripted[0].reason == "parsed 0.5"
    )
    assert isinstance(scripted[1], Error)
    assert scripted[1].error_type == "ValueError" and scripted[1].message == "scripted failure"
    assert (
        isinstance(scripted[2], Skipped)
        and scripted[2].reason == "nothing to judge in this response"
    )
    assert isinstance(scripted[3], Error) and scripted[3].error_type == "InvalidValue"
    assert isinstance(scripted[4], Ok) and scripted[4].value == 1.0


def test_missing_required_field_is_skipped_with_reason():
    result = run()
    cell = result.outcome(2, "test_needs_reference")
    assert isinstance(cell, Skipped)
    assert "reference" in cell.reason


def test_mean_is_over_ok_cells_and_coverage_is_reported():
    result = run()
    summary = result.summary("test_scripted")
    assert (summary.n_rows, summary.n_ok, summary.n_skipped, summary.n_error) == (5, 2, 1, 2)
    assert summary.mean == pytest.approx(0.75)
    assert summary.coverage == pytest.approx(0.4)
    assert "(2/5 rows)" in repr(result)
    assert result["test_scripted"] == [0.5, None, None, None, 1.0]
    assert [row for row, _, _ in result.errors()] == [1, 3]


def test_strict_raises_at_first_error_with_row_and_metric():
    with pytest.raises(RunFailed) as info:
        run(metrics=[ScriptedMetric()], strict=True, max_concurrency=1)
    assert info.value.row == 1
    assert info.value.metric == "test_scripted"
    assert "scripted failure" in str(info.value)


def test_slow_cell_times_out_and_others_finish():
    rows = [{"response": "sleep:5"}, {"response": "0.25"}]
    result = run(rows, [ScriptedMetric()], timeout=0.3)
    slow = result.outcome(0, "test_scripted")
    assert isinstance(slow, Error) and slow.error_type == "Timeout"
    assert result["test_scripted"][1] == 0.25


def test_concurrency_is_bounded():
    probe = ConcurrencyProbe()
    result = run([{"response": str(i)} for i in range(12)], [probe], max_concurrency=3)
    assert result.summary("test_probe").n_ok == 12
    assert probe.state["peak"] == 3


def test_runs_inside_a_running_event_loop_without_patching_it():
    async def caller():
        return run(ROWS[:1], [ScriptedMetric()])

    result = asyncio.run(caller())
    assert result["test_scripted"] == [0.5]
    assert "nest_asyncio" not in sys.modules


def test_metrics_by_id_and_usage_errors():
    result = evaluate([{"response": "a", "reference": "a"}], ["exact_match"], show_progress=False)
    assert result["exact_match"] == [1.0]
    with pytest.raises(UsageError, match="did you mean exact_match"):
        evaluate([{"response": "a", "reference": "a"}], ["exact_matc"], show_progress=False)
    with pytest.raises(UsageError, match="must be a list"):
        evaluate([{"response": "a"}], ScriptedMetric(), show_progress=False)
    with pytest.raises(UsageError, match="at least one metric"):
        evaluate([{"response": "a"}], [], show_progress=False)
    with pytest.raises(UsageError, match="two metrics are named test_scripted"):
        evaluate([{"response": "a"}], [ScriptedMetric(), ScriptedMetric()], show_progress=False)


def test_field_absent_from_every_row_is_a_usage_error_before_any_work():
    with pytest.raises(UsageError, match="needs reference, which no row of the dataset has"):
        evaluate([{"response": "a"}], [ReferenceOnly()], show_progress=False)


def test_multi_turn_metric_on_single_turn_data_is_rejected():
    from assay.metrics.base import Metric

    class Conversation(ScriptedMetric):
        sample_kind = "multi_turn"

    with pytest.raises(UsageError, match="multi-turn"):
        evaluate([{"response": "1"}], [Conversation(name="test_conv")], show_progress=False)
    assert issubclass(Conversation, Metric)


def test_user_metric_objects_are_not_mutated_and_dataset_object_accepted():
    metric = ScriptedMetric()
    dataset = EvaluationDataset.from_list(ROWS[:2])
    before = metric.spec()
    result = evaluate(dataset, [metric], show_progress=False)
    assert metric.spec() == before
    assert result.dataset is dataset


def test_default_concurrency_follows_a_slow_judges_limit():
    from dataclasses import dataclass as _dataclass

    from assay.models import LLM, Limits, ScriptedProvider
    from assay.schema.outcome import MetricResult

    @_dataclass(kw_only=True)
    class JudgedProbe(ConcurrencyProbe):
        name: str = "test_judged_probe"
        llm: object = None
        needs_llm = True

        async def _ascore(self, *, response: str) -> MetricResult:
            return await super()._ascore(response=response)

    llm = LLM(ScriptedProvider(["x"], repeat_last=True), limits=Limits(max_concurrency=2))
    probe = JudgedProbe(llm=llm)
    evaluate([{"response": str(i)} for i in range(12)], [probe], show_progress=False)
    assert probe.state["peak"] == 4  # twice the judge's two slots, not the default 16
