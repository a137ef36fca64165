"""EvaluationResult: per-metric summaries with coverage, lookup, and exports."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from assay.errors import UsageError
from assay.schema import EvaluationDataset, EvaluationResult, MetricSummary
from assay.schema.outcome import Error, Ok, Skipped

ROWS = [
    {"user_input": "q1 你好", "response": "a1", "topic": "geo"},
    {"user_input": "q2", "response": "a2", "topic": "math"},
    {"user_input": "q3", "response": "a3", "topic": "geo"},
    {"user_input": "q4", "response": "", "topic": "art"},
]

SPECS = [{"name": "faith"}, {"name": "verdict"}, {"name": "exact"}]


def make_outcomes() -> list[dict]:
    return [
        {
            "faith": Ok(value=1.0, reason="all supported", details={"claims": 2}),
            "verdict": Ok(value="pass"),
            "exact": Ok(value=True),
        },
        {
            "faith": Ok(value=0.5, reason="half"),
            "verdict": Ok(value="fail", reason="wrong"),
            "exact": Ok(value=False),
        },
        {
            "faith": Skipped(reason="no contexts"),
            "verdict": Ok(value="pass"),
            "exact": Ok(value=True),
        },
        {
            "faith": Error(
                error_type="ModelError", message="rate limited", attempts=3, raw="{oops"
            ),
            "verdict": Skipped(reason="empty response"),
            "exact": Ok(value=True),
        },
    ]


@pytest.fixture
def result() -> EvaluationResult:
    return EvaluationResult(EvaluationDataset.from_list(ROWS), SPECS, make_outcomes(), seconds=1.5)


# -- summaries ----------------------------------------------------------------------------------


def test_summary_of_numeric_metric_counts_ok_cells_only(result):
    summary = result.summary("faith")
    assert isinstance(summary, MetricSummary)
    assert summary.name == "faith"
    assert summary.mean == 0.75
    assert (summary.n_rows, summary.n_ok, summary.n_skipped, summary.n_error) == (4, 2, 1, 1)
    assert summary.coverage == 0.5
    assert summary.coverage_text() == "2/4"
    assert summary.labels == {}


def test_summary_of_label_metric_counts_labels(result):
    summary = result.summary("verdict")
    assert summary.labels == {"pass": 2, "fail": 1}
    assert summary.mean == 2 / 3  # the pass rate, as the report and experiments give it
    assert (summary.n_ok, summary.n_skipped, summary.n_error) == (3, 1, 0)
    assert summary.coverage == 0.75


def test_summary_of_bool_metric_averages_as_zero_one(result):
    summary = result.summary("exact")
    assert summary.mean == 0.75
    assert summary.coverage == 1.0
    assert summary.labels == {}


def test_scores_and_summaries(result):
    """`scores` means what it means in Ragas: one dict per row (issue #15, 6); the means are `means()`."""
    assert isinstance(result.scores, list) and len(result.scores) == len(result.dataset)
    assert result.scores[0] == {name: result[name][0] for name in result.metric_names}
    assert [row["faith"] for row in result.scores] == result["faith"]
    assert result.means() == {"faith": 0.75, "verdict": 2 / 3, "exact": 0.75}
    assert [item.name for item in result.summaries()] == ["faith", "verdict", "exact"]


def test_mean_is_exactly_rounded():
    dataset = EvaluationDataset.from_list([{"user_input": f"q{i}"} for i in range(10)])
    outcomes = [{"m": Ok(value=0.1)} for _ in range(10)]
    assert EvaluationResult(dataset, [{"name": "m"}], outcomes).summary("m").mean == 0.1


def test_mean_mixes_ints_and_floats():
    dataset = EvaluationDataset.from_list(
        [{"user_input": "a"}, {"user_input": "b"}, {"user_input": "c"}]
    )
    outcomes = [{"m": Ok(value=1)}, {"m": Ok(value=4)}, {"m": Ok(value=0.5)}]
    summary = EvaluationResult(dataset, [{"name": "m"}], outcomes).summary("m")
    assert math.isclose(summary.mean, 5.5 / 3)


def test_all_cells_skipped_or_failed_gives_no_mean():
    dataset = EvaluationDataset.from_list([{"user_input": "a"}, {"user_input": "b"}])
    outcomes = [{"m": Skipped(reason="x")}, {"m": Error(error_type="E", message="m")}]
    summary = EvaluationResult(dataset, [{"name": "m"}], outcomes).summary("m")
    assert summary.mean is None
    assert summary.coverage == 0.0
    assert summary.coverage_text() == "0/2"


def test_empty_result_has_zero_coverage():
    summary = EvaluationResult(EvaluationDataset([]), [{"name": "m"}], []).summary("m")
    assert (summary.n_rows, summary.n_ok, summary.coverage, summary.mean) == (0, 0, 0.0, None)


def test_repr_shows_mean_and_coverage(result):
    text = repr(result)
    assert "'faith': 0.7500 (2/4 rows)" in text
    assert "'verdict': 0.6667 (3/4 rows)" in text
    assert "'exact': 0.7500 (4/4 rows)" in text


def test_to_dict_lists_summaries(result):
    data = result.to_dict()
    assert data["format_version"] == 1
    assert data["metrics"] == SPECS
    assert data["seconds"] == 1.5
    assert data["summary"][0] == {
        "name": "faith",
        "mean": 0.75,
        "n_rows": 4,
        "n_ok": 2,
        "n_skipped": 1,
        "n_error": 1,
        "labels": {},
    }
    assert data["summary"][1]["labels"] == {"pass": 2, "fail": 1}


# -- per-cell lookup --------------------------------------------------------------------------------


def test_getitem_gives_values_and_none_for_non_ok_cells(result):
    assert result["faith"] == [1.0, 0.5, None, None]
    assert result["verdict"] == ["pass", "fail", "pass", None]
    assert result["exact"] == [True, False, True, True]


def test_unknown_metric_is_a_usage_error(result):
    with pytest.raises(UsageError, match="'nope'"):
        result["nope"]
    with pytest.raises(UsageError):
        result.summary("nope")
    with pytest.raises(UsageError):
        result.outcome(0, "nope")


def test_outcome_and_errors(result):
    assert result.outcome(2, "faith") == Skipped(reason="no contexts")
    errors = result.errors()
    assert len(errors) == 1
    row, metric, error = errors[0]
    assert (row, metric, error.error_type, error.attempts) == (3, "faith", "ModelError", 3)


def test_outcome_rows_must_match_dataset_rows():
    with pytest.raises(ValueError, match="one outcome row per dataset row"):
        EvaluationResult(EvaluationDataset.from_list(ROWS), SPECS, make_outcomes()[:3])


# -- exports ----------------------------------------------------------------------------------------


def test_row_records_restore_extra_columns_and_nest_metrics(result):
    records = result.row_records()
    assert len(records) == 4
    first = records[0]
    assert first["topic"] == "geo"
    assert first["user_input"] == "q1 你好"
    assert "metadata" not in first
    assert first["metrics"]["faith"] == {
        "value": 1.0,
        "status": "ok",
        "reason": "all supported",
        "details": {"claims": 2},
    }
    assert records[2]["metrics"]["faith"] == {
        "value": None,
        "status": "skipped",
        "reason": "no contexts",
    }
    assert records[3]["metrics"]["faith"] == {
        "value": None,
        "status": "error",
        "reason": "ModelError: rate limited",
        "attempts": 3,
        "raw": "{oops",
    }


def test_to_jsonl_writes_one_object_per_row(result, tmp_path):
    path = tmp_path / "results.jsonl"
    result.to_jsonl(path)
    text = path.read_text(encoding="utf-8")
    assert "你好" in text
    lines = text.splitlines()
    assert len(lines) == len(ROWS)
    records = [json.loads(line) for line in lines]
    assert records == result.row_records()
    for source, record in zip(ROWS, records, strict=True):
        assert record["topic"] == source["topic"]
        assert record["user_input"] == source["user_input"]
        assert set(record["metrics"]) == {"faith", "verdict", "exact"}
        for cell in record["metrics"].values():
            assert {"value", "status", "reason"} <= set(cell)
    assert [r["metrics"]["verdict"]["status"] for r in records] == ["ok", "ok", "ok", "skipped"]
    assert [r["metrics"]["exact"]["value"] for r in records] == [True, False, True, True]


def test_to_jsonl_output_loads_back_as_a_dataset(result, tmp_path):
    path = tmp_path / "results.jsonl"
    result.to_jsonl(path)
    reloaded = EvaluationDataset.load(path)
    assert [s.user_input for s in reloaded] == [r["user_input"] for r in ROWS]
    assert reloaded[0].metadata["topic"] == "geo"


def test_to_pandas_has_value_status_and_reason_columns(result):
    frame = result.to_pandas()
    assert isinstance(frame, pd.DataFrame)
    assert len(frame) == 4
    for name in ("faith", "verdict", "exact"):
        assert {name, f"{name}_status", f"{name}_reason"} <= set(frame.columns)
    assert frame["faith"].tolist()[:2] == [1.0, 0.5]
    assert frame["faith"].isna().tolist() == [False, False, True, True]
    assert frame["faith_status"].tolist() == ["ok", "ok", "skipped", "error"]
    assert frame["faith_reason"].tolist() == [
        "all supported",
        "half",
        "no contexts",
        "ModelError: rate limited",
    ]
    assert frame["verdict"].tolist()[:3] == ["pass", "fail", "pass"]
    assert frame["verdict_status"].tolist() == ["ok", "ok", "ok", "skipped"]
    assert frame["exact"].dtype == "float64"
    assert frame["exact"].tolist() == [1.0, 0.0, 1.0, 1.0]
    assert frame["user_input"].tolist() == [r["user_input"] for r in ROWS]


def test_total_cost_with_per_model_costs():
    """Ragas' `total_cost(per_model_costs=...)`: each cell's tokens at its metric's judge price."""
    from assay.schema.usage import Usage

    specs = [
        {"name": "a", "llm": {"provider": "openai", "model": "gpt-4o"}},
        {"name": "b", "llm": {"provider": "anthropic", "model": "claude-x"}},
        {"name": "c"},
    ]
    rows = [{"user_input": "q1"}, {"user_input": "q2"}]
    outcomes = [{"a": Ok(value=1.0), "b": Ok(value=1.0), "c": Ok(value=1.0)} for _ in rows]
    usages = [
        {
            "a": Usage(input_tokens=100, output_tokens=10, cost=0.5),
            "b": Usage(input_tokens=200, output_tokens=20, cost=0.25),
            "c": Usage(input_tokens=1000, output_tokens=0, cost=0.125),
        }
        for _ in rows
    ]
    result = EvaluationResult(EvaluationDataset.from_list(rows), specs, outcomes, usages=usages)
    assert result.total_cost() == pytest.approx(2 * (0.5 + 0.25 + 0.125))
    # gpt-4o priced; the others keep their recorded cost
    assert result.total_cost(per_model_costs={"gpt-4o": (1e-3, 1e-2)}) == pytest.approx(
        2 * (100e-3 + 10e-2 + 0.25 + 0.125)
    )
    # "provider/model" works too; a fallback price covers the unlisted models
    assert result.total_cost(
        1e-6, 2e-6, per_model_costs={"anthropic/claude-x": (0.0, 0.0)}
    ) == pytest.approx(2 * ((100e-6 + 20e-6) + 0.0 + 1000e-6))
    for bad in (
        {"gpt-4o": (1.0,)},
        {"gpt-4o": (-1.0, 0.0)},
        {"gpt-4o": "cheap"},
        [("gpt-4o", (1, 1))],
    ):
        with pytest.raises(UsageError, match="per_model_costs"):
            result.total_cost(per_model_costs=bad)
