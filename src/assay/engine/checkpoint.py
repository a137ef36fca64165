"""A run directory: finished cells are appended as they complete, so a killed run can resume.

Layout of a run directory:

    run.json      what the run is: format version, fingerprint of data + metrics, sizes
    cells.jsonl   one finished cell per line, appended and flushed as each completes

On resume, cells with an `ok` or `skipped` outcome are kept and not recomputed; cells that
ended in `error` are tried again (errors are usually transient: timeouts, rate limits).
A process killed mid-write can leave a torn last line; it is cut off before appending. Any other
line that cannot be read (bytes that are not UTF-8, text that is not JSON, JSON that is not a cell
of this run) is moved to `cells.jsonl.unreadable` with a warning, and its cell is computed again.
A `run.json` that cannot be read is refused with `CheckpointMismatch`: the directory is not one
assay can resume, and nothing in it is touched.
"""

from __future__ import annotations

import array
import contextlib
import hashlib
import json
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from assay._version import __version__
from assay.errors import CheckpointMismatch, UsageError
from assay.schema.dataset import atomic_open, json_line
from assay.schema.outcome import Cell
from assay.schema.usage import Usage

FORMAT_VERSION = 1


def fingerprint(
    rows: Iterable[dict[str, Any]], metric_specs: list[dict[str, Any]], extra: dict[str, Any]
) -> str:
    """A stable hash of everything that determines a run's results.

    The hash of `json.dumps({"rows": rows, "metrics": metric_specs, "extra": extra},
    sort_keys=True, ensure_ascii=False, default=str)`, fed one row at a time: the rows may be a
    generator, and neither their list nor the whole text is ever held (for 100k rows they were
    several times the data's own size at the start of every run)."""
    digest = hashlib.sha256()

    def feed(text: str) -> None:
        # surrogatepass: a lone surrogate in the data (from a valid "\\udcff" escape) hashes
        # instead of crashing; every other text hashes exactly as before.
        digest.update(text.encode("utf-8", "surrogatepass"))

    feed(f'{{"extra": {_dumps(extra)}, "metrics": {_dumps(metric_specs)}, "rows": [')
    for index, row in enumerate(rows):
        feed(f", {_dumps(row)}" if index else _dumps(row))
    feed("]}")
    return digest.hexdigest()


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


