"""`inmemory`: datasets kept in this process only, shared by name and root.

Rows are deep-copied on save and on load, so objects (a pydantic message, say) stay objects and
later changes to a dataset do not leak into the saved copy. Nothing reaches the disk.
"""

from __future__ import annotations

import copy
import threading
from typing import Any

from assay.experiments.backends.base import DatasetBackend

_STORE: dict[tuple[str, str], list[dict[str, Any]]] = {}
_LOCK = threading.Lock()


class InMemoryBackend(DatasetBackend):
    extension = None

    @property
    def _root(self) -> str:
        return str(self.root_dir)

    def load(self, name: str) -> list[dict[str, Any]]:
        with _LOCK:
            return copy.deepcopy(_STORE[(self._root, name)])

    def save(self, name: str, rows: list[dict[str, Any]]) -> None:
        saved = copy.deepcopy(rows)
        with _LOCK:
            _STORE[(self._root, name)] = saved

    def exists(self, name: str) -> bool:
        with _LOCK:
            return (self._root, name) in _STORE

    def list_names(self) -> list[str]:
        with _LOCK:
            return sorted(name for root, name in _STORE if root == self._root)

    def location(self, name: str) -> str:
        return f"in memory ({name!r}, root {self._root!r})"


__all__ = ["InMemoryBackend"]
