"""An `@experiment` results file as a `Run`: which columns are scores, which are the row's data.

A row of an experiment is whatever the function returned, so the score columns are found by
their shape:

- a `MetricResult` as stored (`{"value": ..., "reason": ..., "details": ...}`);
- a column with a companion `<name>_reason` column (its reason);
- a column whose values are pass/fail-like labels (pass, fail, yes, no, correct, ...);
- a number or bool column that is not a column of the input dataset, nor `id`/`index`.

A row whose function raised has its error in every score cell and keeps its input as fields.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeGuard

from assay.report.load import row_key
from assay.report.model import NEGATIVE_LABELS, POSITIVE_LABELS, Cell, Row, Run
from assay.schema.aggregate import unique_ids

_RESULT_KEYS = frozenset({"value", "reason", "details"})
_NOT_SCORES = frozenset({"id", "index", "row", "seconds"})


def experiment_run(source: str | os.PathLike[str], root_dir: str | os.PathLike[str] = ".") -> Run:
    from assay.experiments.store import load_experiment

    experiment = load_experiment(source, root_dir)
    path = Path(experiment.path) if experiment.path is not None else Path(str(source))
    meta = experiment.metadata
    inputs = _input_columns(experiment.records, meta, path)
    results = [
        record.get("result") or {}
        for record in experiment.records
        if record.get("status") != "error"
    ]
    metrics = score_columns(results, inputs)
    reasons = {f"{name}_reason" for name in metrics}
    all_fields = [_fields(record) for record in experiment.records]
    ids = unique_ids(all_fields)
    rows = []
    for position, (record, fields) in enumerate(zip(experiment.records, all_fields, strict=True)):
        index = record.get("index", position)
        if record.get("status") == "error":
            error = record.get("error") or {}
            message = f"{error.get('type', 'Error')}: {error.get('message', '')}"
            cells = {name: Cell("error", reason=f"the row failed: {message}") for name in metrics}
            rows.append(
                Row(
                    index=index,
                    key=row_key(index, fields, ids),
                    fields=fields,
                    cells=cells,
                    error=message,
                )
            )
            continue
        cells = {name: _score_cell(fields, name) for name in metrics}
        shown = {k: v for k, v in fields.items() if k not in metrics and k not in reasons}
        rows.append(Row(index=index, key=row_key(index, fields, ids), fields=shown, cells=cells))
    info: dict[str, Any] = {
        "rows": len(rows),
        "status": meta.get("status"),
        "started": meta.get("created"),
        "seconds": meta.get("seconds"),
        "function": meta.get("function"),
    }
    dataset = meta.get("dataset") or {}
    if dataset.get("name"):
        info["dataset"] = (
            f"{dataset['name']} ({dataset.get('backend') or '?'}, {dataset.get('rows', '?')} rows)"
        )
    params = meta.get("params") or {}
    if params.get("args") or params.get("kwargs"):
        shown_params = [repr(a) for a in params.get("args", [])]
        shown_params += [f"{k}={v!r}" for k, v in params.get("kwargs", {}).items()]
        info["params"] = ", ".join(shown_params)
    if meta.get("status") == "running":
        info["status"] = "incomplete (the run did not finish)"
    return Run(
        name=experiment.name,
        kind="experiment",
        path=str(path),
        metrics=metrics,
        rows=rows,
        info={k: v for k, v in info.items() if v not in (None, "")},
    )


def _fields(record: dict[str, Any]) -> dict[str, Any]:
    if record.get("status") == "error":
        return dict(record.get("input") or {})
    return dict(record.get("result") or {})


def is_result_dict(value: Any) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict) and "value" in value and set(value) <= _RESULT_KEYS


def _is_label(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() in POSITIVE_LABELS | NEGATIVE_LABELS


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float))  # bools included


def score_columns(results: list[dict[str, Any]], inputs: set[str]) -> list[str]:
    """The columns of `results` that hold scores, in order of first appearance."""
    order: dict[str, None] = {}
    for row in results:
        order.update(dict.fromkeys(row))
    chosen = []
    for column in order:
        if column in _NOT_SCORES or column in inputs or column.endswith("_reason"):
            continue
        values = [row[column] for row in results if row.get(column) is not None]
        if not values:
            continue
        if (
            all(is_result_dict(v) for v in values)
            or f"{column}_reason" in order
            or all(_is_label(v) for v in values)
            or all(_is_number(v) for v in values)
        ):
            chosen.append(column)
    return chosen


def _score_cell(row: dict[str, Any], name: str) -> Cell:
    value = row.get(name)
    reason = row.get(f"{name}_reason")
    details = None
    if is_result_dict(value):
        reason = value.get("reason") if reason is None else reason
        details = value.get("details")
        value = value.get("value")
    if value is None:
        return Cell("skipped", reason=str(reason) if reason else "no value in this row")
    return Cell("ok", value=value, reason=None if reason is None else str(reason), details=details)


def _input_columns(records: list[dict[str, Any]], meta: dict[str, Any], path: Path) -> set[str]:
    """Columns of the dataset the experiment ran over (they are data, not scores)."""
    columns: set[str] = set()
    for record in records:
        if record.get("status") == "error":
            columns.update(record.get("input") or {})
    dataset = meta.get("dataset") or {}
    if dataset.get("name") and dataset.get("backend") and dataset.get("backend") != "inmemory":
        try:
            from assay.experiments.dataset import Dataset

            loaded = Dataset.load(
                dataset["name"], backend=dataset["backend"], root_dir=path.parent.parent
            )
            columns.update(loaded.columns)
        except (
            Exception
        ):  # the dataset moved or its backend is not installed: guess from shapes only
            pass
    return columns


__all__ = ["experiment_run", "is_result_dict", "score_columns"]
