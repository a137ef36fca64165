"""Experiment files written directly, so comparisons have exactly known values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_experiment(
    root: Path,
    name: str,
    rows: list[dict[str, Any]],
    *,
    errors: dict[int, str] | None = None,
    params: dict[str, Any] | None = None,
    order: list[int] | None = None,
) -> Path:
    """Rows as an @experiment would have stored them (in `order` of completion); `errors` maps a
    row index to an error message for rows that failed."""
    folder = root / "experiments"
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for index in order or range(len(rows)):
        if errors and index in errors:
            record = {
                "index": index,
                "status": "error",
                "seconds": 0.0,
                "error": {"type": "RuntimeError", "message": errors[index]},
                "input": rows[index],
            }
        else:
            record = {"index": index, "status": "ok", "seconds": 0.0, "result": rows[index]}
        lines.append(json.dumps(record) + "\n")
    path = folder / f"{name}.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    meta = {
        "format_version": 1,
        "name": name,
        "created": f"2025-01-01T00:00:0{len(list(folder.glob('*.meta.json')))}+00:00",
        "status": "finished",
        "params": params or {"args": [], "kwargs": {}},
    }
    (folder / f"{name}.meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return path
