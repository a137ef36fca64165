"""MetricResult behaves like its value; Ok/Skipped/Error are typed, finite and JSON-safe."""

from __future__ import annotations

import json
import math
import operator

import numpy as np
import pytest
from pydantic import TypeAdapter, ValidationError

from assay.schema import Cell, Error, MetricResult, Ok, Outcome, Skipped

# -- MetricResult ------------------------------------------------------------------------------


def test_metric_result_keeps_value_reason_and_details():
    result = MetricResult(0.75, reason="3 of 4 claims supported", details={"claims": 4})
    assert result.value == 0.75
    assert result.reason == "3 of 4 claims supported"
    assert result.details == {"claims": 4}
    assert result.to_dict() == {"result": 0.75, "reason": "3 of 4 claims supported"}
    assert repr(result) == "MetricResult(value=0.75, reason='3 of 4 claims supported')"


def test_metric_result_conversions():
    result = MetricResult(0.75)
    assert float(result) == 0.75
    assert isinstance(float(result), float)
    assert int(MetricResult(3.9)) == 3
    assert bool(MetricResult(0.0)) is False
    assert bool(MetricResult(0.1)) is True
    assert round(MetricResult(0.123456), 2) == 0.12
    assert math.isclose(float(MetricResult(1)), 1.0)


def test_metric_result_comparisons():
    low, high = MetricResult(0.25), MetricResult(0.75)
    assert low < high and high > low
    assert low <= 0.25 and low >= 0.25
    assert high > 0.5 and not high < 0.5
    assert operator.lt(0.5, high)  # reflected: float.__lt__ defers to MetricResult.__gt__
    assert low == 0.25
    assert operator.eq(0.25, low)
    assert low != 0.3
    assert sorted([high, low]) == [low, high]
    assert max([low, high]) is high


def test_metric_result_equality_between_results_includes_reason():
    assert MetricResult(1.0, reason="a") == MetricResult(1.0, reason="a")
    assert MetricResult(1.0, reason="a") != MetricResult(1.0, reason="b")
    assert hash(MetricResult(1.0, reason="a")) == hash(MetricResult(1.0, reason="b"))
    assert len({MetricResult("pass"), MetricResult("pass")}) == 1
    assert hash(MetricResult(["a", "b"])) == hash(MetricResult(["a", "b"]))


def test_metric_result_arithmetic():
    a, b = MetricResult(0.5), MetricResult(0.25)
    assert a + b == 0.75
    assert a + 1 == 1.5
    assert 1 + a == 1.5
    assert a - b == 0.25
    assert 1 - a == 0.5
    assert a - 1 == -0.5
    assert a * 4 == 2.0
    assert 4 * a == 2.0
    assert a / 2 == 0.25
    assert a / b == 2.0
    assert sum([a, b, MetricResult(0.25)]) == 1.0
    assert isinstance(a + b, float)


def test_metric_result_reflected_division():
    assert 1 / MetricResult(0.5) == 2.0


def test_metric_result_label_value():
    result = MetricResult("pass", reason="looks right")
    assert result == "pass"
    assert result != "fail"
    assert bool(result)


@pytest.mark.parametrize(
    "bad", [float("nan"), float("inf"), float("-inf"), np.nan, np.float64("inf")]
)
def test_metric_result_rejects_non_finite_values(bad):
    with pytest.raises(ValueError, match="finite"):
        MetricResult(bad)


# -- Ok / Skipped / Error -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (True, bool),
        (False, bool),
        (3, int),
        (0, int),
        (0.5, float),
        (1.0, float),
        ("pass", str),
        (["b", "a"], list),
    ],
)
def test_ok_accepts_each_value_kind_and_keeps_its_type(value, kind):
    outcome = Ok(value=value)
    assert outcome.value == value
    assert type(outcome.value) is kind
    assert outcome.status == "ok"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf"), np.float64("nan")])
def test_ok_rejects_non_finite_values(bad):
    with pytest.raises(ValidationError):
        Ok(value=bad)


@pytest.mark.parametrize("bad", [None, {"a": 1}, [[1, 2]], [None], object()])
def test_ok_rejects_values_of_other_types(bad):
    with pytest.raises(ValidationError):
        Ok(value=bad)


def test_outcomes_are_frozen_and_strict_about_keys():
    outcome = Ok(value=1.0)
    with pytest.raises(ValidationError):
        outcome.value = 2.0
    with pytest.raises(ValidationError):
        Ok(value=1.0, score=1.0)
    with pytest.raises(ValidationError):
        Ok(value=1.0, status="error")


def test_skipped_requires_a_reason_and_error_has_defaults():
    with pytest.raises(ValidationError):
        Skipped()
    assert Skipped(reason="no reference").status == "skipped"
    error = Error(error_type="ValueError", message="boom")
    assert (error.status, error.attempts, error.raw) == ("error", 1, None)
    with pytest.raises(ValidationError):
        Error(message="boom")


@pytest.mark.parametrize(
    ("data", "cls"),
    [
        ({"status": "ok", "value": 0.5}, Ok),
        ({"status": "skipped", "reason": "n/a"}, Skipped),
        (
            {"status": "error", "error_type": "TimeoutError", "message": "slow", "attempts": 3},
            Error,
        ),
    ],
)
def test_outcome_union_discriminates_on_status(data, cls):
    outcome = TypeAdapter(Outcome).validate_python(data)
    assert type(outcome) is cls


def test_outcome_union_rejects_unknown_status():
    with pytest.raises(ValidationError):
        TypeAdapter(Outcome).validate_python({"status": "maybe", "reason": "x"})


@pytest.mark.parametrize(
    "outcome",
    [
        Ok(value=0.1 + 0.2, reason="close", details={"claims": ["a", "b"], "n": 2}),
        Ok(value=True),
        Ok(value=7),
        Ok(value=1.0),
        Ok(value="正确"),
        Ok(value=["doc-2", "doc-1"]),
        Skipped(reason="response is empty"),
        Error(error_type="ModelError", message="rate limited", attempts=4, raw='{"verdict": '),
    ],
    ids=["float", "bool", "int", "float-integral", "label", "ranking", "skipped", "error"],
)
def test_cell_json_round_trip(outcome):
    cell = Cell(row=3, metric="faithfulness", outcome=outcome, seconds=0.25)
    text = cell.model_dump_json()
    assert json.loads(text)["outcome"]["status"] == outcome.status
    back = Cell.model_validate_json(text)
    assert back == cell
    assert type(back.outcome) is type(outcome)
    if isinstance(outcome, Ok):
        assert type(back.outcome.value) is type(outcome.value)


def test_cell_rejects_non_finite_value_in_json():
    with pytest.raises(ValidationError):
        Cell.model_validate_json(
            '{"row": 0, "metric": "m", "outcome": {"status": "ok", "value": NaN}}'
        )
    with pytest.raises(ValidationError):
        Cell.model_validate_json(
            '{"row": 0, "metric": "m", "outcome": {"status": "ok", "value": Infinity}}'
        )


def test_cell_requires_row_metric_and_outcome():
    with pytest.raises(ValidationError):
        Cell(row=0, metric="m")
    with pytest.raises(ValidationError):
        Cell.model_validate({"row": 0, "metric": "m", "outcome": {"value": 1.0}})
