"""Batch mode on Ray: the driver submits the batches, the workers score the cells in passes.

`evaluate(..., batch=True, executor=RayExecutor(...))` / `assay evaluate --batch --ray ...`
(docs/ray.md, "Batch mode on Ray"). The workers never call the provider. Each pass hands the
cells still to score to the workers with the table of every answer the run's waves have brought
so far; a worker runs its cells until each one finishes or waits on a request the table lacks
(`engine/batch/replay.py`), writes the finished cells to the output directory as a live Ray run
does, and reports the waiting cells and their requests. The driver puts those requests into the
run's `Waves`, the same coordinator a local batch run uses: one wave per pass, identical requests
once, the journal `batches.jsonl` in the output directory (so a driver killed with batches in
flight resumes by polling them, and submits nothing twice), failed lines retried or asked live,
the budget held, the batch states on the progress line. The next pass runs the waiting cells
again with the bigger table.

Why the driver: a batch is paid for once per request, and only one place can know which requests
the whole run has already sent: the journal, appended to by one process. Per-worker batches
would split each wave into many small batches (a worker sees only its own blocks), and a worker
killed between submitting and recording would leave a batch nobody polls.

The Waves run on an event loop of their own, in a thread of the driver, for the whole run; the
driver's Ray loop hands them each pass's requests and waits for the answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

import anyio

from assay.engine.batch.llm import BatchLLM, batched_metrics
from assay.engine.batch.replay import Answer, Slot
from assay.engine.batch.waves import Cell, Waves
from assay.engine.progress import CellProgress
from assay.engine.ray.driver import Driver
from assay.engine.ray.worker import RowJob
from assay.errors import UsageError
from assay.metrics.base import Metric
from assay.models.types import ModelRequest
from assay.models.usage import Budget, budgeting
from assay.schema.outcome import Error

Asked = dict[Slot, tuple[ModelRequest, set[Cell]]]

# Passes in a row that brought no new request before the cells still waiting are given up on
# (a guard: a cell waits only on a request it asked, which the next wave answers).
_IDLE_PASSES = 2


class DriverBatches:
    """The run's `Waves` on a loop of their own (see the module). A context manager."""

    def __init__(
        self,
        waves: Waves,
        metrics: list[Metric],
        journal_dir: Path,
        budget: float | None,
        report: Callable[[str], None],
    ) -> None:
        self.waves = waves
        self.budget = Budget(budget) if budget is not None else None
        self._dir = journal_dir
        self._report = report
        # The driver's twins of the judges, by endpoint: their batch client, live path and prices.
        self.twins: dict[str, BatchLLM] = {}
        for metric in batched_metrics(metrics, waves):
            for value in vars(metric).values():
                if isinstance(value, BatchLLM):
                    self.twins.setdefault(value._endpoint_key, value)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="assay-ray-batches", daemon=True
        )
        self._running: asyncio.Task[None] | None = None

    def __enter__(self) -> DriverBatches:
        self._thread.start()
        self._running = self._on_loop(self._start())
        return self

    def __exit__(self, *exc: object) -> None:
        # Cancelled, as asked (the journal is closed on the way out); a failure of the waves'
        # loop has been said by `resolve` already.
        with contextlib.suppress(Exception):
            self._on_loop(self._stop(), timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._loop.close()

    def _on_loop(self, coroutine: Any, timeout: float | None = None) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    async def _start(self) -> asyncio.Task[None]:
        return asyncio.get_running_loop().create_task(self._run())

    async def _stop(self) -> None:
        if self._running is not None:
            self._running.cancel()
            await asyncio.gather(self._running, return_exceptions=True)

    async def _failure(self) -> None:
        if self._running is not None and not self._running.cancelled():
            self._running.result()

    async def _run(self) -> None:
        with budgeting(self.budget):
            await self.waves.run(self._dir, self._report)

    def resolve(self, asked: Asked, cancel: threading.Event) -> dict[Slot, Answer]:
        """The answers to `asked` (each an answer or the error that stands), once the waves have
        them; {} when `cancel` is set first."""
        future = asyncio.run_coroutine_threadsafe(self._resolve(asked), self._loop)
        while True:
            if cancel.is_set():
                future.cancel()
                return {}
            if self._running is not None and self._running.done():
                self._on_loop(self._failure())  # the waves' loop failed: say why
                raise RuntimeError("the batch coordinator stopped")
            try:
                return future.result(timeout=0.2)
            except FutureTimeout:
                continue

    async def _resolve(self, asked: Asked) -> dict[Slot, Answer]:
        by_cell: dict[Cell, list[Slot]] = {}
        for slot, (_, cells) in asked.items():
            for cell in sorted(cells) or [(-1, "")]:  # (a request always has a cell)
                by_cell.setdefault(cell, []).append(slot)
        answers: dict[Slot, Answer] = {}
        waves = self.waves

        async def ask(slot: Slot) -> None:
            twin = self.twins.get(slot[0])
            if twin is None:
                raise UsageError(f"batch mode on Ray: a worker asked an unknown judge {slot[0]}")
            request = asked[slot][0]
            try:
                response, live = await waves.ask(
                    twin._client, slot[0], slot[1], request, twin._ask_live, twin.batch_price
                )
            except Exception as exc:  # the error stands for the cells that asked
                answers[slot] = exc
                return
            price = twin._live_price if live else twin.batch_price
            if self.budget is not None and price is not None:
                self.budget.charge(
                    price.cost(response.usage.input_tokens, response.usage.output_tokens)
                )
            answers[slot] = (response, live)

        async def one_cell(cell: Cell, slots: list[Slot]) -> None:
            # As a cell of a local batch run: in flight, waiting, named in the journal.
            with waves.cell(*cell), waves.waiting():
                async with anyio.create_task_group() as group:
                    for slot in slots:
                        group.start_soon(ask, slot)

        with budgeting(self.budget):
            async with anyio.create_task_group() as group:
                for cell, slots in by_cell.items():
                    group.start_soon(one_cell, cell, slots)
        return answers


def run_passes(
    ray: Any,
    driver: Driver,
    workers: list[Any],
    jobs: list[RowJob],
    progress: CellProgress,
    batches: DriverBatches,
) -> None:
    """Score `jobs` pass after pass (see the module) until no cell waits for an answer."""
    answers: dict[Slot, Answer] = {}
    by_id = {job[0]: job for job in jobs}
    idle = 0
    while jobs and not driver.cancel.is_set():
        driver.pending, driver.asked = [], {}
        driver.run(workers, jobs, progress, answers=[ray.put(answers)])
        driver.stats.batch_passes += 1
        if driver.cancel.is_set() or not driver.pending:
            break
        jobs = [
            (row_id, by_id[row_id][1], by_id[row_id][2], names) for row_id, names in driver.pending
        ]
        fresh = {slot: item for slot, item in driver.asked.items() if slot not in answers}
        if fresh:
            idle = 0
            answers.update(batches.resolve(fresh, driver.cancel))
            continue
        idle += 1
        if idle >= _IDLE_PASSES:
            for _, index, _, names in jobs:
                driver.lost[index] = Error(
                    error_type="BatchStalled",
                    attempts=idle,
                    message=f"the cells {', '.join(names)} waited for an answer no wave brought "
                    f"in {idle} passes (a bug in assay: please report it)",
                )
            break
    driver.stats.batch_waves = batches.waves.waves


__all__ = ["DriverBatches", "run_passes"]
