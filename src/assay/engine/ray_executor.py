"""`RayExecutor`: the same evaluation, run by a pool of Ray actors.

    result = evaluate(dataset, metrics, llm=judge,
                      executor=RayExecutor(address="auto", num_workers=8, output="runs/r42"))

`evaluate` checks and plans the run as always (`engine/run.py`) and hands the plan to the executor
instead of its in-process pool. Here:

1. Each row gets a stable id (`ray_output.row_ids`); rows whose cells are all in the output
   directory already are left out (`resume=True`), the others are cut into blocks.
2. The metrics, with their models, are pickled once (`ray_shipping`); one limiter actor is
   started per endpoint they use (`ray_limits`), then `num_workers` scoring actors
   (`ray_worker`), each given the metrics and the limiters.
3. The driver keeps every worker fed with a few blocks. A worker scores all metrics of its rows
   with the local engine's `score_cell` and appends each finished row to its own file.
4. A worker that dies (killed, out of memory, its node lost) is restarted by Ray; the rows of its
   blocks that are not in the output yet go back to the queue, so no row is lost. A row written
   twice is read once (by row id). A block whose worker died `max_block_failures` times ends as
   `WorkerLost` error outcomes (not written: a resumed run tries again).
5. The result is read back from the output directory, so what the files say is what is reported;
   `summary.json` there holds the aggregates with their coverage and the run's counts.
"""

from __future__ import annotations

import collections
import contextlib
import json
import math
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from assay.engine.checkpoint import fingerprint
from assay.engine.progress import CellProgress
from assay.engine.ray_cluster import check_capacity, check_workers_import, connect
from assay.engine.ray_output import OutputDirectory, row_ids
from assay.engine.ray_worker import BlockReport, RowJob
from assay.errors import RunFailed, UsageError
from assay.schema.outcome import Error, Outcome
from assay.schema.result import EvaluationResult
from assay.schema.usage import Usage


@dataclass
class RunStats:
    """What happened in the last run of a `RayExecutor` (also in `summary.json`)."""

    rows: int = 0
    rows_kept: int = 0  # already in the output when the run began (resume)
    rows_scored: int = 0
    blocks: int = 0
    workers_lost: int = 0  # blocks whose worker died under them
    rows_reassigned: int = 0
    duplicate_cells: int = 0  # cells written twice (read once)
    repeated_requests: int = 0  # model requests spent on those repeats
    unreadable_lines: int = 0
    seconds: float = 0.0
    first_call: float | None = None  # seconds from the start to the first cell started
    nodes: list[str] = field(default_factory=list)
    limiters: dict[str, dict[str, Any]] = field(default_factory=dict)  # endpoint -> final state