class RunDirectory:
    """Owns one run directory for the duration of a run."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.manifest_path = self.path / "run.json"
        self.cells_path = self.path / "cells.jsonl"
        self.unreadable_path = self.path / "cells.jsonl.unreadable"
        self._handle: IO[str] | None = None
        # What every saved cell's calls used, failed attempts that were tried again included:
        # what earlier invocations of this run spent.
        self.spent = Usage()

    def open(
        self,
        *,
        run_fingerprint: str,
        description: dict[str, Any],
        n_rows: int | None = None,
        metric_names: Collection[str] | None = None,
    ) -> dict[tuple[int, str], Cell]:
        """Create or reopen the directory; return the cells already finished (to keep).

        With `n_rows` and `metric_names`, a saved cell of a row or metric this run does not have
        is treated like an unreadable line."""
        self._check_manifest(run_fingerprint, description)
        finished = self._read_cells(n_rows, metric_names)
        self._open_for_appending()
        return finished

    def _check_manifest(self, run_fingerprint: str, description: dict[str, Any]) -> None:
        """Create the directory and its run.json, or check that the one there is this run's."""
        self._make_directory()
        if self.manifest_path.exists() or self.manifest_path.is_symlink():
            manifest = self._read_manifest()
            if manifest.get("fingerprint") != run_fingerprint:
                raise CheckpointMismatch(
                    f"run directory {self.path} holds a run over different data, metrics or settings "
                    f"(started {manifest.get('created', '?')}); use another --run-dir or delete this one"
                )
        else:
            if self.cells_path.is_file() and self.cells_path.stat().st_size:
                raise CheckpointMismatch(
                    f"run directory {self.path} has saved cells but no run.json, so it cannot tell which run "
                    "they belong to; use another --run-dir, or delete this one to start over"
                )
            manifest = {
                "format_version": FORMAT_VERSION,
                "assay_version": __version__,
                "fingerprint": run_fingerprint,
                "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                **description,
            }
            text = json.dumps(manifest, indent=2, ensure_ascii=False)
            if not _encodable(text):
                text = json.dumps(manifest, indent=2, ensure_ascii=True)
            with self._writing(), atomic_open(self.manifest_path) as handle:
                handle.write(text)

    def open_indexed(
        self,
        *,
        run_fingerprint: str,
        description: dict[str, Any],
        n_rows: int,
        metric_names: Collection[str],
    ) -> CellIndex:
        """`open`, for a run too large to hold its saved cells: where each kept cell's line is
        (8 bytes a cell), to read a range of rows' cells when the run reaches them."""
        self._check_manifest(run_fingerprint, description)
        index = CellIndex(self.cells_path, n_rows, metric_names)
        self._scan(n_rows, metric_names, index.keep)
        self._open_for_appending()
        return index

    def _open_for_appending(self) -> None:
        with self._writing():
            self._handle = self.cells_path.open("a", encoding="utf-8", newline="")

    def _make_directory(self) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise UsageError(
                f"run directory {self.path} is a file, not a directory; give --run-dir a directory "
                "(it is created if missing)"
            )
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            blocking = next(
                (parent for parent in self.path.parents if parent.is_file()), self.path.parent
            )
            raise UsageError(
                f"cannot create run directory {self.path}: {blocking} is a file"
            ) from None
        except OSError as exc:
            raise UsageError(
                f"cannot create run directory {self.path}: {exc.strerror or exc}"
            ) from None

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        try:
            yield
        except PermissionError:
            raise UsageError(f"run directory {self.path} is not writable") from None

    def _read_manifest(self) -> dict[str, Any]:
        problem = "it does not describe a run"
        manifest: Any = None
        try:
            manifest = json.loads(self.manifest_path.read_bytes().decode("utf-8"))
        except OSError as exc:
            problem = f"it cannot be read: {exc.strerror or exc}"
        except UnicodeDecodeError:
            problem = "it is not UTF-8 text"
        except (ValueError, RecursionError):
            problem = "it is not valid JSON"
        if isinstance(manifest, dict) and isinstance(manifest.get("fingerprint"), str):
            return manifest
        raise CheckpointMismatch(
            f"run directory {self.path} has a run.json that assay cannot use ({problem}); it was damaged or "
            f"not written by assay: delete the directory {self.path} to start over (its saved cells are then "
            "computed again), or use another --run-dir"
        )

    def _read_cells(
        self, n_rows: int | None, metric_names: Collection[str] | None
    ) -> dict[tuple[int, str], Cell]:
        cells: dict[tuple[int, str], Cell] = {}

        def keep(cell: Cell, offset: int) -> None:
            if cell.outcome.status == "error":
                cells.pop((cell.row, cell.metric), None)
            else:
                cells[(cell.row, cell.metric)] = cell

        self._scan(n_rows, metric_names, keep)
        return cells

    def _scan(
        self,
        n_rows: int | None,
        metric_names: Collection[str] | None,
        keep: Callable[[Cell, int], None],
    ) -> None:
        """Hand every readable saved cell, with its line's byte offset, to `keep`; set unreadable
        lines aside and cut a torn last line off (see the module)."""
        try:
            source = self.cells_path.open("rb")
        except FileNotFoundError:
            return
        except OSError as exc:
            raise CheckpointMismatch(
                f"run directory {self.path}: cells.jsonl cannot be read ({exc.strerror or exc}); "
                "delete the directory to start over, or use another --run-dir"
            ) from None
        # Read a line at a time (a finished 100k-row run's file is tens of MB): only the cells
        # kept and the unreadable lines are held. A last line without its newline is a torn write
        # from a killed process: dropped. Lines end at b"\n" alone: text in a cell may hold other
        # line separators (U+2028, ...), which `splitlines` would cut at.
        cut = 0
        bad: list[bytes] = []
        spent = Usage()
        with source:
            for line in source:
                if not line.endswith(b"\n"):
                    break
                offset, cut = cut, cut + len(line)
                if not line.strip():
                    continue
                cell = _parse_cell(line, n_rows, metric_names)
                if cell is None:
                    bad.append(line)
                    continue
                if cell.usage is not None:
                    spent = spent + cell.usage
                if not bad:  # after a bad line the offsets change when the file is rewritten
                    keep(cell, offset)
            size = source.seek(0, 2)
        if bad:
            # Keep what could not be read (never lose data), and leave cells.jsonl readable.
            with self._writing():
                with self.unreadable_path.open("ab") as aside:
                    aside.writelines(bad)
                self._keep_readable_lines(cut, n_rows, metric_names)
            plural = "line" if len(bad) == 1 else "lines"
            warnings.warn(
                f"{len(bad)} unreadable {plural} in {self.cells_path} skipped and moved to "
                f"{self.unreadable_path.name}; those cells are computed again",
                UserWarning,
                stacklevel=5,
            )
            self._scan(n_rows, metric_names, keep)  # the rewritten file: every line readable
            return
        if cut < size:
            with self._writing(), self.cells_path.open("r+b") as handle:
                handle.truncate(cut)
        self.spent = spent

    def _keep_readable_lines(
        self, cut: int, n_rows: int | None, metric_names: Collection[str] | None
    ) -> None:
        """Rewrite cells.jsonl with only its readable lines (of its first `cut` bytes)."""
        seen = 0
        with self.cells_path.open("rb") as source, atomic_open(self.cells_path, newline="") as out:
            for line in source:
                seen += len(line)
                if seen > cut:
                    break
                if line.strip() and _parse_cell(line, n_rows, metric_names) is not None:
                    out.write(line.decode("utf-8"))

    def append(self, cell: Cell) -> None:
        if self._handle is None:
            raise RuntimeError("RunDirectory.append called before open")
        self._handle.write(json_line(cell.model_dump(mode="json")))
        # Flushing hands the line to the OS, which keeps it even if this process is killed.
        self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


