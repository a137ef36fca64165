"""`Executor`: an evaluation you can start later, wait for, or cancel (`evaluate(..., return_executor=True)`).

    executor = evaluate(dataset, metrics, return_executor=True)   # nothing runs yet
    threading.Timer(300, executor.cancel).start()
    values = executor.results()          # runs it; blocks until done or cancelled
    result = executor.evaluation_result()  # the same run as an EvaluationResult

As in Ragas, `results()` is one value per job in submission order (row 0's metrics, then row 1's,
...), and nothing runs until it is called. Where Ragas puts NaN, a value here is None: a cell that
was skipped, failed, or was cancelled (`evaluation_result().outcome(row, metric)` says which and
why). `cancel()` may be called from any thread, before or during the run: no new cell starts, the
cells in flight are stopped, and each unfinished cell ends as an `error` outcome of type Cancelled
(never written to a run directory, so a resumed run computes it). The run happens once; later
calls return the same results.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Any

from assay._util.sync import run_sync
from assay.errors import RunFailed
from assay.schema.outcome import Ok


class ExceptionInRunner(RunFailed):
    """The run stopped at a failed cell (`raise_exceptions=True`, i.e. `strict=True`). Ragas' name;
    it is a `RunFailed`, naming the row, the metric and the error."""


class Executor:
    """A prepared evaluation: `results()` / `aresults()` run it, `cancel()` stops it."""

    def __init__(
        self, start: Callable[[threading.Event], Awaitable[Any]], *, desc: str = "Evaluating"
    ) -> None:
        self.desc = desc
        self._start = start
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._result: Any = None
        self._error: BaseException | None = None
        self._done = False

    def cancel(self) -> None:
        """Stop the run: no new cell starts and the cells in flight are cancelled."""
        self._cancel.set()

    def is_cancelled(self) -> bool:
        return self._cancel.is_set()

    async def aevaluation_result(self) -> Any:
        """Run the evaluation (once) and return its EvaluationResult."""
        if not self._done:
            try:
                self._result = await self._start(self._cancel)
            except BaseException as exc:
                self._error = exc
                raise
            finally:
                self._done = True
        if self._error is not None:
            raise self._error
        return self._result

    def evaluation_result(self) -> Any:
        with self._lock:  # two threads asking at once share one run
            return run_sync(self.aevaluation_result())

    async def aresults(self) -> list[Any]:
        """The value of every job in submission order (None where a cell has no value)."""
        return _flat(await self.aevaluation_result())

    def results(self) -> list[Any]:
        return _flat(self.evaluation_result())


def _flat(result: Any) -> list[Any]:
    return [
        cell.value if isinstance(cell, Ok) else None
        for row in result.outcomes
        for cell in (row[name] for name in result.metric_names)
    ]


__all__ = ["ExceptionInRunner", "Executor"]