@dataclass
class RayExecutor:
    """Run `evaluate` on a Ray cluster (see the module for how).

    address: "local" (a private cluster for this process), "auto" (the cluster of `ray start`
        on this machine, or RAY_ADDRESS), "host:port" or "ray://host:port".
    num_workers: scoring actors. max_in_flight: cells each scores at once.
    output: the directory every worker writes its rows to (a shared file system on a
        multi-node cluster); also the checkpoint. None: a temporary directory.
    resume: with an output holding rows of this run, score only what is missing or failed
        (False: refuse such a directory).
    worker_cpus: CPUs reserved per worker (judges over HTTP wait, they do not compute).
    block_rows: rows per block, the unit handed to a worker and re-run after a loss.
    lease_size: rate-limit permits a worker takes from an endpoint's limiter per request.
    start_timeout: seconds for the cluster to run a first task and start every worker.
    runtime_env: passed to Ray (e.g. {"pip": ["assay[ray]"]} on a cluster without assay).
    """

    address: str = "local"
    num_workers: int = 2
    max_in_flight: int = 16
    output: str | Path | None = None
    resume: bool = True
    worker_cpus: float = 0.25
    block_rows: int = 16
    lease_size: int = 16
    start_timeout: float = 60.0
    runtime_env: dict[str, Any] | None = None
    max_block_failures: int = 3
    last_run: RunStats | None = field(default=None, init=False, repr=False)
    _shipped: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.address, str) or not self.address.strip():
            raise UsageError("RayExecutor address must be 'local', 'auto' or a cluster address")
        for name in ("num_workers", "max_in_flight", "block_rows", "lease_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"RayExecutor {name} must be a whole number >= 1, got {value!r}")
        for name in ("worker_cpus", "start_timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise UsageError(f"RayExecutor {name} must be a number > 0, got {value!r}")

    # -- called by aevaluate -------------------------------------------------------------
    async def aexecute(self, plan: Any, cancel: threading.Event | None) -> EvaluationResult:
        for given, what in (
            (plan.run_dir is not None, "run_dir (the output directory is the checkpoint)"),
            (plan.budget is not None, "budget"),
            (plan.strict, "strict / raise_exceptions"),
            (bool(plan.callbacks), "callbacks"),
        ):
            if given:
                raise UsageError(f"RayExecutor does not support {what} yet")
        stop = cancel or threading.Event()
        try:
            return await anyio.to_thread.run_sync(self._run, plan, stop)
        finally:
            stop.set()  # the caller was cancelled: the driver loop stops too

    # -- the driver ------------------------------------------------------------------------
    def _run(self, plan: Any, cancel: threading.Event) -> EvaluationResult:
        started = time.perf_counter()
        data, names = plan.data, [metric.name for metric in plan.metrics]
        ids = row_ids(data)
        position = {row_id: index for index, row_id in enumerate(ids)}
        output = OutputDirectory(
            self.output if self.output is not None else tempfile.mkdtemp(prefix="assay-ray-")
        )
        output.open(
            run_fingerprint=fingerprint(data.to_list(), plan.specs, {"executor": "ray"}),
            description={"n_rows": len(data), "metrics": plan.specs},
            resume=self.resume,
        )
        kept = output.collect(position, set(names))
        jobs: list[RowJob] = []
        for index, row_id in enumerate(ids):
            missing = tuple(name for name in names if not kept.finished(row_id, name))
            if missing:
                jobs.append((row_id, index, data[index], missing))
        stats = RunStats(rows=len(data), rows_kept=len(data) - len(jobs))
        lost: dict[int, Error] = {}
        if jobs:
            pending_cells = sum(len(job[3]) for job in jobs)
            done = len(data) * len(names) - pending_cells
            with CellProgress(
                len(data) * len(names), done=done, enabled=plan.show_progress, title="Ray"
            ) as progress:
                self._distribute(plan, jobs, output, position, names, progress, cancel, stats, lost)
        final = output.collect(position, set(names))
        stats.duplicate_cells = final.duplicate_cells
        stats.repeated_requests = final.repeated_requests
        stats.unreadable_lines = final.unreadable_lines
        stats.seconds = time.perf_counter() - started
        self.last_run = stats
        result = self._result(plan, ids, final.cells, lost, cancel, stats, output)
        output.write_summary(
            {
                "metrics": [vars(item) for item in result.summaries()],
                "run": vars(stats),
            }
        )
        return result

    def _distribute(
        self,
        plan: Any,
        jobs: list[RowJob],
        output: OutputDirectory,
        position: dict[str, int],
        names: list[str],
        progress: CellProgress,
        cancel: threading.Event,
        stats: RunStats,
        lost: dict[int, Error],
    ) -> None:
        from assay.engine.ray_shipping import ship

        payload, endpoints = ship(plan.metrics)
        ray, owned = connect(
            self.address,
            cpus_needed=self.num_workers * self.worker_cpus,
            runtime_env=self.runtime_env,
        )
        actors: list[Any] = []
        try:
            check_capacity(ray, workers=self.num_workers, worker_cpus=self.worker_cpus)
            check_workers_import(ray, timeout=self.start_timeout)
            actors = self._start(ray, payload, endpoints, output, plan.timeout, stats)
            workers = actors[len(endpoints) :]
            blocks = collections.deque(
                jobs[start : start + self.block_rows]
                for start in range(0, len(jobs), self.block_rows)
            )
            stats.blocks = len(blocks)
            cells_per_block = self.block_rows * len(names)
            per_worker = max(2, math.ceil(2 * self.max_in_flight / cells_per_block))
            self._loop(
                ray,
                workers,
                blocks,
                per_worker,
                output,
                position,
                names,
                progress,
                cancel,
                stats,
                lost,
            )
            stats.limiters = self._limiter_states(ray, actors[: len(endpoints)], endpoints)
        finally:
            self._stop(ray, actors, len(endpoints))
            if owned:
                ray.shutdown()

    def _limiter_states(
        self, ray: Any, limiters: list[Any], endpoints: dict[str, Any]
    ) -> dict[str, dict[str, Any]]:
        """Each endpoint's limiter at the end of the run, by model and base URL."""
        states: dict[str, dict[str, Any]] = {}
        with contextlib.suppress(Exception):
            found = ray.get([limiter.state.remote() for limiter in limiters], timeout=5)
            for key, state in zip(endpoints, found, strict=True):
                address = json.loads(key).get("address", {})
                name = f"{address.get('provider', '?')}/{address.get('model', '?')}"
                if address.get("base_url"):
                    name += f"@{address['base_url']}"
                states[name] = state
        return states

    def _stop(self, ray: Any, actors: list[Any], n_limiters: int) -> None:
        closing = [actor.close.remote() for actor in actors[n_limiters:]]
        with contextlib.suppress(Exception):  # best effort: a dead worker has nothing to close
            ray.wait(closing, num_returns=len(closing), timeout=5)
        for actor in actors:
            ray.kill(actor, no_restart=True)
        self._shipped = None

    def _start(
        self,
        ray: Any,
        payload: bytes,
        endpoints: dict[str, Any],
        output: OutputDirectory,
        timeout: float | None,
        stats: RunStats,
    ) -> list[Any]:
        from assay.engine.ray_limits import EndpointLimiter
        from assay.engine.ray_worker import ScoringWorker

        limiter_class = ray.remote(EndpointLimiter).options(
            num_cpus=0, max_restarts=-1, max_task_retries=-1, max_concurrency=10_000
        )
        limiters = {key: limiter_class.remote(limits) for key, limits in endpoints.items()}
        worker_class = ray.remote(ScoringWorker).options(
            num_cpus=self.worker_cpus,
            max_restarts=-1,
            max_task_retries=0,  # a lost block is re-queued by the driver, minus the rows written
            max_concurrency=10_000,
        )
        shipped = ray.put(payload)
        self._shipped = shipped  # kept until the run ends, for workers that restart
        workers = [
            worker_class.remote(
                [shipped],
                limiters,
                str(output.path.resolve()),
                f"w{index}",
                max_in_flight=self.max_in_flight,
                timeout=timeout,
                lease_size=self.lease_size,
            )
            for index in range(self.num_workers)
        ]
        actors = [*limiters.values(), *workers]
        try:
            ready = ray.get(
                [worker.ready.remote() for worker in workers], timeout=self.start_timeout
            )
        except ray.exceptions.GetTimeoutError:
            for actor in actors:
                ray.kill(actor, no_restart=True)
            raise UsageError(
                f"the {self.num_workers} Ray workers did not all start within "
                f"{self.start_timeout:g} s; the cluster has "
                f"{ray.available_resources().get('CPU', 0):g} CPUs free"
            ) from None
        except (ray.exceptions.RayActorError, ray.exceptions.RayTaskError) as exc:
            for actor in actors:
                ray.kill(actor, no_restart=True)
            cause = getattr(exc, "cause", None) or exc
            raise UsageError(
                f"the Ray workers could not load the metrics: {type(cause).__name__}: "
                f"{str(cause).strip().splitlines()[-1] if str(cause).strip() else ''}"
            ) from None
        stats.nodes = sorted({item["node"] for item in ready})
        return actors

    def _loop(
        self,
        ray: Any,
        workers: list[Any],
        blocks: collections.deque[list[RowJob]],
        per_worker: int,
        output: OutputDirectory,
        position: dict[str, int],
        names: list[str],
        progress: CellProgress,
        cancel: threading.Event,
        stats: RunStats,
        lost: dict[int, Error],
    ) -> None:
        began = time.time()
        in_flight: dict[Any, tuple[int, list[RowJob]]] = {}
        load = [0] * len(workers)
        failures: collections.Counter[int] = collections.Counter()  # row -> losses
        strikes = [0] * len(workers)  # losses in a row, per worker
        alive = set(range(len(workers)))
        while blocks or in_flight:
            if cancel.is_set():
                for ref in in_flight:
                    ray.cancel(ref)
                return
            for index in sorted(alive, key=lambda i: load[i]):
                while blocks and load[index] < per_worker:
                    block = blocks.popleft()
                    in_flight[workers[index].score.remote(block)] = (index, block)
                    load[index] += 1
            if not in_flight:
                raise RunFailed("every Ray worker died; the rows left are saved for a resume")
            done, _ = ray.wait(list(in_flight), num_returns=1, timeout=0.2)
            for ref in done:
                index, block = in_flight.pop(ref)
                load[index] -= 1
                try:
                    report: BlockReport = ray.get(ref)
                except ray.exceptions.RayActorError as exc:
                    self._requeue(
                        block, exc, output, position, names, blocks, failures, lost, progress, stats
                    )
                    strikes[index] += 1
                    if strikes[index] >= self.max_block_failures:
                        alive.discard(index)  # it keeps dying: stop feeding it
                    continue
                except ray.exceptions.RayTaskError as exc:
                    raise RunFailed(f"a Ray worker failed outside any metric: {exc}") from None
                strikes[index] = 0
                stats.rows_scored += report.rows
                if report.first_call is not None:
                    first = report.first_call - began
                    stats.first_call = (
                        first if stats.first_call is None else min(stats.first_call, first)
                    )
                for k in range(report.cells):
                    progress.advance(failed=k < report.errors)

    def _requeue(
        self,
        block: list[RowJob],
        cause: Exception,
        output: OutputDirectory,
        position: dict[str, int],
        names: list[str],
        blocks: collections.deque[list[RowJob]],
        failures: collections.Counter[int],
        lost: dict[int, Error],
        progress: CellProgress,
        stats: RunStats,
    ) -> None:
        """A worker died with this block: what it wrote stays, the rest goes back to the queue."""
        stats.workers_lost += 1
        subset = {job[0]: position[job[0]] for job in block}
        written = output.collect(subset, set(names))
        remaining = [
            (row_id, index, sample, missing)
            for row_id, index, sample, wanted in block
            if (missing := tuple(n for n in wanted if (row_id, n) not in written.cells))
        ]
        for _ in range(sum(len(job[3]) for job in block) - sum(len(job[3]) for job in remaining)):
            progress.advance(failed=False)
        if not remaining:
            return
        again = []
        for job in remaining:
            failures[job[1]] += 1
            if failures[job[1]] >= self.max_block_failures:
                lost[job[1]] = Error(
                    error_type="WorkerLost",
                    attempts=failures[job[1]],
                    message=f"the Ray worker scoring this row died {failures[job[1]]} times "
                    f"(last: {type(cause).__name__}); resume to try again",
                )
            else:
                again.append(job)
        remaining = again
        if not remaining:
            return
        stats.rows_reassigned += len(remaining)
        blocks.appendleft(remaining)

    def _result(
        self,
        plan: Any,
        ids: list[str],
        cells: dict[tuple[str, str], Any],
        lost: dict[int, Error],
        cancel: threading.Event,
        stats: RunStats,
        output: OutputDirectory,
    ) -> EvaluationResult:
        outcomes: list[dict[str, Outcome]] = []
        usages: list[dict[str, Usage]] = []
        for index, row_id in enumerate(ids):
            row_outcomes: dict[str, Outcome] = {}
            row_usages: dict[str, Usage] = {}
            for metric in plan.metrics:
                cell = cells.get((row_id, metric.name))
                if cell is not None:
                    row_outcomes[metric.name] = cell.outcome
                    row_usages[metric.name] = cell.usage or Usage()
                else:
                    row_outcomes[metric.name] = lost.get(index) or (
                        Error(
                            error_type="Cancelled",
                            attempts=0,
                            message="the run was cancelled before this cell finished",
                        )
                        if cancel.is_set()
                        else Error(
                            error_type="NotWritten",
                            attempts=0,
                            message="no worker wrote this cell (a bug in assay: please report it)",
                        )
                    )
                    row_usages[metric.name] = Usage()
            outcomes.append(row_outcomes)
            usages.append(row_usages)
        return EvaluationResult(
            plan.data,
            plan.specs,
            outcomes,
            usages=usages,
            seconds=stats.seconds,
            run_dir=str(output.path),
            experiment_name=plan.experiment_name,
        )


__all__ = ["RayExecutor", "RunStats"]
