"""The driver side of a Ray run: start the actors, keep the workers fed, re-queue what a dead
worker did not write, stop everything at the end (see `ray/executor.py` for the whole picture)."""

from __future__ import annotations

import collections
import contextlib
import json
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from assay.engine.progress import CellProgress
from assay.engine.ray.cluster import wait_for_start
from assay.engine.ray.output import OutputDirectory
from assay.engine.ray.worker import BlockReport, RowJob
from assay.errors import AssayError, UsageError
from assay.schema.outcome import Error


@dataclass
class RunStats:
    """What happened in the last run of a `RayExecutor` (also in `summary.json`)."""

    rows: int = 0
    rows_kept: int = 0  # already in the output when the run began (resume)
    rows_scored: int = 0
    blocks: int = 0
    workers_lost: int = 0  # blocks whose worker died under them
    rows_reassigned: int = 0
    # The cells of re-assigned rows, once written: the model requests they made, and the answers
    # the response cache gave them (with a shared cache, the calls the lost worker had finished).
    reassigned_requests: int = 0
    reassigned_cached_requests: int = 0
    duplicate_cells: int = 0  # cells written twice (read once)
    repeated_requests: int = 0  # model requests spent on those repeats
    unreadable_lines: int = 0
    seconds: float = 0.0
    first_call: float | None = None  # seconds from the start to the first cell started
    nodes: list[str] = field(default_factory=list)
    limiters: dict[str, dict[str, Any]] = field(default_factory=dict)  # endpoint -> final state
    batch_passes: int = 0  # batch mode: passes of the workers over the cells still waiting
    batch_waves: int = 0  # batch mode: waves of batches the driver sent