class CellIndex:
    """Where the kept cells of a run directory are: per metric, the byte offset of each row's
    saved line in cells.jsonl (-1: none; a cell that ended in error is not kept)."""

    def __init__(self, cells_path: Path, n_rows: int, metric_names: Collection[str]) -> None:
        self.cells_path = cells_path
        self.n_rows = n_rows
        self._offsets = {name: array.array("q", [-1]) * n_rows for name in metric_names}

    def keep(self, cell: Cell, offset: int) -> None:
        self._offsets[cell.metric][cell.row] = -1 if cell.outcome.status == "error" else offset

    def __len__(self) -> int:
        return sum(1 for offsets in self._offsets.values() for offset in offsets if offset >= 0)

    def cells(self, rows: range) -> dict[tuple[int, str], Cell]:
        """The kept cells of `rows`, read from the file."""
        found: dict[tuple[int, str], Cell] = {}
        wanted = [
            (offsets[row], name)
            for name, offsets in self._offsets.items()
            for row in rows
            if offsets[row] >= 0
        ]
        if not wanted:
            return found
        with self.cells_path.open("rb") as source:
            for offset, _ in sorted(wanted):
                source.seek(offset)
                cell = _parse_cell(source.readline(), self.n_rows, self._offsets)
                if cell is not None:
                    found[(cell.row, cell.metric)] = cell
        return found


def saved_cells(run_dir: str | Path) -> Iterator[Cell]:
    """Every readable cell record of a run directory's `cells.jsonl`, in file order (for readers
    outside a run, e.g. the benchmark's cost figures); unreadable lines are passed over."""
    path = Path(run_dir) / "cells.jsonl"
    if not path.exists():
        return
    for line in path.read_bytes().split(b"\n"):
        cell = _parse_cell(line, None, None) if line.strip() else None
        if cell is not None:
            yield cell


def _parse_cell(
    line: bytes, n_rows: int | None, metric_names: Collection[str] | None
) -> Cell | None:
    """A saved cell, or None for a line that cannot be one of this run's cells."""
    try:
        record = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    try:
        # Validated from Python objects, not JSON text: pydantic's JSON reader refuses the
        # escaped lone surrogates that `json_line` writes for text UTF-8 cannot hold.
        cell = Cell.model_validate(record)
    except ValidationError:
        return None
    if n_rows is not None and not 0 <= cell.row < n_rows:
        return None
    if metric_names is not None and cell.metric not in metric_names:
        return None
    return cell


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


__all__ = ["FORMAT_VERSION", "CellIndex", "RunDirectory", "fingerprint"]
