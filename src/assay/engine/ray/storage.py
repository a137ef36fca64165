"""Where a Ray run keeps its files: a local directory, or any fsspec URI (`s3://bucket/run`,
`ftp://host/run`, `memory://run`, chained `simplecache::s3://...`).

A `Storage` is the run's directory seen through one small interface; it is pickled as it is and
sent to the workers, so each reopens the same place (an fsspec filesystem pickles as its class and
options, credentials included, in Ray's memory only). Two ways of writing rows:

- JSONL rows on a local directory (a plain path or a `file://` URI) are appended: each worker
  keeps one file open and flushes every finished row, so a kill loses only the rows in flight, and
  a line torn by a kill is passed over when reading;
- any other file system, and Parquet rows anywhere (a Parquet file cannot be appended to), get
  whole files: a worker gathers finished rows and commits them as a new part file (at the end of
  each block, and at least every `COMMIT_SECONDS` or `COMMIT_ROWS`).
  A file is written under a temporary name the readers never list and then moved into place, so
  a part file that is there is complete (object stores only show an object once it is complete).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from assay._util.deps import require
from assay.errors import UsageError
from assay.schema.dataset import atomic_open

COMMIT_SECONDS = 1.0
COMMIT_ROWS = 64
ROW_FORMATS = ("jsonl", "parquet")  # also the part files' suffixes
PART_GLOB = "part-*"
READ_BATCH = 256


def is_part(name: str) -> bool:
    return name.startswith("part-") and name.rpartition(".")[2] in ROW_FORMATS


def is_uri(location: Any) -> bool:
    return isinstance(location, str) and ("://" in location or "::" in location)


def shown(location: str) -> str:
    """The location without a password, for messages and results."""
    parts = urlsplit(location.rsplit("::", 1)[-1])
    if parts.password is None:
        return location
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    prefix = location.rsplit("::", 1)[0] + "::" if "::" in location else ""
    return prefix + urlunsplit(parts._replace(netloc=netloc))


class Storage:
    """A directory of a Ray run, by paths relative to it (`"rows/part-w0-....jsonl"`)."""

    def __init__(self, location: str | Path, storage_options: dict[str, Any] | None = None) -> None:
        self.fs: Any = None
        if is_uri(location):
            text = str(location)
            fsspec = require("fsspec", extra="ray", feature="a Ray output given as a URI")
            try:
                fs, root = fsspec.core.url_to_fs(text, **(storage_options or {}))
            except (ImportError, ValueError, TypeError, OSError) as exc:
                raise UsageError(f"output {shown(text)}: cannot open it ({exc})") from None
            from fsspec.implementations.local import LocalFileSystem

            if isinstance(fs, LocalFileSystem):  # file://: a local directory like any other
                self.local: Path | None = Path(root)
            else:
                self.local, self.fs, self.root = None, fs, root.rstrip("/") or "/"
            self.shown = shown(text)
        else:
            if storage_options:
                raise UsageError("storage_options apply only to an output given as a URI")
            self.local = Path(location)
            self.shown = str(location)

    # -- paths ---------------------------------------------------------------------------
    def _full(self, relative: str) -> str:
        return f"{self.root}/{relative}" if relative else self.root

    def for_worker(self) -> Storage:
        """This storage as a worker opens it (a local directory by its absolute path)."""
        if self.local is not None and not self.local.is_absolute():
            copy = Storage(self.local.resolve())
            copy.shown = self.shown
            return copy
        return self

    # -- queries -------------------------------------------------------------------------
    def is_file(self, relative: str = "") -> bool:
        if self.local is not None:
            return (self.local / relative).is_file()
        self.fs.invalidate_cache()  # other processes write here: never trust a cached listing
        return bool(self.fs.isfile(self._full(relative)))

    def exists(self, relative: str) -> bool:
        if self.local is not None:
            return (self.local / relative).exists()
        self.fs.invalidate_cache()
        return bool(self.fs.exists(self._full(relative)))

    def parts(self, rows_format: str | None = None) -> list[str]:
        """The committed part files under rows/ (of one format, or both), sorted; temporary files
        are never listed."""
        if self.local is not None:
            rows = self.local / "rows"
            names = [part.name for part in rows.glob(PART_GLOB)] if rows.is_dir() else []
        else:
            self.fs.invalidate_cache()
            try:
                found = self.fs.glob(self._full(f"rows/{PART_GLOB}"))
            except FileNotFoundError:
                found = []
            names = [PurePosixPath(str(path)).name for path in found]
        return sorted(
            f"rows/{name}"
            for name in names
            if is_part(name) and (rows_format is None or name.endswith(f".{rows_format}"))
        )

    def read_parts(self, parts: list[str]) -> Iterator[tuple[str, bytes]]:
        """Each part file and its content, in order; one that vanished or cannot be read is left
        out. Remote files are fetched in batches (concurrently where the file system can)."""
        if self.local is not None:
            for part in parts:
                try:
                    yield part, (self.local / part).read_bytes()
                except OSError:
                    continue
            return
        for start in range(0, len(parts), READ_BATCH):
            names = parts[start : start + READ_BATCH]
            batch = [self._full(part) for part in names]
            found = self.fs.cat(batch, on_error="omit")
            for part, path in zip(names, batch, strict=True):
                data = found.get(path)
                if not isinstance(data, bytes):  # left out (or named otherwise): ask for it alone
                    try:
                        data = bytes(self.fs.cat_file(path))
                    except OSError:
                        continue
                yield part, data

    def read_bytes(self, relative: str) -> bytes:
        if self.local is not None:
            return (self.local / relative).read_bytes()
        return bytes(self.fs.cat_file(self._full(relative)))

    # -- writes --------------------------------------------------------------------------
    def make_dirs(self, relative: str) -> None:
        if self.local is not None:
            (self.local / relative).mkdir(parents=True, exist_ok=True)
        else:
            self.fs.makedirs(self._full(relative), exist_ok=True)

    def write_whole(self, relative: str, data: bytes, *, durable: bool = True) -> None:
        """Write a file that appears complete or not at all (temporary name, then moved).

        A local file is synced to disk first unless `durable` is False (a part file: a killed
        process cannot tear it either way, and a part lost to a power cut is only re-scored)."""
        if self.local is not None:
            if durable:
                with atomic_open(self.local / relative, newline="") as handle:
                    handle.write(data.decode("utf-8"))
                return
            path = self.local / relative
            temporary = path.with_name(f".tmp-{secrets.token_hex(6)}-{path.name}")
            try:
                with open(temporary, "xb") as handle:
                    handle.write(data)
                os.replace(temporary, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    temporary.unlink()
                raise
            return
        folder, _, name = relative.rpartition("/")
        staging = f"{folder}/.tmp-{secrets.token_hex(6)}-{name}" if folder else f".tmp-{name}"
        self.fs.pipe_file(self._full(staging), data)
        try:
            self.fs.mv(self._full(staging), self._full(relative))
        except BaseException:
            with contextlib.suppress(Exception):  # the move's error is the one to report
                self.fs.rm(self._full(staging))
            raise

    def touch(self, relative: str) -> None:
        if self.local is not None:
            (self.local / relative).parent.mkdir(parents=True, exist_ok=True)
            (self.local / relative).touch()
        else:
            self.fs.pipe_file(self._full(relative), b"")

    def remove(self, relative: str) -> None:
        if self.local is not None:
            (self.local / relative).unlink(missing_ok=True)
        elif self.fs.exists(self._full(relative)):
            self.fs.rm(self._full(relative))


__all__ = ["COMMIT_ROWS", "COMMIT_SECONDS", "ROW_FORMATS", "Storage", "is_part", "is_uri", "shown"]
