"""A cell's outcome as the platform stores it: the fields of a `scores` row (`outcome_row`) and
the document `trace_scores.outcome` keeps (`trace_score_outcome`).

Apart from `judging.py` so that the trajectory judge (`trajectory.py`), which `judging.py`
calls, can shape its outcomes the same way without the two importing each other.
"""

from __future__ import annotations

import math
from typing import Any


def outcome_row(outcome: Any) -> dict[str, Any]:
    """The library's outcome of one cell as the fields of a `scores` row."""
    status = getattr(outcome, "status", "error")
    if status == "ok":
        value = outcome.value
        number = float(value) if isinstance(value, (int, float)) else None
        if number is None or not math.isfinite(number):
            return {
                "status": "error",
                "error_type": "InvalidValue",
                "error_message": f"the judge gave {value!r}",
            }
        row = {"status": "ok", "value": number, "reason": outcome.reason}
        details = getattr(outcome, "details", None) or {}
        if isinstance(details.get("probability"), (int, float)):  # a yes/no judge's confidence
            row["probability"] = float(details["probability"])
        return row
    if status == "skipped":
        return {"status": "skipped", "reason": outcome.reason}
    return {
        "status": "error",
        "error_type": getattr(outcome, "error_type", "Error"),
        "error_message": getattr(outcome, "message", str(outcome)),
    }


def trace_score_outcome(row: dict[str, Any]) -> dict[str, Any]:
    """An outcome row in the shape `trace_scores.outcome` keeps: ok and skipped with value and
    reason, an error with `error_type` and `error_message` (the keys of the `scores` table)."""
    if row["status"] == "error":
        return {
            "status": "error",
            "error_type": row.get("error_type"),
            "error_message": row.get("error_message"),
        }
    kept = {"status": row["status"], "value": row.get("value"), "reason": row.get("reason")}
    if row.get("probability") is not None:  # how sure a yes/no judge was: review by uncertainty
        kept["probability"] = row["probability"]
    return kept


def error_row(exc: BaseException) -> dict[str, Any]:
    """A failure as the fields of a `scores` row, through the library's one exception-to-outcome
    function (`Error.from_exception`: the first leaf of an exception group, never an empty
    message)."""
    from assay.schema.outcome import Error

    return outcome_row(Error.from_exception(exc))


__all__ = ["error_row", "outcome_row", "trace_score_outcome"]
