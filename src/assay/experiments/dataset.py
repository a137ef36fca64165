"""`Dataset`: a named, ordered list of free-form rows kept in a backend.

    ds = Dataset("test_dataset", backend="local/csv", root_dir="evals")
    ds.append({"id": "q1", "query": "...", "metadata": {"topic": "billing"}})
    ds.save()                                   # evals/datasets/test_dataset.csv
    ds = Dataset.load(name="test_dataset", backend="local/csv", root_dir="evals")

Unlike `EvaluationDataset` (typed samples for `evaluate`), a row here is any dict with string
keys; it is what an `@experiment` function receives.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, overload

from assay._util.deps import require
from assay.errors import UsageError
from assay.experiments.backends.base import DatasetBackend, check_name
from assay.experiments.backends.registry import get_backend


class Dataset:
    """Rows in memory, persisted by `save()` to the backend named at construction."""

    def __init__(
        self,
        name: str,
        backend: str = "local/csv",
        root_dir: str | os.PathLike[str] = ".",
        data: Iterable[Mapping[str, Any]] | None = None,
    ) -> None:
        self.name = check_name(name)
        self.backend = backend
        self.root_dir = root_dir
        self._store: DatasetBackend = get_backend(backend, root_dir)
        self._rows: list[dict[str, Any]] = []
        for row in data or ():
            self.append(row)

    # -- rows ------------------------------------------------------------------------------------
    def append(self, row: Mapping[str, Any]) -> None:
        """Add one row (a dict with string keys); values may be nested dicts and lists."""
        if not isinstance(row, Mapping):
            raise UsageError(f"a dataset row must be a dict, got {type(row).__name__}")
        bad = [key for key in row if not isinstance(key, str)]
        if bad:
            raise UsageError(f"dataset column names must be strings, got {bad[0]!r}")
        self._rows.append(dict(row))

    def extend(self, rows: Iterable[Mapping[str, Any]]) -> None:
        for row in rows:
            self.append(row)

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._rows)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        return self._rows[index]

    def __repr__(self) -> str:
        return f"Dataset(name={self.name!r}, backend={self.backend!r}, len={len(self)})"

    @property
    def columns(self) -> list[str]:
        """Every key of every row, in order of first appearance."""
        seen: dict[str, None] = {}
        for row in self._rows:
            seen.update(dict.fromkeys(row))
        return list(seen)

    def to_list(self) -> list[dict[str, Any]]:
        return [dict(row) for row in self._rows]

    # -- persistence -----------------------------------------------------------------------------
    @property
    def location(self) -> str:
        """Where `save()` writes (a file path for the file backends)."""
        return self._store.location(self.name)

    def save(self) -> str:
        """Write every row to the backend, replacing what was saved before; returns the location."""
        self._store.save(self.name, self._rows)
        return self.location

    @classmethod
    def load(
        cls, name: str, backend: str = "local/csv", root_dir: str | os.PathLike[str] = "."
    ) -> Dataset:
        """Read dataset `name` back from `backend` under `root_dir`."""
        dataset = cls(name, backend=backend, root_dir=root_dir)
        store = dataset._store
        if not store.exists(dataset.name):
            known = store.list_names()
            hint = f"; it has: {', '.join(known)}" if known else ""
            raise UsageError(
                f"no dataset {name!r} in backend {backend!r} at {store.location(name)}{hint}"
            )
        dataset._rows = [dict(row) for row in store.load(dataset.name)]
        return dataset

    @classmethod
    def list_names(
        cls, backend: str = "local/csv", root_dir: str | os.PathLike[str] = "."
    ) -> list[str]:
        """Names of the datasets saved in `backend` under `root_dir`."""
        return get_backend(backend, root_dir).list_names()

    @classmethod
    def from_list(
        cls,
        data: Iterable[Mapping[str, Any]],
        name: str = "dataset",
        backend: str = "inmemory",
        root_dir: str | os.PathLike[str] = ".",
    ) -> Dataset:
        """A dataset of these rows, as Ragas' docs write it: `Dataset.from_list([{...}, {...}])`.
        Kept in memory unless a backend is named (then `save()` writes it)."""
        if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Iterable):
            raise UsageError(
                f"Dataset.from_list data must be a list of dicts, got {type(data).__name__}"
            )
        return cls(name, backend=backend, root_dir=root_dir, data=data)

    # -- pandas ----------------------------------------------------------------------------------
    @classmethod
    def from_pandas(
        cls,
        frame: Any,
        name: str,
        backend: str = "inmemory",
        root_dir: str | os.PathLike[str] = ".",
    ) -> Dataset:
        """One row per DataFrame row; pandas' missing values (NaN, NaT, None) become None."""
        pd = require("pandas", extra="pandas", feature="Dataset.from_pandas")
        records = frame.to_dict(orient="records")
        rows = [
            {str(key): _from_pandas_cell(pd, value) for key, value in record.items()}
            for record in records
        ]
        return cls(name, backend=backend, root_dir=root_dir, data=rows)

    def to_pandas(self) -> Any:
        """A DataFrame with one column per key; nested values stay Python objects."""
        pd = require("pandas", extra="pandas", feature="Dataset.to_pandas")
        return pd.DataFrame(self._rows, columns=self.columns or None)


def _from_pandas_cell(pd: Any, value: Any) -> Any:
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        value = value.tolist()  # numpy scalars and arrays become Python values
    if isinstance(value, (str, list, tuple, dict, set)):
        return value
    try:
        missing = pd.isna(value)
    except (TypeError, ValueError):
        return value
    return None if missing is True else value


def default_root(dataset: Any) -> Path:
    """Where an experiment over `dataset` writes: the dataset's root, else the working directory."""
    root = getattr(dataset, "root_dir", None)
    if isinstance(root, (str, os.PathLike)):
        return Path(root)
    return Path(".")


__all__ = ["Dataset"]
