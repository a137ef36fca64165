"""DataCompyScore: compare two SQL result sets, given as CSV text, with datacompy."""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass
from typing import Any

from assay._util.deps import require
from assay.errors import DataError, UsageError
from assay.metrics.base import Metric
from assay.metrics.classic._offload import load, run
from assay.schema.outcome import MetricResult

# Ragas's legacy docs spell the modes in the singular; both spellings mean the same.
_MODES = {"rows": "rows", "row": "rows", "columns": "columns", "column": "columns"}
_METRICS = ("precision", "recall", "f1")


def _read_csv(pd: Any, text: str, side: str) -> Any:
    try:
        return pd.read_csv(io.StringIO(text))
    except ValueError as exc:  # pandas' ParserError and EmptyDataError are ValueErrors
        raise DataError(
            f"DataCompyScore could not parse the {side} as CSV: {exc}", field=side
        ) from exc


@dataclass(kw_only=True)
class DataCompyScore(Metric):
    """Precision, recall or F1 of matching rows (or columns) between response and reference.

    Rows are paired by position (datacompy `on_index=True`); a row matches when every column
    present in both tables is equal (so tables with no column in common match no row). In "columns" mode a shared column matches when all its
    paired values are equal. Precision divides by the response's rows (columns), recall by
    the reference's. The datacompy report is the reason.
    """

    name: str = "data_compare_score"
    mode: str = "rows"
    metric: str = "f1"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mode not in _MODES:
            raise UsageError(f"mode must be 'rows' or 'columns', got {self.mode!r}")
        self.mode = _MODES[self.mode]
        if self.metric not in _METRICS:
            raise UsageError(f"metric must be one of {', '.join(_METRICS)}, got {self.metric!r}")

    async def _ascore(self, *, response: str, reference: str) -> MetricResult:
        # pandas and datacompy take seconds to import: the first time, in a worker thread.
        for module in ("pandas", "datacompy"):
            await load(
                module, functools.partial(require, module, extra="sql", feature="DataCompyScore")
            )
        # Parsing and comparing are linear in the tables' size; large ones leave the event loop.
        return await run(len(response) + len(reference), self._compare, response, reference)

    def _compare(self, response: str, reference: str) -> MetricResult:
        pd = require("pandas", extra="sql", feature="DataCompyScore")
        datacompy = require("datacompy", extra="sql", feature="DataCompyScore")
        reference_df = _read_csv(pd, reference, "reference")
        response_df = _read_csv(pd, response, "response")
        # datacompy 0.x calls the pandas comparison `Compare`; 1.x renamed it `PandasCompare`.
        compare = getattr(datacompy, "PandasCompare", None) or datacompy.Compare
        comparison = compare(
            reference_df, response_df, on_index=True, df1_name="reference", df2_name="response"
        )

        if self.mode == "rows":
            shared = set(reference_df.columns) & set(response_df.columns)
            # With no column in common nothing was compared, so no row can be said to match
            # (datacompy counts every row as matching then).
            matched = int(comparison.count_matching_rows()) if shared else 0
            in_response, in_reference = len(response_df), len(reference_df)
        else:
            matched = sum(
                1 for column in comparison.column_stats if int(column["unequal_cnt"]) == 0
            )
            in_response, in_reference = response_df.shape[1], reference_df.shape[1]

        if in_response == 0 and in_reference == 0 and comparison.all_columns_match():
            precision = recall = 1.0  # two empty result sets with the same columns agree
        else:
            precision = matched / in_response if in_response else 0.0
            recall = matched / in_reference if in_reference else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        value = {"precision": precision, "recall": recall, "f1": f1}[self.metric]
        summary = (
            f"{self.mode}: {matched} matching; response has {in_response}, reference has "
            f"{in_reference} (precision {precision:.4f}, recall {recall:.4f}, f1 {f1:.4f})"
        )
        return MetricResult(
            float(value),
            reason=f"{summary}\n\n{comparison.report()}",
            details={
                "mode": self.mode,
                "matched": matched,
                "response_count": int(in_response),
                "reference_count": int(in_reference),
                "precision": precision,
                "recall": recall,
                "f1": f1,
            },
        )
