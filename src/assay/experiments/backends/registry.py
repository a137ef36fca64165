"""Finding a dataset backend by name: one `Registry` (see `assay._util.registry`) of the built-ins,
`register_backend` names and the `assay.dataset_backends` entry-point group.

The built-in backends (`local/csv`, `local/jsonl`, `inmemory`, `sqlite`) are also declared in
assay's own pyproject under the group, but are known without it, so a source checkout works too.
A name registered with `register_backend` wins over an entry point of the same name; built-in
names cannot be taken over.
"""

from __future__ import annotations

from typing import Any

from assay._util.registry import Registry
from assay.errors import UsageError
from assay.experiments.backends.base import DatasetBackend
from assay.experiments.backends.files import CsvBackend, JsonlBackend
from assay.experiments.backends.memory import InMemoryBackend
from assay.experiments.backends.sqlite import SqliteBackend

ENTRY_POINT_GROUP = "assay.dataset_backends"

BUILTIN: dict[str, type[DatasetBackend]] = {
    "local/csv": CsvBackend,
    "local/jsonl": JsonlBackend,
    "inmemory": InMemoryBackend,
    "sqlite": SqliteBackend,
}


def _backend_class(obj: Any) -> type[DatasetBackend]:
    if not (isinstance(obj, type) and issubclass(obj, DatasetBackend)):
        raise TypeError(f"a dataset backend must be a DatasetBackend subclass, got {obj!r}")
    return obj


BACKENDS: Registry[type[DatasetBackend]] = Registry(
    "dataset backend", ENTRY_POINT_GROUP, builtins=BUILTIN, check=_backend_class
)


def register_backend(name: str, backend: type[DatasetBackend]) -> None:
    """Make `backend` available as `Dataset(..., backend=name)` in this process."""
    BACKENDS.register(name, backend)


def backend_names() -> list[str]:
    """Every backend name known now: built-ins first, then the others sorted."""
    return BACKENDS.names()


def backend_class(name: str) -> type[DatasetBackend]:
    if not isinstance(name, str):
        raise UsageError(f"backend must be a name such as 'local/csv', got {type(name).__name__}")
    return BACKENDS.get(name)


def get_backend(name: str, root_dir: Any) -> DatasetBackend:
    """An instance of backend `name` rooted at `root_dir`."""
    return backend_class(name)(root_dir)


__all__ = [
    "BACKENDS",
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "backend_class",
    "backend_names",
    "get_backend",
    "register_backend",
]
