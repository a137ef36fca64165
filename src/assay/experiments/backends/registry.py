"""Finding a backend by name: the built-ins, then `register_backend` names, then the entry-point group.

The built-in backends (`local/csv`, `local/jsonl`, `inmemory`, `sqlite`) are also declared in
assay's own pyproject under the group, but are known without it, so a source checkout works too.
A name registered with `register_backend` wins over an entry point of the same name; built-in
names cannot be taken over.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

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
_registered: dict[str, type[DatasetBackend]] = {}


def _entry_points() -> dict[str, Any]:
    """Entry points of the group, by name (a separate function so tests can stand one in)."""
    return {point.name: point for point in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def register_backend(name: str, backend: type[DatasetBackend]) -> None:
    """Make `backend` available as `Dataset(..., backend=name)` in this process."""
    if name in BUILTIN:
        raise UsageError(f"dataset backend {name!r} is built in and cannot be replaced")
    if not (isinstance(backend, type) and issubclass(backend, DatasetBackend)):
        raise UsageError(f"a dataset backend must be a DatasetBackend subclass, got {backend!r}")
    _registered[name] = backend


def backend_names() -> list[str]:
    """Every backend name known now: built-ins first, then the others sorted."""
    others = (set(_entry_points()) | set(_registered)) - set(BUILTIN)
    return [*BUILTIN, *sorted(others)]


def backend_class(name: str) -> type[DatasetBackend]:
    if not isinstance(name, str):
        raise UsageError(f"backend must be a name such as 'local/csv', got {type(name).__name__}")
    if name in BUILTIN:
        return BUILTIN[name]
    if name in _registered:
        return _registered[name]
    point = _entry_points().get(name)
    if point is None:
        raise UsageError(
            f"unknown dataset backend {name!r}; known backends: {', '.join(backend_names())}"
        )
    try:
        loaded = point.load()
    except Exception as exc:
        raise UsageError(
            f"dataset backend {name!r} (entry point {point.value}) failed to load: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if not (isinstance(loaded, type) and issubclass(loaded, DatasetBackend)):
        raise UsageError(
            f"entry point {point.value} for backend {name!r} is not a DatasetBackend subclass"
        )
    return loaded


def get_backend(name: str, root_dir: Any) -> DatasetBackend:
    """An instance of backend `name` rooted at `root_dir`."""
    return backend_class(name)(root_dir)


__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "backend_class",
    "backend_names",
    "get_backend",
    "register_backend",
]
