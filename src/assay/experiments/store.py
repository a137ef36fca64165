"""Experiment files: results appended row by row, metadata beside them.

    <root_dir>/experiments/<name>.jsonl      one record per finished row, in completion order
    <root_dir>/experiments/<name>.meta.json  what the run was (rewritten atomically at the end)
    <root_dir>/experiments/<name>.csv        the rows as a flat table, written when the run ends
                                             (the file Ragas' local/csv backend writes; off
                                             with @experiment(csv=False))

A record is `{"index": i, "status": "ok", "seconds": s, "result": {...}}` for a row whose
function returned, or `{"index": i, "status": "error", "seconds": s, "error": {"type": ...,
"message": ...}, "input": {...}}` for a row whose function raised. `index` is the row's
position in the dataset. Each record is written as one line and flushed, so a killed process
keeps every finished row; a torn last line (killed mid-write) is ignored by the reader.
The JSONL is the record of the run: loading or listing an experiment by name reads it, not the
CSV beside it (which only a run without a JSONL, e.g. one copied from Ragas, is read from).

The metadata holds format_version, name, created/finished (UTC ISO 8601), status (`running`
until the run ends, then `finished` or `interrupted`; a killed run stays `running`), function,
dataset (name, backend, rows), params (the extra args and kwargs), max_concurrency, and at the
end n_rows, n_errors and seconds.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from assay._util.deps import require
from assay._version import __version__
from assay.errors import DataError, UsageError
from assay.experiments.backends.base import check_name
from assay.experiments.backends.files import read_csv_rows, write_csv_rows
from assay.experiments.codec import dumps

FORMAT_VERSION = 1


def experiments_dir(root_dir: str | os.PathLike[str]) -> Path:
    return Path(root_dir) / "experiments"


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def row_view(record: dict[str, Any]) -> dict[str, Any]:
    """What a user sees for one record: the returned dict, or the input row plus `error`."""
    if record.get("status") == "error":
        error = record.get("error") or {}
        return {
            **(record.get("input") or {}),
            "error": f"{error.get('type', 'Error')}: {error.get('message', '')}",
        }
    return dict(record.get("result") or {})


class Experiment:
    """The rows of one experiment run, in dataset order, with the run's metadata."""

    def __init__(
        self,
        name: str,
        records: list[dict[str, Any]],
        metadata: dict[str, Any] | None = None,
        path: Path | None = None,
    ) -> None:
        self.name = name
        self.records = sorted(records, key=lambda record: record["index"])
        self.metadata = dict(metadata or {})
        self.path = path
        self.rows = [row_view(record) for record in self.records]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return self.rows[index]

    def __repr__(self) -> str:
        return f"Experiment(name={self.name}, len={len(self)})"

    @property
    def errors(self) -> list[dict[str, Any]]:
        """`{"index", "type", "message"}` for each row whose function raised."""
        return [
            {"index": r["index"], **(r.get("error") or {})}
            for r in self.records
            if r.get("status") == "error"
        ]

    def to_pandas(self) -> Any:
        pd = require("pandas", extra="pandas", feature="Experiment.to_pandas")
        return pd.DataFrame(self.rows)

    def to_csv(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the rows as CSV (cells encoded as for `local/csv` datasets); default: beside the JSONL."""
        if path is None:
            if self.path is None:
                raise UsageError("this experiment has no file; pass a path to to_csv")
            path = self.path.with_suffix(".csv")
        target = Path(path)
        write_csv_rows(target, self.rows)
        return target

    @classmethod
    def load(
        cls, name: str | os.PathLike[str], root_dir: str | os.PathLike[str] = "."
    ) -> Experiment:
        """An experiment by name under `<root_dir>/experiments/`, or by path (.jsonl or a plain .csv)."""
        return load_experiment(name, root_dir)


def resolve(name: str | os.PathLike[str], root_dir: str | os.PathLike[str] = ".") -> Path:
    """The results file for `name`: an existing path as given, else `<root>/experiments/<name>.jsonl|.csv`."""
    given = Path(name)
    if given.suffix in {".jsonl", ".csv"} and given.is_file():
        return given
    folder = experiments_dir(root_dir)
    for suffix in (".jsonl", ".csv"):
        candidate = folder / f"{name}{suffix}"
        if candidate.is_file():
            return candidate
    known = [entry["name"] for entry in list_experiments(root_dir)] if folder.is_dir() else []
    hint = (
        f"; experiments there: {', '.join(known)}" if known else "; there are no experiments there"
    )
    raise UsageError(f"no experiment {str(name)!r} in {folder}{hint}")


def read_records(path: Path) -> list[dict[str, Any]]:
    """Records of a results file. A last line without its newline (torn write) is dropped."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    torn = lines.pop()  # after the final newline: b"" unless the last write was cut short
    records: list[dict[str, Any]] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
        except ValueError as exc:
            raise DataError(f"not a JSON line ({exc})", file=str(path), row=number) from None
        if not isinstance(record, dict):
            raise DataError("a line must be a JSON object", file=str(path), row=number)
        records.append(record)
    if torn.strip():
        try:  # a complete record that merely lacks its newline (written by another tool) is kept
            record = json.loads(torn.decode("utf-8"))
            if isinstance(record, dict):
                records.append(record)
        except ValueError:
            pass
    if records and not all("index" in r and "status" in r for r in records):
        # a plain JSONL of rows (not written by @experiment): rows in file order
        records = [{"index": i, "status": "ok", "result": r} for i, r in enumerate(records)]
    return records


def read_metadata(path: Path) -> dict[str, Any]:
    meta_path = path.with_name(f"{path.stem}.meta.json")
    if not meta_path.is_file():
        return {}
    try:
        return json.loads(meta_path.read_text(encoding="utf-8"))
    except ValueError:
        return {}


def load_experiment(
    name: str | os.PathLike[str], root_dir: str | os.PathLike[str] = "."
) -> Experiment:
    path = resolve(name, root_dir)
    if path.suffix == ".csv":
        records = [
            {"index": i, "status": "ok", "result": row} for i, row in enumerate(read_csv_rows(path))
        ]
        return Experiment(path.stem, records, read_metadata(path), path)
    return Experiment(path.stem, read_records(path), read_metadata(path), path)


def list_experiments(root_dir: str | os.PathLike[str] = ".") -> list[dict[str, Any]]:
    """One summary per results file under `<root_dir>/experiments/`, oldest first."""
    folder = experiments_dir(root_dir)
    if not folder.is_dir():
        return []
    found: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix == ".jsonl" or (path.suffix == ".csv" and path.stem not in found):
            found[path.stem] = path
    summaries: list[dict[str, Any]] = []
    for name, path in found.items():
        meta = read_metadata(path)
        try:
            records = (
                read_records(path) if path.suffix == ".jsonl" else load_experiment(path).records
            )
        except DataError as exc:
            summaries.append(
                {
                    "name": name,
                    "path": str(path),
                    "status": f"unreadable: {exc}",
                    "created": meta.get("created"),
                    "n_rows": None,
                    "n_errors": None,
                    "params": {},
                }
            )
            continue
        status = meta.get("status", "unknown")
        summaries.append(
            {
                "name": name,
                "path": str(path),
                "created": meta.get("created"),
                "status": status if status != "running" else "incomplete",
                "n_rows": len(records),
                "n_errors": sum(1 for r in records if r.get("status") == "error"),
                "params": meta.get("params", {}),
                "dataset": meta.get("dataset"),
            }
        )
    summaries.sort(key=lambda s: (s.get("created") or "", s["name"]))
    return summaries


class ExperimentWriter:
    """Owns the files of one run while it runs."""

    def __init__(
        self, root_dir: str | os.PathLike[str], name: str, *, overwrite: bool = False
    ) -> None:
        self.name = check_name(name, "experiment")
        self.folder = experiments_dir(root_dir)
        self.path = self.folder / f"{name}.jsonl"
        self.meta_path = self.folder / f"{name}.meta.json"
        self.overwrite = overwrite
        self.metadata: dict[str, Any] = {}
        self._handle: IO[str] | None = None

    def exists(self) -> bool:
        return any(p.exists() for p in (self.path, self.meta_path, self.path.with_suffix(".csv")))

    def open(self, metadata: dict[str, Any]) -> None:
        if self.exists() and not self.overwrite:
            raise UsageError(
                f"experiment {self.name!r} already exists in {self.folder}; choose another name, "
                "delete its files, or use @experiment(overwrite=True)"
            )
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path.with_suffix(".csv").unlink(missing_ok=True)
        self.metadata = {
            "format_version": FORMAT_VERSION,
            "assay_version": __version__,
            "name": self.name,
            "created": utc_now(),
            "status": "running",
            **metadata,
        }
        self._write_metadata()
        self._handle = self.path.open("w", encoding="utf-8", newline="\n")

    def append(self, record: dict[str, Any]) -> None:
        if self._handle is None:
            raise RuntimeError("ExperimentWriter.append called before open")
        self._handle.write(dumps(record) + "\n")
        self._handle.flush()  # the line now belongs to the OS and outlives this process

    def close(self, **final: Any) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        self.metadata.update(final)
        self._write_metadata()

    def _write_metadata(self) -> None:
        temporary = self.meta_path.with_name(f".{self.meta_path.name}.tmp")
        temporary.write_text(
            json.dumps(self.metadata, indent=2, ensure_ascii=False, default=repr), encoding="utf-8"
        )
        os.replace(temporary, self.meta_path)


__all__ = ["Experiment", "ExperimentWriter", "list_experiments", "load_experiment", "read_records"]
