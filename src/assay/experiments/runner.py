"""`@experiment`: run a function over every row of a dataset, saving each result as it finishes.

    @experiment()
    async def answer(row, model="small"):
        reply = await my_app(row["query"], model=model)
        return {**row, "response": reply, "score": judge.score(response=reply).value}

    results = await answer.arun(dataset, name="baseline", model="large")   # or answer.run(...)
    answer(row)   # still the plain function

Rows run concurrently, at most `max_concurrency` at a time (sync functions in worker threads).
An exception in a row is recorded in that row and the run goes on. Each finished row is appended
to `experiments/<name>.jsonl` at once (a crash keeps it); when the run ends, the rows are also
written to `experiments/<name>.csv`, the file Ragas' `local/csv` backend leaves (one column per key
the function returned). See `store.py` for the files.
"""

from __future__ import annotations

import copy
import functools
import inspect
import os
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from assay._util.sync import run_sync
from assay.engine.progress import CellProgress
from assay.errors import UsageError
from assay.experiments.backends.base import check_name
from assay.experiments.codec import to_jsonable
from assay.experiments.dataset import default_root
from assay.experiments.store import Experiment, ExperimentWriter, utc_now


def experiment(
    fn: Callable[..., Any] | None = None,
    *,
    name_prefix: str = "",
    max_concurrency: int = 16,
    root_dir: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    overwrite: bool = False,
    csv: bool = True,
    show_progress: bool = True,
) -> Any:
    """Make `fn(row, *args, **kwargs) -> dict` runnable over a dataset with `.arun` / `.run`.

    name_prefix: put before the run's name (`<prefix>-<name>`), or after the timestamp of an
        unnamed run (`20250924-212541-<prefix>`).
    max_concurrency: rows in flight at once.
    root_dir: where `experiments/` goes; default the dataset's root_dir, else the working directory.
    timeout: seconds allowed per row; a row over it is recorded as a `Timeout` error.
    overwrite: replace an earlier run of the same name instead of refusing.
    csv: when the run ends, also write `experiments/<name>.csv`, one row per dataset row with
        the columns the function returned (a failed row: its input columns and `error`), as
        Ragas does; `csv=False` keeps only the JSONL.
    """
    if max_concurrency < 1:
        raise UsageError(f"max_concurrency must be at least 1, got {max_concurrency}")
    options = dict(
        name_prefix=name_prefix,
        max_concurrency=max_concurrency,
        root_dir=root_dir,
        timeout=timeout,
        overwrite=overwrite,
        csv=csv,
        show_progress=show_progress,
    )

    def wrap(function: Callable[..., Any]) -> ExperimentFunction:
        return ExperimentFunction(function, **options)

    return wrap(fn) if fn is not None else wrap


