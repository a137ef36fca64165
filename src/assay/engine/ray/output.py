"""The output directory of a Ray run: the rows the workers wrote, which is also the checkpoint.

Layout (a local directory or any fsspec URI, see `ray/storage.py`):

    run.json             what the run is (fingerprint of data + metrics, sizes, rows format);
                         written first
    rows/part-*.jsonl    one finished row per line, `{"row_id", "cells": [Cell, ...]}`: on a local
                         directory one file per worker process, appended and flushed as rows
                         finish; elsewhere whole files committed by each worker as it goes
    rows/part-*.parquet  or, with `output_format="parquet"`, one cell per Parquet row
                         (`ray/parquet.py`), whole files committed by each worker as it goes
    summary.json         per-metric aggregates and the run's counts, written at the end

Every row has a stable id before anything is distributed: its `id` when every row has a distinct
one, else a hash of its content (with `#2`, `#3`, ... for repeated rows). Reading deduplicates by
(row id, metric): a finished outcome (ok or skipped) wins over an error, and a row written twice
(by a worker that was killed after writing it, or by a resumed run) counts once. Lines that cannot
be read (the torn last line of a killed worker, say) are passed over and counted.

A run keeps the rows format it started with: a resume reads it from run.json, and refuses
another one rather than mix the two in rows/.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay._version import __version__
from assay.engine.ray.storage import ROW_FORMATS, Storage
from assay.errors import CheckpointMismatch, UsageError
from assay.schema.dataset import EvaluationDataset
from assay.schema.outcome import Cell

FORMAT = "assay-ray-run/1"


def row_ids(data: EvaluationDataset) -> list[str]:
    """One stable id per row (see the module)."""
    records = [sample.to_dict() for sample in data]
    given = [record.get("id", record.get("metadata", {}).get("id")) for record in records]
    if all(value is not None for value in given):
        keys = [json.dumps(value, sort_keys=True, default=str) for value in given]
        if len(set(keys)) == len(keys):
            return [f"id:{key}" for key in keys]
    seen: dict[str, int] = {}
    ids = []
    for record in records:
        text = json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]
        seen[digest] = seen.get(digest, 0) + 1
        ids.append(digest if seen[digest] == 1 else f"{digest}#{seen[digest]}")
    return ids


@dataclass
class Collected:
    """The rows found in an output directory, deduplicated."""

    cells: dict[tuple[str, str], Cell] = field(default_factory=dict)  # (row id, metric) -> cell
    records: int = 0
    duplicate_cells: int = 0  # cells written more than once
    repeated_requests: int = 0  # model requests made for those repeats
    unreadable_lines: int = 0

    def finished(self, row_id: str, metric: str) -> bool:
        cell = self.cells.get((row_id, metric))
        return cell is not None and cell.outcome.status != "error"


class OutputDirectory:
    """A run's output: a local directory or any fsspec URI (`ray_storage.Storage`)."""

    def __init__(
        self, location: str | Path | Storage, storage_options: dict[str, Any] | None = None
    ) -> None:
        self.storage = (
            location if isinstance(location, Storage) else Storage(location, storage_options)
        )
        # What messages and the result name: the local path, or the URI without its password.
        self.path: Path | str = self.storage.local or self.storage.shown
        self.shown = self.storage.shown
        self.rows_format = "jsonl"  # what the workers write; set by `open`

    def open(
        self,
        *,
        run_fingerprint: str,
        description: dict[str, Any],
        resume: bool,
        rows_format: str | None = None,
    ) -> bool:
        """Create the directory or check it holds this run. True when rows were already saved.

        `rows_format`: "jsonl" or "parquet"; None keeps the one of the run being resumed (else
        JSONL). A run over rows of another format is refused."""
        if rows_format is not None and rows_format not in ROW_FORMATS:
            raise UsageError(
                f"output_format must be one of {', '.join(ROW_FORMATS)}, got {rows_format!r}"
            )
        store = self.storage
        try:
            if store.is_file():
                raise UsageError(f"output {self.shown} is a file; give RayExecutor a directory")
            has_rows = bool(store.parts())
            manifest_exists = store.exists("run.json")
        except OSError as exc:
            raise UsageError(f"cannot read output {self.shown}: {exc.strerror or exc}") from None
        if manifest_exists:
            try:
                manifest = json.loads(store.read_bytes("run.json").decode("utf-8"))
            except (OSError, ValueError) as exc:
                raise CheckpointMismatch(
                    f"output {self.shown}: run.json cannot be read ({exc}); use another output "
                    "directory or delete this one"
                ) from None
            if not isinstance(manifest, dict) or manifest.get("fingerprint") != run_fingerprint:
                raise CheckpointMismatch(
                    f"output {self.shown} holds a run over different data or metrics (started "
                    f"{manifest.get('created', '?') if isinstance(manifest, dict) else '?'}); use "
                    "another output directory or delete this one"
                )
            if has_rows and not resume:
                raise UsageError(
                    f"output {self.shown} already holds rows of this run; pass resume=True "
                    "(--resume) to finish it, or use another output directory"
                )
            kept = manifest.get("rows_format", "jsonl")  # run.json before Parquet: JSONL rows
            if rows_format is not None and rows_format != kept:
                if has_rows:
                    raise UsageError(
                        f"output {self.shown} holds a run with {kept} rows; resume it with "
                        f"output_format={kept!r} (--output-format {kept}) or use another output "
                        "directory"
                    )
                # No row written yet: the run may still change its format.
                self._write_manifest({**manifest, "rows_format": rows_format})
                kept = rows_format
            self.rows_format = kept
            return has_rows
        if has_rows:
            raise CheckpointMismatch(
                f"output {self.shown} has rows but no run.json, so it cannot tell which run they "
                "belong to; use another output directory"
            )
        self.rows_format = rows_format or "jsonl"
        try:
            store.make_dirs("rows")
            manifest = {
                "format": FORMAT,
                "assay_version": __version__,
                "fingerprint": run_fingerprint,
                "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "rows_format": self.rows_format,
                **description,
            }
            self._write_manifest(manifest)
        except OSError as exc:
            raise UsageError(f"cannot write output {self.shown}: {exc.strerror or exc}") from None
        return False

    def _write_manifest(self, manifest: dict[str, Any]) -> None:
        self.storage.write_whole(
            "run.json", json.dumps(manifest, indent=2, ensure_ascii=True).encode()
        )

    def records(self) -> Iterator[tuple[str, list[Cell]] | None]:
        """Every row of every part file, JSONL or Parquet (None for one that cannot be read: a
        torn last line, a foreign record)."""
        for part, data in self.storage.read_parts(self.storage.parts()):
            if part.endswith(".parquet"):
                from assay.engine.ray.parquet import decode

                yield from decode(data)
                continue
            cut = data.rfind(b"\n") + 1
            for line in data[:cut].split(b"\n")[:-1]:
                if line.strip():
                    yield _parse(line)
            if cut < len(data):
                yield None

    def collect(self, ids: dict[str, int], metric_names: set[str]) -> Collected:
        """The deduplicated cells of the rows of this run (`ids`: row id -> position)."""
        found = Collected()
        for record in self.records():
            if record is None:
                found.unreadable_lines += 1
                continue
            row_id, cells = record
            if row_id not in ids:
                found.unreadable_lines += 1
                continue
            found.records += 1
            for cell in cells:
                if cell.metric not in metric_names:
                    continue
                key = (row_id, cell.metric)
                kept = found.cells.get(key)
                if kept is None:
                    found.cells[key] = cell.model_copy(update={"row": ids[row_id]})
                    continue
                if kept.outcome.status == "error" and cell.outcome.status != "error":
                    found.cells[key] = cell.model_copy(update={"row": ids[row_id]})
                elif kept.outcome.status != "error" and cell.outcome.status != "error":
                    found.duplicate_cells += 1
                    found.repeated_requests += cell.usage.requests if cell.usage else 0
        return found

    def write_summary(self, summary: dict[str, Any]) -> None:
        text = json.dumps(summary, indent=2, ensure_ascii=True, default=str)
        self.storage.write_whole("summary.json", text.encode("utf-8"))


def _parse(line: bytes) -> tuple[str, list[Cell]] | None:
    try:
        record = json.loads(line.decode("utf-8"))
        row_id = record["row_id"]
        cells = [Cell.model_validate(cell) for cell in record["cells"]]
    except (UnicodeDecodeError, ValueError, RecursionError, KeyError, TypeError, ValidationError):
        return None
    if not isinstance(row_id, str):
        return None
    return row_id, cells


__all__ = ["Collected", "OutputDirectory", "row_ids"]
