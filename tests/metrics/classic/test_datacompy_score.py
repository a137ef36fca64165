"""DataCompyScore on the account data of the Ragas documentation, and edge cases."""

from __future__ import annotations

import sys

import pytest

from assay import DataError, MissingDependency, SingleTurnSample, UsageError
from assay.metrics.classic import DataCompyScore

# The documentation's response (data1, 6 rows x 5 columns) and reference (data2, 5 x 4).
RESPONSE = """acct_id,dollar_amt,name,float_fld,date_fld
10000001234,123.45,George Maharis,14530.1555,2017-01-01
10000001235,0.45,Michael Bluth,1,2017-01-01
10000001236,1345,George Bluth,,2017-01-01
10000001237,123456,Bob Loblaw,345.12,2017-01-01
10000001238,1.05,Lucille Bluth,,2017-01-01
10000001238,1.05,Loose Seal Bluth,,2017-01-01
"""
REFERENCE = """acct_id,dollar_amt,name,float_fld
10000001234,123.4,George Michael Bluth,14530.155
10000001235,0.45,Michael Bluth,
10000001236,1345,George Bluth,1
10000001237,123456,Robert Loblaw,345.12
10000001238,1.05,Loose Seal Bluth,111
"""

# Rows are paired by position (0..4; response row 5 has no partner) and compared on the four
# shared columns (date_fld exists only in the response):
#   row 0: dollar_amt 123.45 vs 123.4, name, float_fld 14530.1555 vs 14530.155 differ
#   row 1: float_fld 1 vs empty            row 2: float_fld empty vs 1
#   row 3: name Bob vs Robert Loblaw       row 4: name Lucille vs Loose Seal, float_fld empty vs 111
# -> 0 matching rows: precision 0/6, recall 0/5, F1 0.
# Per shared column: acct_id equal in all 5 pairs; dollar_amt 1 unequal, name 3, float_fld 4
# -> 1 matching column: precision 1/5 (response columns), recall 1/4 (reference columns),
#    F1 = 2 * (1/5) * (1/4) / (1/5 + 1/4) = 2/9.


@pytest.mark.parametrize("metric", ["precision", "recall", "f1"])
def test_doc_data_rows_mode_matches_no_row(metric):
    result = DataCompyScore(metric=metric).score(response=RESPONSE, reference=REFERENCE)
    assert result.value == 0.0
    assert result.details["matched"] == 0
    assert (result.details["response_count"], result.details["reference_count"]) == (6, 5)


def test_doc_data_columns_mode():
    precision = DataCompyScore(mode="columns", metric="precision").score(
        response=RESPONSE, reference=REFERENCE
    )
    recall = DataCompyScore(mode="columns", metric="recall").score(
        response=RESPONSE, reference=REFERENCE
    )
    f1 = DataCompyScore(mode="columns", metric="f1").score(response=RESPONSE, reference=REFERENCE)
    assert precision.value == pytest.approx(1 / 5, abs=1e-12)
    assert recall.value == pytest.approx(1 / 4, abs=1e-12)
    assert f1.value == pytest.approx(2 / 9, abs=1e-12)
    assert f1.details["matched"] == 1


def test_reason_carries_the_datacompy_report():
    result = DataCompyScore().score(response=RESPONSE, reference=REFERENCE)
    assert "DataComPy Comparison" in result.reason
    assert "rows: 0 matching" in result.reason
    assert "Loose Seal Bluth" in result.reason


def test_partial_row_match():
    reference = "id,v\n1,a\n2,b\n3,c\n"
    response = "id,v\n1,a\n2,b\n3,x\n4,d\n"
    # Pairs 0 and 1 match, pair 2 differs, response row 3 is extra:
    # precision 2/4, recall 2/3, F1 = 2 * (1/2) * (2/3) / (1/2 + 2/3) = 4/7.
    assert (
        DataCompyScore(metric="precision").score(response=response, reference=reference).value
        == 0.5
    )
    assert DataCompyScore(metric="recall").score(
        response=response, reference=reference
    ).value == pytest.approx(2 / 3, abs=1e-12)
    assert DataCompyScore().score(response=response, reference=reference).value == pytest.approx(
        4 / 7, abs=1e-12
    )
    assert DataCompyScore().score(response=reference, reference=reference).value == 1.0


def test_legacy_singular_modes_are_accepted():
    assert DataCompyScore(mode="row").mode == "rows"
    column = DataCompyScore(mode="column", metric="recall")
    assert column.mode == "columns"
    assert column.score(response=RESPONSE, reference=REFERENCE).value == pytest.approx(
        1 / 4, abs=1e-12
    )


@pytest.mark.parametrize(
    ("params", "word"), [({"mode": "cells"}, "mode"), ({"metric": "accuracy"}, "metric")]
)
def test_invalid_parameters_are_usage_errors(params, word):
    with pytest.raises(UsageError, match=word):
        DataCompyScore(**params)


def test_malformed_csv_names_the_side_that_failed():
    with pytest.raises(DataError, match="response") as caught:
        DataCompyScore().score(response="a,b\n1,2\n1,2,3,4\n", reference=REFERENCE)
    assert caught.value.field == "response"
    assert isinstance(caught.value, ValueError)
    with pytest.raises(DataError, match="reference"):
        DataCompyScore().score(response=RESPONSE, reference="")


def test_empty_result_sets():
    assert DataCompyScore().score(response="a,b\n", reference="a,b\n").value == 1.0
    assert DataCompyScore().score(response="a,b\n", reference="a,b\n1,2\n").value == 0.0


def test_missing_datacompy_points_to_the_sql_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "datacompy", None)  # makes `import datacompy` fail
    with pytest.raises(MissingDependency, match=r"assay\[sql\]"):
        DataCompyScore().score(response=RESPONSE, reference=REFERENCE)


@pytest.mark.anyio
async def test_scores_a_sample():
    sample = SingleTurnSample(response=RESPONSE, reference=REFERENCE)
    result = await DataCompyScore(mode="columns").ascore_sample(sample)
    assert result.value == pytest.approx(2 / 9, abs=1e-12)


def test_empty_tables_with_different_columns_do_not_agree():
    assert DataCompyScore().score(response="a,b\n", reference="a,c\n").value == 0.0


def test_tables_with_no_column_in_common_match_no_row():
    metric = DataCompyScore(metric="f1")
    result = metric.score(response="a\n3\n4\n", reference="b\n3\n4\n")
    assert result.value == 0.0
    assert result.details["matched"] == 0
    same = metric.score(response="b\n3\n4\n", reference="b\n3\n4\n")
    assert same.value == 1.0