class ExperimentFunction:
    """A function with `.arun`/`.run`; calling it calls the function unchanged."""

    def __init__(self, fn: Callable[..., Any], **options: Any) -> None:
        if not callable(fn):
            raise UsageError(f"@experiment needs a function, got {type(fn).__name__}")
        functools.update_wrapper(self, fn)  # first, so attributes of `fn` cannot replace ours
        self.fn = fn
        self.options = options

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<experiment {getattr(self.fn, '__qualname__', self.fn)!r}>"

    def run(self, dataset: Any, *args: Any, name: str | None = None, **kwargs: Any) -> Experiment:
        """`arun` from synchronous code (scripts, notebooks, inside a running loop)."""
        return run_sync(self.arun(dataset, *args, name=name, **kwargs))

    async def arun(
        self, dataset: Any, *args: Any, name: str | None = None, **kwargs: Any
    ) -> Experiment:
        """Call the function on every row (extra args and kwargs passed along), save the results
        to `<root_dir>/experiments/<name>.jsonl` as they finish and, when all have, to
        `<root_dir>/experiments/<name>.csv`; return them as an `Experiment`."""
        rows = _rows_of(dataset)
        opts = self.options
        root = Path(opts["root_dir"]) if opts["root_dir"] is not None else default_root(dataset)
        writer = ExperimentWriter(root, self._name(name, root), overwrite=opts["overwrite"])
        writer.open(
            {
                "function": f"{getattr(self.fn, '__module__', '?')}.{getattr(self.fn, '__qualname__', '?')}",
                "dataset": {
                    "name": getattr(dataset, "name", None),
                    "backend": getattr(dataset, "backend", None),
                    "rows": len(rows),
                },
                "params": _params(args, kwargs),
                "max_concurrency": opts["max_concurrency"],
            }
        )
        records: list[dict[str, Any]] = []
        started = time.perf_counter()
        status = "interrupted"
        try:
            with CellProgress(
                len(rows),
                enabled=opts["show_progress"],
                title=f"Running experiment {writer.name}",
                unit="rows",
            ) as progress:
                pending = iter(enumerate(rows))

                async def worker() -> None:
                    for index, row in pending:
                        record = await self._one(index, row, args, kwargs)
                        writer.append(record)
                        records.append(record)
                        progress.advance(failed=record["status"] == "error")

                async with anyio.create_task_group() as group:
                    for _ in range(min(opts["max_concurrency"], len(rows))):
                        group.start_soon(worker)
            status = "finished"
        finally:
            writer.close(
                status=status,
                finished=utc_now(),
                n_rows=len(records),
                n_errors=sum(1 for r in records if r["status"] == "error"),
                seconds=round(time.perf_counter() - started, 3),
            )
        result = Experiment(writer.name, records, writer.metadata, writer.path)
        if opts["csv"]:
            result.to_csv()
        return result

    async def _one(
        self, index: int, row: dict[str, Any], args: tuple, kwargs: dict
    ) -> dict[str, Any]:
        began = time.perf_counter()
        given = _copy(
            row
        )  # the function may change its row; the dataset and the record stay as they were
        scope: anyio.CancelScope | None = None
        try:
            with anyio.fail_after(self.options["timeout"]) as scope:
                if _is_async(self.fn):
                    returned = await self.fn(given, *args, **kwargs)
                else:
                    call = functools.partial(self.fn, given, *args, **kwargs)
                    returned = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
                    if inspect.isawaitable(returned):
                        returned = await returned
            if not isinstance(returned, Mapping):
                raise TypeError(
                    f"the experiment function must return a dict, got {type(returned).__name__}"
                )
            result = to_jsonable(returned)
        except Exception as exc:
            if isinstance(exc, TimeoutError) and scope is not None and scope.cancel_called:
                error = {
                    "type": "Timeout",
                    "message": f"no result within {self.options['timeout']:g} s",
                }
            else:
                leaf = _first_leaf(exc)
                error = {"type": type(leaf).__name__, "message": str(leaf) or repr(leaf)}
            return _failed(index, row, began, error)
        return {
            "index": index,
            "status": "ok",
            "seconds": round(time.perf_counter() - began, 4),
            "result": result,
        }

    def _name(self, name: str | None, root: Path) -> str:
        prefix = self.options["name_prefix"]
        if name is not None:
            return check_name(f"{prefix}-{name}" if prefix else name, "experiment")
        base = datetime.now().strftime("%Y%m%d-%H%M%S") + (f"-{prefix}" if prefix else "")
        chosen, attempt = base, 1
        while ExperimentWriter(root, check_name(chosen, "experiment")).exists():
            attempt += 1
            chosen = f"{base}-{attempt}"
        return chosen


def _failed(index: int, row: dict[str, Any], began: float, error: dict[str, str]) -> dict[str, Any]:
    try:
        given = to_jsonable(row)
    except TypeError:
        given = {key: repr(value) for key, value in row.items()}
    return {
        "index": index,
        "status": "error",
        "seconds": round(time.perf_counter() - began, 4),
        "error": error,
        "input": given,
    }


def _first_leaf(exc: BaseException) -> BaseException:
    """The first exception inside (possibly nested) exception groups, e.g. from the user's task group."""
    while leaves := getattr(exc, "exceptions", None):  # an exception group's
        exc = leaves[0]
    return exc


def _is_async(fn: Any) -> bool:
    """Coroutine functions, partials of them, and objects with an `async def __call__`."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


def _copy(row: dict[str, Any]) -> dict[str, Any]:
    try:
        return copy.deepcopy(row)
    except Exception:  # an object that refuses to be copied: a shallow copy will do
        return dict(row)


def _rows_of(dataset: Any) -> list[dict[str, Any]]:
    if isinstance(dataset, (Mapping, str, bytes)):
        raise UsageError(
            f"arun needs a Dataset or a list of row dicts, not a single {type(dataset).__name__}"
        )
    try:
        rows = list(dataset)
    except TypeError:
        raise UsageError(
            f"arun needs a Dataset or a list of row dicts, got {type(dataset).__name__}"
        ) from None
    for position, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise UsageError(f"row {position} of the dataset is a {type(row).__name__}, not a dict")
    return [dict(row) for row in rows]


def _params(args: tuple, kwargs: dict) -> dict[str, Any]:
    def safe(value: Any) -> Any:
        try:
            return to_jsonable(value)
        except TypeError:
            return repr(value)

    return {"args": [safe(a) for a in args], "kwargs": {k: safe(v) for k, v in kwargs.items()}}


__all__ = ["ExperimentFunction", "experiment"]