@dataclass
class Driver:
    """One run's driver state. `settings` is the `RayExecutor`."""

    settings: Any
    ray: Any
    output: OutputDirectory
    position: dict[str, int]  # row id -> row
    names: list[str]
    cancel: threading.Event
    stats: RunStats
    lost: dict[int, Error] = field(default_factory=dict)  # rows given up on, as outcomes
    failures: collections.Counter[int] = field(default_factory=collections.Counter)
    reassigned: set[str] = field(default_factory=set)  # ids of rows handed out again
    actors: list[Any] = field(default_factory=list)
    n_limiters: int = 0
    endpoints: list[str] = field(default_factory=list)  # their keys, in limiter order
    shipped: Any = None  # the metrics in the object store, kept alive for restarting workers
    judges: dict[str, dict[str, Any]] = field(default_factory=dict)  # node -> key -> judge actor
    # Batch mode (`ray/batch.py`): what the workers' last pass left waiting, and the requests
    # those cells asked, with the cells that asked each.
    pending: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    asked: dict[tuple[str, str], tuple[Any, set[Any]]] = field(default_factory=dict)

    # -- start and stop ------------------------------------------------------------------
    def start(
        self, payload: bytes, endpoints: dict[str, Any], timeout: float | None, repeats: int = 1
    ) -> list[Any]:
        """One limiter per endpoint, then the workers; returns the workers once all are ready."""
        from assay.engine.ray.limits import EndpointLimiter
        from assay.engine.ray.local import local_settings, start_judges
        from assay.engine.ray.worker import ScoringWorker

        ray, settings = self.ray, self.settings
        limiter_class = ray.remote(EndpointLimiter).options(
            num_cpus=0, max_restarts=-1, max_task_retries=-1, max_concurrency=10_000
        )
        # A remote endpoint gets one limiter for the cluster; a local judge one per node (its
        # judge actor, whose slots are that node's capacity).
        remote = {key: limits for key, limits in endpoints.items() if local_settings(key) is None}
        limiters = {key: limiter_class.remote(limits) for key, limits in remote.items()}
        self.actors, self.n_limiters = list(limiters.values()), len(limiters)
        self.endpoints = list(remote)
        self.judges = start_judges(ray, endpoints, settings.start_timeout)
        worker_class = ray.remote(ScoringWorker).options(
            num_cpus=settings.worker_cpus,
            max_restarts=-1,
            max_task_retries=0,  # a lost block is re-queued by the driver, minus the rows written
            max_concurrency=10_000,
        )
        self.shipped = ray.put(payload)
        workers = [
            worker_class.remote(
                [self.shipped],
                limiters,
                self.output.storage.for_worker(),
                f"w{index}",
                max_in_flight=settings.max_in_flight,
                timeout=timeout,
                repeats=repeats,
                lease_size=settings.lease_size,
                local_judges=self.judges,
                rows_format=self.output.rows_format,
            )
            for index in range(settings.num_workers)
        ]
        self.actors += workers
        ready = wait_for_start(
            ray,
            [worker.ready.remote() for worker in workers],
            settings.start_timeout,
            timed_out=lambda: (
                f"the {settings.num_workers} Ray workers did not all start within "
                f"{settings.start_timeout:g} s; the cluster has "
                f"{ray.available_resources().get('CPU', 0):g} CPUs free"
            ),
            failed="the Ray workers could not start",
        )
        self.stats.nodes = sorted({item["node"] for item in ready})
        storage = self.output.storage
        for item in ready:
            if not storage.exists(item["mark"]):
                raise UsageError(
                    f"the Ray worker on node {item['node'][:12]} writes to {self.output.shown}, but "
                    "this driver does not see what it writes there: give an output directory on a "
                    "file system every node shares (memory:// lives in one process only)"
                )
            storage.remove(item["mark"])
        return workers

    def limiter_states(self) -> None:
        """Each endpoint's limiter at the end of the run, by model and base URL."""
        with contextlib.suppress(Exception):
            limiters = self.actors[: self.n_limiters]
            found = self.ray.get([limiter.state.remote() for limiter in limiters], timeout=5)
            for key, state in zip(self.endpoints, found, strict=True):
                address = json.loads(key).get("address", {})
                name = f"{address.get('provider', '?')}/{address.get('model', '?')}"
                if address.get("base_url"):
                    name += f"@{address['base_url']}"
                self.stats.limiters[name] = state
            for node, by_key in self.judges.items():
                found = self.ray.get([judge.state.remote() for judge in by_key.values()], timeout=5)
                for key, state in zip(by_key, found, strict=True):
                    address = json.loads(key).get("address", {})
                    self.stats.limiters[f"local/{address.get('model')}@node:{node[:12]}"] = state

    def stop(self) -> None:
        ray = self.ray
        closing = [actor.close.remote() for actor in self.actors[self.n_limiters :]]
        with contextlib.suppress(Exception):  # best effort: a dead worker has nothing to close
            ray.wait(closing, num_returns=len(closing), timeout=5)
        judges = [judge for by_key in self.judges.values() for judge in by_key.values()]
        for actor in self.actors + judges:
            with contextlib.suppress(Exception):
                ray.kill(actor, no_restart=True)
        self.actors, self.shipped, self.judges = [], None, {}

    # -- the loop ------------------------------------------------------------------------
    def run(
        self,
        workers: list[Any],
        jobs: list[RowJob],
        progress: CellProgress,
        answers: list[Any] | None = None,
    ) -> None:
        """Score `jobs`; in batch mode, one pass with `answers` (`[ref]` of the answers table)."""
        ray, settings, stats = self.ray, self.settings, self.stats
        extra = () if answers is None else (answers,)
        size = settings.block_rows
        blocks = collections.deque(
            jobs[start : start + size] for start in range(0, len(jobs), size)
        )
        stats.blocks += len(blocks)
        # Enough blocks per worker to keep max_in_flight cells busy while the next one arrives.
        per_worker = max(2, math.ceil(2 * settings.max_in_flight / (size * len(self.names))))
        began = time.time()
        in_flight: dict[Any, tuple[int, list[RowJob]]] = {}
        load = [0] * len(workers)
        strikes = [0] * len(workers)  # losses in a row, per worker
        alive = set(range(len(workers)))
        while blocks or in_flight:
            if self.cancel.is_set():
                for ref in in_flight:
                    ray.cancel(ref)
                return
            for index in sorted(alive, key=lambda i: load[i]):
                while blocks and load[index] < per_worker:
                    block = blocks.popleft()
                    in_flight[workers[index].score.remote(block, *extra)] = (index, block)
                    load[index] += 1
            if not in_flight:
                raise AssayError("every Ray worker died; the rows written are kept for a resume")
            done, _ = ray.wait(list(in_flight), num_returns=1, timeout=0.2)
            for ref in done:
                index, block = in_flight.pop(ref)
                load[index] -= 1
                try:
                    report: BlockReport = ray.get(ref)
                except ray.exceptions.RayActorError as exc:
                    self.requeue(block, exc, blocks, progress)
                    strikes[index] += 1
                    if strikes[index] >= settings.max_block_failures:
                        alive.discard(index)  # it keeps dying: stop feeding it
                    continue
                except ray.exceptions.RayTaskError as exc:
                    raise AssayError(f"a Ray worker failed outside any metric: {exc}") from None
                strikes[index] = 0
                stats.rows_scored += report.rows
                if report.first_call is not None:
                    first = report.first_call - began
                    stats.first_call = min(first, stats.first_call or first)
                for k in range(report.cells):
                    progress.advance(failed=k < report.errors)
                self.pending += report.pending
                for slot, (request, cells) in report.asked.items():
                    self.asked.setdefault(slot, (request, set()))[1].update(cells)

    def requeue(
        self,
        block: list[RowJob],
        cause: Exception,
        blocks: collections.deque[list[RowJob]],
        progress: CellProgress,
    ) -> None:
        """A worker died with this block: what it wrote stays, the rest goes back to the queue."""
        self.stats.workers_lost += 1
        written = self.output.collect(
            {job[0]: self.position[job[0]] for job in block}, set(self.names)
        )
        remaining = [
            (row_id, index, sample, missing)
            for row_id, index, sample, wanted in block
            if (missing := tuple(n for n in wanted if (row_id, n) not in written.cells))
        ]
        for _ in range(sum(len(job[3]) for job in block) - sum(len(job[3]) for job in remaining)):
            progress.advance(failed=False)
        again = []
        for job in remaining:
            self.failures[job[1]] += 1
            losses = self.failures[job[1]]
            if losses < self.settings.max_block_failures:
                again.append(job)
                continue
            self.lost[job[1]] = Error(
                error_type="WorkerLost",
                attempts=losses,
                message=f"the Ray worker scoring this row died {losses} times "
                f"(last: {type(cause).__name__}); resume to try again",
            )
        if again:
            self.stats.rows_reassigned += len(again)
            self.reassigned.update(job[0] for job in again)
            blocks.appendleft(again)


__all__ = ["Driver", "RunStats"]
