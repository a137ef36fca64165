"""What a dataset backend is: something that stores named lists of rows under a root.

A backend is a class taking the dataset's `root_dir` (kept as given, so a remote backend may
read it as a folder id or URL) and implementing four methods. Rows handed to `save` are dicts
of values that `assay.experiments.codec.to_jsonable` accepts; `load` returns the rows in order.
To add a backend, subclass `DatasetBackend` and declare it under the entry-point group
`assay.dataset_backends` in your package (or call `register_backend` at import time):

    [project.entry-points."assay.dataset_backends"]
    "gdrive" = "my_package.backends:DriveBackend"
"""

from __future__ import annotations

import os
import re
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar

from assay.errors import UsageError

_NAME = re.compile(r"^[^/\\\x00]+$")


def check_name(name: Any, what: str = "dataset") -> str:
    """A dataset or experiment name must be usable as a file name (no separators)."""
    if (
        not isinstance(name, str)
        or not name.strip()
        or not _NAME.match(name)
        or name in {".", ".."}
    ):
        raise UsageError(
            f"{what} name must be a non-empty string without '/' or '\\', got {name!r}"
        )
    return name


class DatasetBackend(ABC):
    """Stores named datasets. Subclasses set `extension` when they write one file per dataset."""

    #: file suffix (without the dot) for backends that keep `<root_dir>/datasets/<name>.<ext>`
    extension: ClassVar[str | None] = None

    def __init__(self, root_dir: str | os.PathLike[str]) -> None:
        self.root_dir = root_dir

    @abstractmethod
    def load(self, name: str) -> list[dict[str, Any]]:
        """The rows of dataset `name`, in order (only called when `exists(name)`)."""

    @abstractmethod
    def save(self, name: str, rows: list[dict[str, Any]]) -> None:
        """Replace dataset `name` with `rows`."""

    @abstractmethod
    def list_names(self) -> list[str]:
        """The names of the datasets this backend holds under its root, sorted."""

    def exists(self, name: str) -> bool:
        return name in self.list_names()

    def location(self, name: str) -> str:
        """Where dataset `name` lives, for messages."""
        return f"{name} under {self.root_dir}"


class FileBackend(DatasetBackend):
    """Base for backends keeping one file per dataset at `<root_dir>/datasets/<name>.<ext>`."""

    @property
    def directory(self) -> Path:
        return Path(self.root_dir) / "datasets"

    def path(self, name: str) -> Path:
        return self.directory / f"{name}.{self.extension}"

    def exists(self, name: str) -> bool:
        return self.path(name).is_file()

    def list_names(self) -> list[str]:
        if not self.directory.is_dir():
            return []
        suffix = f".{self.extension}"
        return sorted(
            p.name[: -len(suffix)]
            for p in self.directory.iterdir()
            if p.is_file() and p.name.endswith(suffix)
        )

    def location(self, name: str) -> str:
        return str(self.path(name))

    def replace_atomically(self, name: str, write: Any) -> None:
        """Call `write(temporary_path)`, then move the file into place, so a crash mid-save
        leaves the previous version intact."""
        write_atomically(self.path(name), write)


def write_atomically(target: Path, write: Any) -> None:
    """`write(temporary_path)` beside `target`, then move it into place (a crash mid-write
    leaves the previous file intact)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        write(temporary)
        os.replace(temporary, target)
    finally:
        if temporary.exists():
            temporary.unlink()


__all__ = ["DatasetBackend", "FileBackend", "check_name", "write_atomically"]
