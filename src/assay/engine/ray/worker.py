"""A Ray worker of a run: scores every metric of the rows it is given and writes them as it goes.

`ScoringWorker` is the body of an async actor. Its metrics arrive once, as the bytes of
`ray_shipping.ship`, and are loaded after the run's limiters are installed. Each call of `score`
takes a block of rows; its cells run with the local engine's own `score_cell` (so a Ray run and
a local run give the same outcomes), at most `max_in_flight` cells at once for the whole worker.
A row is written when all its cells are done: on a local directory, one JSON line appended and
flushed to this worker's own part file, `rows/part-<worker>-<pid>-<random>.jsonl`, so a restarted
worker never appends to the file of the process it replaces, and a kill loses only the rows in
flight; on any other file system, gathered and committed as whole part files
(`...-<n>.jsonl`) at the end of each block and every second or so (`ray/storage.py`), so a kill
loses at most those rows, which the driver hands out again. Parquet rows (`output_format=
"parquet"`, `ray/parquet.py`) are always committed as whole part files (`...-<n>.parquet`), on
a local directory too: a Parquet file cannot be appended to.

Cells start one at a time from one loop (blocks in the order they arrived), spaced by a fraction
of a cell's usual time: started in one loop turn against an endpoint of steady latency they would
end in one too, every call then waiting for the whole burst of answers to be handled before its
next start (measured: about 0.91 of the ideal rate at 16 in flight on one worker, 0.95 spaced).

Whatever a metric does ends as a typed outcome inside `score_cell`; `score` itself raises only if
the output cannot be written, which the driver reports and stops on.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import anyio

from assay.engine.ray.storage import COMMIT_ROWS, COMMIT_SECONDS, Storage
from assay.schema.dataset import json_line
from assay.schema.outcome import Cell

_MAX_SPACING = 0.002  # seconds between two cells started by a worker, at most
_PASS_TICK = 0.02  # batch mode: seconds between two looks at whether a pass has settled

# One row handed to a worker: its stable id, its position, the sample, the metrics still to score.
RowJob = tuple[str, int, Any, tuple[str, ...]]


@dataclass
class BlockReport:
    """What a worker tells the driver about one block (the rows themselves are in the files)."""

    rows: int = 0
    cells: int = 0
    errors: int = 0
    requests: int = 0
    seconds: float = 0.0
    first_call: float | None = None  # wall-clock time of the first cell started
    finished: list[str] = field(default_factory=list)  # row ids written
    # Batch mode: (row id, metrics) of the cells left waiting for an answer, and the requests
    # they asked ((endpoint, request key) -> (request, cells)); see `ray/batch.py`.
    pending: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    asked: dict[tuple[str, str], tuple[Any, list[Any]]] = field(default_factory=dict)


class PartWriter:
    """This worker process's finished rows (see `ray/storage.py` for the two ways of writing).

    JSONL on a local directory: one file, appended and flushed per row. Any other file system,
    and Parquet: rows are gathered and committed as whole part files, `<stem>-<n>.<format>`, by
    `take` and the storage's `write_whole`."""

    def __init__(self, storage: Storage, worker: str, rows_format: str = "jsonl") -> None:
        self.storage = storage
        self.rows_format = rows_format
        self.stem = f"part-{worker}-{os.getpid()}-{secrets.token_hex(4)}"
        self.appends = storage.local is not None and rows_format == "jsonl"
        if rows_format == "parquet":
            from assay.engine.ray.parquet import import_pyarrow

            import_pyarrow()  # missing on this node: the driver reports it as the workers start
        self._handle: IO[str] | None = None
        self._pending: list[tuple[str, list[Cell]]] = []
        self._since = 0.0  # when the oldest pending row was written
        self._commits = 0

    @property
    def path(self) -> Path:  # the local file (a local directory only)
        assert self.storage.local is not None
        return self.storage.local / "rows" / f"{self.stem}.jsonl"

    def write(self, row_id: str, cells: list[Cell]) -> None:
        if not self.appends:
            if not self._pending:
                self._since = time.monotonic()
            self._pending.append((row_id, cells))  # encoded when committed, in `take`
            return
        record = {"row_id": row_id, "cells": [cell.model_dump(mode="json") for cell in cells]}
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("a", encoding="utf-8", newline="")
        self._handle.write(json_line(record))
        # Flushed per row: the OS keeps the line even if this process is killed right after.
        self._handle.flush()

    def due(self) -> bool:
        """Whether the gathered rows should be committed now (not a local directory)."""
        return bool(self._pending) and (
            len(self._pending) >= COMMIT_ROWS or time.monotonic() - self._since >= COMMIT_SECONDS
        )

    def claim(self) -> tuple[str, list[tuple[str, list[Cell]]]] | None:
        """The gathered rows and the name of the part file they go to (None when there are
        none). Called on the actor's loop; `encode` them anywhere."""
        if not self._pending:
            return None
        pending, self._pending = self._pending, []
        self._commits += 1
        return f"rows/{self.stem}-{self._commits:06d}.{self.rows_format}", pending

    def encode(self, rows: list[tuple[str, list[Cell]]]) -> bytes:
        """Rows as the content of one part file of this writer's format."""
        if self.rows_format == "parquet":
            from assay.engine.ray.parquet import encode

            return encode(rows)
        return "".join(
            json_line({"row_id": row_id, "cells": [cell.model_dump(mode="json") for cell in cells]})
            for row_id, cells in rows
        ).encode("utf-8", "surrogatepass")

    def take(self) -> tuple[str, bytes] | None:
        """The gathered rows as the next part file's name and content (None when there are none)."""
        claimed = self.claim()
        return None if claimed is None else (claimed[0], self.encode(claimed[1]))

    def mark(self) -> str:
        """Leave an empty mark in rows/ for the driver to find; its relative path."""
        relative = f"rows/.ready-{self.stem}"
        self.storage.make_dirs("rows")
        self.storage.touch(relative)
        return relative

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


