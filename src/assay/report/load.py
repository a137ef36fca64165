"""Reading results into `Run`s: `assay evaluate --output` files, `--run-dir` directories and
experiment files (`experiments/<name>.jsonl` or `.csv`, or a bare experiment name).

    load_run("results.jsonl")                       # one object per row with "metrics"
    load_run("runs/today", data="data.jsonl")      # run.json + cells.jsonl; inputs from the data file
    load_run("baseline", root_dir="evals")          # evals/experiments/baseline.jsonl
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from assay.errors import UsageError
from assay.report.model import Cell, Row, Run, add_usage
from assay.schema.aggregate import unique_ids


def load_run(
    source: str | os.PathLike[str],
    *,
    data: str | os.PathLike[str] | None = None,
    root_dir: str | os.PathLike[str] = ".",
) -> Run:
    """The results at `source`, whatever their kind (see the module docstring)."""
    path = Path(source)
    if path.is_dir():
        if (path / "run.json").is_file() or (path / "cells.jsonl").is_file():
            return load_run_dir(path, data=data)
        raise UsageError(
            f"{path} is a directory without run.json or cells.jsonl; "
            "give an `assay evaluate --output` file, a --run-dir directory or an experiment"
        )
    if data is not None:
        raise UsageError(
            "--data only applies to a run directory (its cells do not include the inputs)"
        )
    if path.is_file() and path.suffix.lower() in {".jsonl", ".ndjson"}:
        records = _read_jsonl(path)
        if records and all(_is_result_record(record) for record in records):
            return _evaluation_run(path, records)
        return _experiment(path, root_dir)
    if path.is_file() and path.suffix.lower() == ".csv":
        return _experiment(path, root_dir)
    if path.is_file():
        raise UsageError(
            f"{path}: not a results file (expected .jsonl, .csv or a run directory; "
            "an alignment report goes to --alignment)"
        )
    if path.suffix or os.sep in str(source) or "/" in str(source):
        raise UsageError(f"no such file or directory: {path}")
    return _experiment(source, root_dir)  # a bare name: an experiment under <root_dir>/experiments/


def _experiment(source: str | os.PathLike[str], root_dir: str | os.PathLike[str]) -> Run:
    from assay.report.experiment import experiment_run

    return experiment_run(source, root_dir)


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    records = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            if number == len(lines):  # a torn last line, cut by a killed writer
                break
            raise UsageError(f"{path}: line {number} is not JSON") from None
        if not isinstance(record, dict):
            raise UsageError(f"{path}: line {number} is not a JSON object")
        records.append(record)
    return records


def _is_result_record(record: dict[str, Any]) -> bool:
    metrics = record.get("metrics")
    return isinstance(metrics, dict) and all(
        isinstance(cell, dict) and "status" in cell for cell in metrics.values()
    )


def row_key(index: int, fields: dict[str, Any], by_id: bool) -> str:
    if by_id:
        return str(fields["id"])
    return f"row {index}"


def _cell(record: dict[str, Any], usage: dict[str, Any] | None = None) -> Cell:
    status = str(record.get("status", "missing"))
    reason = record.get("reason")
    if (
        status == "error" and reason is None and "message" in record
    ):  # a run directory's Error outcome
        reason = f"{record.get('error_type', 'Error')}: {record['message']}"
    value = record.get("value") if status == "ok" else None
    return Cell(
        status=status,
        value=value,
        reason=reason,
        details=record.get("details"),
        usage=usage,
        attempts=record.get("attempts"),
        raw=record.get("raw"),
    )


def _evaluation_run(path: Path, records: list[dict[str, Any]]) -> Run:
    metrics: dict[str, None] = {}
    for record in records:
        metrics.update(dict.fromkeys(record["metrics"]))
    field_rows = [{k: v for k, v in record.items() if k != "metrics"} for record in records]
    ids = unique_ids(field_rows)
    rows = [
        Row(
            index=i,
            key=row_key(i, fields, ids),
            fields=fields,
            cells={name: _cell(cell) for name, cell in record["metrics"].items()},
        )
        for i, (record, fields) in enumerate(zip(records, field_rows, strict=True))
    ]
    info: dict[str, Any] = {
        "rows": len(rows),
        "tokens and cost": "not recorded in this file (use --run-dir)",
    }
    thresholds = {
        name: cell.details["alignment"].get("threshold")
        for row in rows
        for name, cell in row.cells.items()
        if isinstance(cell.details, dict) and isinstance(cell.details.get("alignment"), dict)
    }
    if thresholds:  # scored by a judge aligned with human labels (its cells say so)
        info["aligned judges"] = ", ".join(
            f"{name} (threshold {t:.3g})" if isinstance(t, (int, float)) else name
            for name, t in thresholds.items()
        )
    return Run(
        name=path.stem,
        kind="evaluation results",
        path=str(path),
        metrics=list(metrics),
        rows=rows,
        info=info,
    )


def load_run_dir(path: Path, *, data: str | os.PathLike[str] | None = None) -> Run:
    """A `--run-dir` directory: run.json (what the run was) and cells.jsonl (finished cells)."""
    manifest: dict[str, Any] = {}
    if (path / "run.json").is_file():
        try:
            manifest = json.loads((path / "run.json").read_text(encoding="utf-8"))
        except ValueError:
            raise UsageError(f"{path / 'run.json'} is not JSON") from None
    specs = [
        spec for spec in manifest.get("metrics", []) if isinstance(spec, dict) and "name" in spec
    ]
    metrics = {spec["name"]: None for spec in specs}
    found: dict[tuple[int, str], dict[str, Any]] = {}
    spent: dict[
        tuple[int, str], dict[str, Any] | None
    ] = {}  # every attempt's usage: it was paid for
    cells_path = path / "cells.jsonl"
    for record in _read_jsonl(cells_path) if cells_path.is_file() else []:
        if isinstance(record.get("row"), int) and isinstance(record.get("outcome"), dict):
            key = (record["row"], str(record.get("metric")))
            found[key] = record  # a later line (a retry on resume) wins
            spent[key] = add_usage(spent.get(key), record.get("usage"))
            metrics.setdefault(key[1], None)
    n_rows = manifest.get("n_rows")
    if not isinstance(n_rows, int):
        n_rows = max((row for row, _ in found), default=-1) + 1
    inputs = _inputs(data, n_rows) if data is not None else [{} for _ in range(n_rows)]
    ids = unique_ids(inputs)
    rows, total = [], None
    for index in range(n_rows):
        cells = {}
        for name in metrics:
            finished = found.get((index, name))
            if finished is None:
                cells[name] = Cell(
                    "missing", reason="not finished: the run stopped before this cell"
                )
                continue
            cells[name] = _cell(finished["outcome"], usage=spent.get((index, name)))
            total = add_usage(total, spent.get((index, name)))
        rows.append(
            Row(
                index=index,
                key=row_key(index, inputs[index], ids),
                fields=inputs[index],
                cells=cells,
            )
        )
    info: dict[str, Any] = {
        "rows": n_rows,
        "started": manifest.get("created"),
        "assay version": manifest.get("assay_version"),
    }
    judges = sorted({_model_name(spec["llm"]) for spec in specs if spec.get("llm")})
    if judges:
        info["judge"] = ", ".join(judges)
    aligned = [_aligned_text(spec) for spec in specs if isinstance(spec.get("alignment"), dict)]
    if aligned:
        info["aligned judges"] = "; ".join(aligned)
    if data is None:
        info["inputs"] = "not stored in a run directory; add --data DATAFILE to show them"
    return Run(
        name=path.name,
        kind="run directory",
        path=str(path),
        metrics=list(metrics),
        rows=rows,
        usage=total,
        info={k: v for k, v in info.items() if v is not None},
        specs={spec["name"]: spec for spec in specs},
    )


def _aligned_text(spec: dict[str, Any]) -> str:
    """What a metric's alignment fingerprint (in its spec) says: state hash, examples, threshold."""
    found = spec["alignment"]
    text = f"{spec['name']}: state {found.get('hash', '?')}, {found.get('examples', 0)} example(s)"
    text += f", {found.get('k', 0)} per row ({found.get('selection', '?')})"
    if isinstance(found.get("threshold"), (int, float)):
        text += f", threshold {found['threshold']:.3g}"
    if found.get("instructions"):
        text += f", rewritten instruction(s): {', '.join(found['instructions'])}"
    return text


def _model_name(identity: Any) -> str:
    if isinstance(identity, dict):
        return "/".join(
            str(identity[k]) for k in ("provider", "model") if identity.get(k)
        ) or json.dumps(identity)
    return str(identity)


def _inputs(data: str | os.PathLike[str], n_rows: int) -> list[dict[str, Any]]:
    from assay.schema.dataset import EvaluationDataset

    dataset = EvaluationDataset.load(os.fspath(data))
    if len(dataset) != n_rows:
        raise UsageError(
            f"--data {data} has {len(dataset)} rows but the run has {n_rows}; "
            "give the file the run was made from"
        )
    rows = []
    for sample in dataset:
        fields = sample.to_dict()
        rows.append({**fields.pop("metadata", {}), **fields})
    return rows


__all__ = ["load_run", "load_run_dir", "row_key"]
