"""A Ray worker of a run: scores every metric of the rows it is given and writes them as it goes.

`ScoringWorker` is the body of an async actor. Its metrics arrive once, as the bytes of
`ray_shipping.ship`, and are loaded after the run's limiters are installed. Each call of `score`
takes a block of rows; its cells run with the local engine's own `score_cell` (so a Ray run and
a local run give the same outcomes), at most `max_in_flight` cells at once for the whole worker.
A row is written when all its cells are done: one JSON line appended and flushed to this worker's
own part file, `rows/part-<worker>-<pid>-<random>.jsonl`, so a restarted worker never appends to
the file of the process it replaces, and a kill loses only the rows in flight.

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

from assay.schema.dataset import json_line
from assay.schema.outcome import Cell

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


class PartWriter:
    """This worker process's own JSONL file of finished rows."""

    def __init__(self, rows_dir: Path, worker: str) -> None:
        self.path = rows_dir / f"part-{worker}-{os.getpid()}-{secrets.token_hex(4)}.jsonl"
        self._handle: IO[str] | None = None

    def write(self, row_id: str, cells: list[Cell]) -> None:
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("a", encoding="utf-8", newline="")
        record = {"row_id": row_id, "cells": [cell.model_dump(mode="json") for cell in cells]}
        self._handle.write(json_line(record))
        # Flushed per row: the OS keeps the line even if this process is killed right after.
        self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


class ScoringWorker:
    """The actor body (made remote by the driver, `ray_executor.py`)."""

    def __init__(
        self,
        payload: list[Any],
        limiters: dict[str, Any],
        output: str,
        worker: str,
        *,
        max_in_flight: int,
        timeout: float | None,
        lease_size: int,
    ) -> None:
        # The metrics come as an object the driver keeps alive (`[ref]`, not the bytes), so that a
        # restarted worker can always fetch them again (Ray issue #53727); loaded on first use.
        self._payload = payload
        self._limiters = limiters
        self._lease_size = lease_size
        self.metrics: dict[str, Any] = {}
        self.writer = PartWriter(Path(output) / "rows", worker)
        self.max_in_flight = max_in_flight
        self.timeout = timeout
        self._slots: asyncio.Semaphore | None = None

    async def _load(self) -> None:
        if self.metrics:
            return
        from assay.engine import ray_shipping

        payload = await self._payload[0]
        ray_shipping.install_limiters(self._limiters, self._lease_size)
        self.metrics = {metric.name: metric for metric in ray_shipping.load(payload)}

    async def ready(self) -> dict[str, Any]:
        """Load the metrics (an error here is the driver's to report), leave a mark in the output
        directory (the driver checks it sees it: the directory must be shared), say where we run."""
        import ray

        await self._load()
        mark = self.writer.path.parent / f".ready-{self.writer.path.stem}"
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.touch()
        return {
            "pid": os.getpid(),
            "node": ray.get_runtime_context().get_node_id(),
            "mark": str(mark),
        }

    async def score(self, rows: list[RowJob]) -> BlockReport:
        from assay.engine.run import score_cell
        from assay.models.endpoint import sharing_answers

        await self._load()
        if self._slots is None:  # made on the actor's own loop
            self._slots = asyncio.Semaphore(self.max_in_flight)
        slots = self._slots
        report = BlockReport()
        began = time.perf_counter()

        async def one_row(row_id: str, index: int, sample: Any, names: tuple[str, ...]) -> None:
            cells: list[Cell | None] = [None] * len(names)

            async def one_cell(position: int, name: str) -> None:
                async with slots:
                    if report.first_call is None:
                        report.first_call = time.time()
                    started = time.perf_counter()
                    outcome, usage = await score_cell(
                        self.metrics[name], sample, timeout=self.timeout
                    )
                cells[position] = Cell(
                    row=index,
                    metric=name,
                    outcome=outcome,
                    seconds=time.perf_counter() - started,
                    usage=usage,
                )

            async with anyio.create_task_group() as group:
                for position, name in enumerate(names):
                    group.start_soon(one_cell, position, name)
            done = [cell for cell in cells if cell is not None]
            self.writer.write(row_id, done)
            report.rows += 1
            report.cells += len(done)
            report.errors += sum(cell.outcome.status == "error" for cell in done)
            report.requests += sum(cell.usage.requests for cell in done if cell.usage)
            report.finished.append(row_id)

        with sharing_answers():
            async with anyio.create_task_group() as group:
                for row_id, index, sample, names in rows:
                    group.start_soon(one_row, row_id, index, sample, names)
        report.seconds = time.perf_counter() - began
        return report

    async def close(self) -> None:
        """End of the run: close the part file and this loop's HTTP clients."""
        from assay._util.loop_local import close_loop_locals

        self.writer.close()
        await close_loop_locals()


__all__ = ["BlockReport", "PartWriter", "RowJob", "ScoringWorker"]
