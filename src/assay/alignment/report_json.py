"""Reading an `AlignmentReport` back from the JSON `to_dict()` / `to_json()` wrote.

Every field is checked before the report is built, so a hand-edited or truncated file is a
DataError naming the field rather than a failure later while rendering. Kept apart from
`report.py`, whose class method `AlignmentReport.from_dict` calls `report_from_dict`.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from assay.alignment.agreement import CORRELATION
from assay.errors import DataError
from assay.stats.estimate import Estimate

if TYPE_CHECKING:
    from assay.alignment.report import AlignmentReport


def _estimates(block: Any, where: str, source: str) -> dict[str, Estimate] | None:
    if block is None:
        return None
    if not isinstance(block, dict):
        raise DataError(f"{where} must be an object of statistics", file=source, field=where)
    found = {}
    for name, item in block.items():
        try:
            found[name] = Estimate(
                value=item["value"],
                low=item.get("low"),
                high=item.get("high"),
                n=int(item.get("n", 0)),
                method=str(item.get("method", "")),
                degenerate_resamples=int(item.get("degenerate_resamples", 0)),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            raise DataError(
                f"{where}.{name} must be an object with value, low, high and n",
                file=source,
                field=f"{where}.{name}",
            ) from None
    return found


def report_from_dict(cls: type[AlignmentReport], data: Any, source: str) -> AlignmentReport:
    if not isinstance(data, dict):
        raise DataError("an alignment report is a JSON object", file=source)
    data = copy.deepcopy(data)  # the report never shares the caller's lists
    for key in ("metric", "label_kind", "rows", "rows_scored", "statistics"):
        if key not in data:
            raise DataError(f"not an alignment report: no {key!r}", file=source, field=key)
    if data["label_kind"] not in CORRELATION:
        raise DataError(
            f"label_kind must be one of {sorted(CORRELATION)}, got {data['label_kind']!r}",
            file=source,
            field="label_kind",
        )
    for key in ("confusion", "before_confusion"):
        matrix = data.get(key)
        if matrix is not None and (
            not isinstance(matrix, dict)
            or not isinstance(matrix.get("categories"), list)
            or not isinstance(matrix.get("matrix"), list)
            or len(matrix["matrix"]) != len(matrix["categories"])
            or any(
                not isinstance(row, list) or len(row) != len(matrix["categories"])
                for row in matrix["matrix"]
            )
        ):
            raise DataError(
                f"{key} must hold categories and a square matrix of as many rows",
                file=source,
                field=key,
            )
    for key in ("calibration_bins", "before_calibration_bins"):
        bins = data.get(key)
        if bins is not None and (
            not isinstance(bins, list)
            or any(
                not isinstance(b, dict) or not {"n", "mean_score", "positive_rate"} <= set(b)
                for b in bins
            )
        ):
            raise DataError(
                f"{key} must be a list of bins with n, mean_score and positive_rate",
                file=source,
                field=key,
            )
    worst = data.get("worst_disagreements") or []
    if not isinstance(worst, list) or any(not isinstance(w, dict) for w in worst):
        raise DataError("worst_disagreements must be a list of objects", file=source)
    bootstrap = data.get("bootstrap") or {}
    return cls(
        metric=str(data["metric"]),
        kind=data["label_kind"],
        n_rows=int(data["rows"]),
        n_scored=int(data["rows_scored"]),
        threshold=data.get("threshold"),
        statistics=_estimates(data["statistics"], "statistics", source) or {},
        failures=dict(data.get("failures") or {}),
        before=_estimates(data.get("before"), "before", source),
        before_threshold=data.get("before_threshold"),
        differences=_estimates(data.get("differences"), "differences", source),
        n_paired=data.get("rows_paired"),
        confusion=data.get("confusion"),
        calibration=data.get("calibration_bins"),
        before_confusion=data.get("before_confusion"),
        before_calibration=data.get("before_calibration_bins"),
        worst=[
            {
                "id": w.get("id"),
                "gap": w.get("gap"),
                "inputs": dict(w.get("inputs") or {}),
                "human_label": w.get("human_label"),
                "human_reason": w.get("human_reason"),
                "judge_value": w.get("judge_value"),
                "judge_reason": w.get("judge_reason"),
            }
            for w in worst
        ],
        judge_calls=int(data.get("judge_calls") or 0),
        n_resamples=int(bootstrap.get("resamples", 2000)),
        rows=list(data.get("per_row") or []),
        notes=[str(note) for note in data.get("notes") or []],
    )