@dataclass
class _Row:
    """A row being scored: its cells fill in as they finish; written when none is left."""

    row_id: str
    index: int
    sample: Any
    cells: list[Cell | None]
    left: int


class ScoringWorker:
    """The actor body (made remote by the driver, `ray/executor.py`)."""

    def __init__(
        self,
        payload: list[Any],
        limiters: dict[str, Any],
        output: Storage,
        worker: str,
        *,
        max_in_flight: int,
        timeout: float | None,
        lease_size: int,
        repeats: int = 1,
        local_judges: dict[str, dict[str, Any]] | None = None,
        rows_format: str = "jsonl",
    ) -> None:
        # The metrics come as an object the driver keeps alive (`[ref]`, not the bytes), so that a
        # restarted worker can always fetch them again (Ray issue #53727); loaded on first use.
        self._payload = payload
        self._limiters = limiters
        self._lease_size = lease_size
        self._local_judges = local_judges or {}  # node id -> endpoint key -> judge actor
        self.metrics: dict[str, Any] = {}
        self.writer = PartWriter(output, worker, rows_format)
        self._committing: asyncio.Lock | None = None
        self.max_in_flight = max_in_flight
        self.timeout = timeout
        self.repeats = repeats
        self._slots: asyncio.Semaphore | None = None
        self._dispatching: asyncio.Lock | None = None
        self._last_start = 0.0  # loop time of the last cell started
        self._cell_seconds = 0.0  # moving average of how long a cell takes
        self._passing: asyncio.Lock | None = None  # batch mode: one block's pass at a time
        self._table: tuple[str, Any] = ("", {})  # batch mode: (object id, answers table)

    async def _load(self) -> None:
        if self.metrics:
            return
        from assay.engine.ray import shipping as ray_shipping

        payload = await self._payload[0]
        limiters = dict(self._limiters)
        if self._local_judges:  # local judges: this node's judge is their limiter
            import ray

            from assay.engine.ray import local as ray_local

            node = ray.get_runtime_context().get_node_id()
            mine = self._local_judges.get(node)
            if mine is None:
                raise RuntimeError(f"no local judge was started on Ray node {node[:12]}")
            ray_local.install_judges(mine)
            limiters.update(mine)
        ray_shipping.install_limiters(limiters, self._lease_size)
        self.metrics = {metric.name: metric for metric in ray_shipping.load(payload)}

    async def ready(self) -> dict[str, Any]:
        """Load the metrics (an error here is the driver's to report), leave a mark in the output
        directory (the driver checks it sees it: the directory must be shared), say where we run."""
        import ray

        await self._load()
        mark = await anyio.to_thread.run_sync(self.writer.mark)
        return {
            "pid": os.getpid(),
            "node": ray.get_runtime_context().get_node_id(),
            "mark": mark,
        }

    async def score(self, rows: list[RowJob], answers: list[Any] | None = None) -> BlockReport:
        """Score the block and write its rows; in batch mode (`answers`: `[ref]` of the answers
        table), one pass over it (`_score_pass`)."""
        from assay.engine.run import score_cell
        from assay.models.endpoint import sharing_answers

        await self._load()
        if answers is not None:
            return await self._score_pass(rows, answers[0])
        if self._slots is None:  # made on the actor's own loop
            self._slots = asyncio.Semaphore(self.max_in_flight)
            self._dispatching = asyncio.Lock()
        slots, dispatching = self._slots, self._dispatching
        assert dispatching is not None
        report = BlockReport()
        began = time.perf_counter()

        async def one_cell(row: _Row, position: int, name: str) -> None:
            try:
                if report.first_call is None:
                    report.first_call = time.time()
                started = time.perf_counter()
                outcome, usage = await score_cell(
                    self.metrics[name], row.sample, timeout=self.timeout, repeats=self.repeats
                )
            finally:
                slots.release()
            took = time.perf_counter() - started
            self._cell_seconds = (
                0.9 * self._cell_seconds + 0.1 * took if self._cell_seconds else took
            )
            row.cells[position] = Cell(
                row=row.index,
                metric=name,
                outcome=outcome,
                seconds=time.perf_counter() - started,
                usage=usage,
            )
            row.left -= 1
            if row.left:
                return
            done = [cell for cell in row.cells if cell is not None]
            self.writer.write(row.row_id, done)
            if self.writer.due():
                await self._commit()
            report.rows += 1
            report.cells += len(done)
            report.errors += sum(cell.outcome.status == "error" for cell in done)
            report.requests += sum(cell.usage.requests for cell in done if cell.usage)
            report.finished.append(row.row_id)

        with sharing_answers():
            # One place starts the cells, a slot at a time, spaced out (`_space_out`): each block
            # all its cells, in the order the blocks arrived (the lock is let go once they are
            # started), so a block ends before the next and the driver refills as they end.
            async with anyio.create_task_group() as group, dispatching:
                for row_id, index, sample, names in rows:
                    row = _Row(row_id, index, sample, [None] * len(names), len(names))
                    for position, name in enumerate(names):
                        await slots.acquire()
                        await self._space_out()
                        group.start_soon(one_cell, row, position, name)
        await self._commit()  # every row of the block is in the output before the report
        report.seconds = time.perf_counter() - began
        return report

    async def _score_pass(self, rows: list[RowJob], ref: Any) -> BlockReport:
        """Batch mode: run the block's cells with the answers the run has (`engine/batch/
        replay.py`) until each finishes or waits on a request without one; write the finished
        cells, report the waiting ones and what they asked."""
        from assay.engine.batch.llm import batched_metrics
        from assay.engine.batch.replay import Replay
        from assay.engine.run import score_cell
        from assay.models.endpoint import sharing_answers

        if self._table[0] != ref.hex():  # one table per pass, fetched once per worker
            self._table = (ref.hex(), await ref)
        if self._passing is None:
            self._passing = asyncio.Lock()
        report = BlockReport()
        # One block at a time: a call shared with a cell of another block would be cancelled
        # with that block's pass.
        async with self._passing:
            began = time.perf_counter()
            replay = Replay(self._table[1])
            metrics = {m.name: m for m in batched_metrics(list(self.metrics.values()), replay)}
            done: dict[tuple[int, str], Cell] = {}
            stopped = False

            async def one_cell(index: int, sample: Any, name: str) -> None:
                started = time.perf_counter()
                with replay.cell(index, name):
                    outcome, usage = await score_cell(
                        metrics[name], sample, timeout=self.timeout, repeats=self.repeats
                    )
                if not stopped:
                    done[(index, name)] = Cell(
                        row=index,
                        metric=name,
                        outcome=outcome,
                        seconds=time.perf_counter() - started,
                        usage=usage,
                    )
                replay.ended()

            wanted = [(index, sample, name) for _, index, sample, names in rows for name in names]
            report.first_call = time.time()
            with sharing_answers():
                async with anyio.create_task_group() as group:
                    for index, sample, name in wanted:
                        group.start_soon(one_cell, index, sample, name)
                    while len(done) < len(wanted):
                        await anyio.sleep(_PASS_TICK)
                        if replay.settled():
                            stopped = True
                            group.cancel_scope.cancel()
                            break
            for row_id, index, _, names in rows:
                finished = [done[(index, name)] for name in names if (index, name) in done]
                waiting = tuple(name for name in names if (index, name) not in done)
                if finished:
                    self.writer.write(row_id, finished)
                    report.cells += len(finished)
                    report.errors += sum(cell.outcome.status == "error" for cell in finished)
                    report.requests += sum(cell.usage.requests for cell in finished if cell.usage)
                if waiting:
                    report.pending.append((row_id, waiting))
                else:
                    report.rows += 1
                    report.finished.append(row_id)
            report.asked = replay.asked()
            await self._commit()
            report.seconds = time.perf_counter() - began
        return report

    async def _space_out(self) -> None:
        """Start cells a little apart rather than all in one loop turn. Cells that start together
        end together against an endpoint of steady latency, and a burst of answers is handled one
        after the other, each call's next start waiting for the whole burst: spaced starts keep
        the calls apart (a fraction of the gap the in-flight cells leave, never above 2 ms)."""
        if not self._cell_seconds:
            return
        spacing = min(_MAX_SPACING, self._cell_seconds / self.max_in_flight / 2)
        loop = asyncio.get_running_loop()
        wait = self._last_start + spacing - loop.time()
        if wait > 0:
            await asyncio.sleep(wait)
        self._last_start = loop.time()

    async def _commit(self) -> None:
        """Commit the gathered rows as one part file (a no-op on a local directory)."""
        if self._committing is None:
            self._committing = asyncio.Lock()
        async with self._committing:
            claimed = self.writer.claim()
            if claimed is not None:
                name, rows = claimed
                writer = self.writer
                await anyio.to_thread.run_sync(
                    lambda: writer.storage.write_whole(name, writer.encode(rows), durable=False)
                )

    async def close(self) -> None:
        """End of the run: commit what is gathered, close the part file and this loop's clients."""
        from assay._util.loop_local import close_loop_locals

        await self._commit()
        self.writer.close()
        await close_loop_locals()


__all__ = ["BlockReport", "PartWriter", "RowJob", "ScoringWorker"]
