"""A run directory: finished cells are appended as they complete, so a killed run can resume.

Layout of a run directory:

    run.json      what the run is: format version, fingerprint of data + metrics, sizes
    cells.jsonl   one finished cell per line, appended and flushed as each completes

On resume, cells with an `ok` or `skipped` outcome are kept and not recomputed; cells that
ended in `error` are tried again (errors are usually transient: timeouts, rate limits).
A process killed mid-write can leave a torn last line; it is cut off before appending.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from assay._version import __version__
from assay.errors import CheckpointMismatch
from assay.schema.outcome import Cell

FORMAT_VERSION = 1


def fingerprint(rows: list[dict[str, Any]], metric_specs: list[dict[str, Any]], extra: dict[str, Any]) -> str:
    """A stable hash of everything that determines a run's results."""
    payload = json.dumps(
        {"rows": rows, "metrics": metric_specs, "extra": extra}, sort_keys=True, ensure_ascii=False, default=str
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class RunDirectory:
    """Owns one run directory for the duration of a run."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.manifest_path = self.path / "run.json"
        self.cells_path = self.path / "cells.jsonl"
        self._handle: IO[str] | None = None

    def open(self, *, run_fingerprint: str, description: dict[str, Any]) -> dict[tuple[int, str], Cell]:
        """Create or reopen the directory; return the cells already finished (to keep)."""
        self.path.mkdir(parents=True, exist_ok=True)
        if self.manifest_path.exists():
            manifest = json.loads(self.manifest_path.read_text(encoding="utf-8"))
            if manifest.get("fingerprint") != run_fingerprint:
                raise CheckpointMismatch(
                    f"run directory {self.path} holds a run over different data, metrics or settings "
                    f"(started {manifest.get('created', '?')}); use another --run-dir or delete this one"
                )
        else:
            manifest = {
                "format_version": FORMAT_VERSION,
                "assay_version": __version__,
                "fingerprint": run_fingerprint,
                "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                **description,
            }
            temporary = self.manifest_path.with_suffix(".json.tmp")
            temporary.write_text(json.dumps(manifest, indent=2, ensure_ascii=False), encoding="utf-8")
            os.replace(temporary, self.manifest_path)
        finished = self._read_cells()
        self._handle = self.cells_path.open("a", encoding="utf-8")
        return finished

    def _read_cells(self) -> dict[tuple[int, str], Cell]:
        if not self.cells_path.exists():
            return {}
        data = self.cells_path.read_bytes()
        cut = data.rfind(b"\n") + 1
        if cut < len(data):  # a torn write from a killed process: drop the partial line
            with self.cells_path.open("r+b") as handle:
                handle.truncate(cut)
        cells: dict[tuple[int, str], Cell] = {}
        for line in data[:cut].decode("utf-8").splitlines():
            if not line.strip():
                continue
            try:
                cell = Cell.model_validate_json(line)
            except ValidationError:
                continue  # unreadable line: that cell is simply computed again
            if cell.outcome.status == "error":
                cells.pop((cell.row, cell.metric), None)
            else:
                cells[(cell.row, cell.metric)] = cell
        return cells

    def append(self, cell: Cell) -> None:
        if self._handle is None:
            raise RuntimeError("RunDirectory.append called before open")
        self._handle.write(cell.model_dump_json() + "\n")
        # Flushing hands the line to the OS, which keeps it even if this process is killed.
        self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


__all__ = ["FORMAT_VERSION", "RunDirectory", "fingerprint"]
