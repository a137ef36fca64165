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
   twice is read once (by row id). A row whose worker died under it `max_block_failures` times
   ends as a `WorkerLost` error outcome (not written: a resumed run tries again), and a worker
   that dies that many times in a row gets no more blocks.
5. The result is read back from the output directory, so what the files say is what is reported;
   `summary.json` there holds the aggregates with their coverage and the run's counts.
6. Before any row is scored: the cluster must have the CPUs the workers ask for, run a task
   that imports this assay version, and the workers' output directory must be the driver's.
"""

from __future__ import annotations

import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from assay.engine.checkpoint import fingerprint
from assay.engine.progress import CellProgress
from assay.engine.ray.cluster import check_capacity, check_workers_import, connect
from assay.engine.ray.driver import Driver, RunStats
from assay.engine.ray.output import OutputDirectory, row_ids
from assay.engine.ray.worker import RowJob
from assay.engine.repeats import repeat_settings
from assay.errors import UsageError
from assay.schema.outcome import Error, Outcome
from assay.schema.result import EvaluationResult
from assay.schema.usage import Usage


@dataclass
class RayExecutor:
    """Run `evaluate` on a Ray cluster (see the module for how).

    address: "local" (a private cluster for this process), "auto" (the cluster of `ray start`
        on this machine, or RAY_ADDRESS), "host:port" or "ray://host:port".
    num_workers: scoring actors. max_in_flight: cells each scores at once.
    output: the directory every worker writes its rows to (a shared file system on a
        multi-node cluster), or any fsspec URI ("s3://bucket/run", "file:///..."); also the
        checkpoint. None: a temporary directory. storage_options: passed to fsspec for a URI.
    output_format: "jsonl" or "parquet" (pyarrow, `assay[parquet]`) for the row files; None:
        the format of the run being resumed, else JSONL.
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
    output_format: str | None = None
    resume: bool = True
    storage_options: dict[str, Any] | None = None
    worker_cpus: float = 0.25
    block_rows: int = 16
    lease_size: int = 16
    start_timeout: float = 180.0  # a worker imports assay and its models: slow on a loaded node
    runtime_env: dict[str, Any] | None = None
    max_block_failures: int = 3
    last_run: RunStats | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.address, str) or not self.address.strip():
            raise UsageError("RayExecutor address must be 'local', 'auto' or a cluster address")
        for name in ("num_workers", "max_in_flight", "block_rows", "lease_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"RayExecutor {name} must be a whole number >= 1, got {value!r}")
        if self.output_format is not None:
            from assay.engine.ray.storage import ROW_FORMATS

            if self.output_format not in ROW_FORMATS:
                raise UsageError(
                    f"RayExecutor output_format must be one of {', '.join(ROW_FORMATS)} (or None), "
                    f"got {self.output_format!r}"
                )
            if self.output_format == "parquet":
                from assay.engine.ray.parquet import import_pyarrow

                import_pyarrow()  # before any work: the install hint, not a failed run
        for name in ("worker_cpus", "start_timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise UsageError(f"RayExecutor {name} must be a number > 0, got {value!r}")

    # -- called by aevaluate -------------------------------------------------------------
    async def aexecute(self, plan: Any, cancel: threading.Event | None) -> EvaluationResult:
        for given, what in (
            (plan.run_dir is not None, "run_dir (the output directory is the checkpoint)"),
            (plan.budget is not None and plan.batch is None, "budget (except in batch mode)"),
            (plan.strict, "strict / raise_exceptions"),
            (bool(plan.callbacks), "callbacks"),
        ):
            if given:
                raise UsageError(f"RayExecutor does not support {what} yet")
        stop = cancel or threading.Event()
        try:
            # Abandoned on cancel (Ctrl-C, a cancelled task): the event below stops the driver
            # loop, which cancels the blocks in flight and stops the actors.
            return await anyio.to_thread.run_sync(self._run, plan, stop, abandon_on_cancel=True)
        finally:
            stop.set()

    # -- the driver ------------------------------------------------------------------------
    def _run(self, plan: Any, cancel: threading.Event) -> EvaluationResult:
        started = time.perf_counter()
        data, names = plan.data, [metric.name for metric in plan.metrics]
        ids = row_ids(data)
        position = {row_id: index for index, row_id in enumerate(ids)}
        output = OutputDirectory(
            self.output if self.output is not None else tempfile.mkdtemp(prefix="assay-ray-"),
            self.storage_options,
        )
        if plan.batch is not None and output.storage.local is None:
            raise UsageError(
                f"batch mode on Ray needs a local output directory (or a mounted shared one), not "
                f"{output.shown}: the driver appends each batch it submits to batches.jsonl there"
            )
        output.open(
            run_fingerprint=fingerprint(
                data.to_list(), plan.specs, {"executor": "ray", **repeat_settings(plan.repeats)}
            ),
            description={"n_rows": len(data), "metrics": plan.specs},
            resume=self.resume,
            rows_format=self.output_format,
        )
        kept = output.collect(position, set(names))
        jobs: list[RowJob] = []
        for index, row_id in enumerate(ids):
            missing = tuple(name for name in names if not kept.finished(row_id, name))
            if missing:
                jobs.append((row_id, index, data[index], missing))
        stats = RunStats(rows=len(data), rows_kept=len(data) - len(jobs))
        lost: dict[int, Error] = {}
        reassigned: set[str] = set()
        if jobs:
            lost, reassigned = self._distribute(plan, jobs, output, position, names, cancel, stats)
        final = output.collect(position, set(names))
        for (row_id, _), cell in final.cells.items():
            if row_id in reassigned and cell.usage is not None:
                stats.reassigned_requests += cell.usage.requests
                stats.reassigned_cached_requests += cell.usage.cached_requests
        stats.duplicate_cells = final.duplicate_cells
        stats.repeated_requests = final.repeated_requests
        stats.unreadable_lines = final.unreadable_lines
        stats.seconds = time.perf_counter() - started
        self.last_run = stats
        result = self._result(plan, ids, final.cells, lost, cancel, stats, output)
        output.write_summary(
            {"metrics": [vars(item) for item in result.summaries()], "run": vars(stats)}
        )
        return result

    def _distribute(
        self,
        plan: Any,
        jobs: list[RowJob],
        output: OutputDirectory,
        position: dict[str, int],
        names: list[str],
        cancel: threading.Event,
        stats: RunStats,
    ) -> tuple[dict[int, Error], set[str]]:
        """Score `jobs` on the cluster; the rows given up on, as outcomes, and the ids of the rows
        handed out again after a loss."""
        from assay.engine.ray.shipping import ship

        payload, endpoints = ship(plan.metrics)  # before connecting: a metric that cannot travel
        ray, owned = connect(
            self.address,
            cpus_needed=self.num_workers * self.worker_cpus,
            runtime_env=self.runtime_env,
        )
        driver = Driver(self, ray, output, position, names, cancel, stats)
        try:
            check_capacity(ray, workers=self.num_workers, worker_cpus=self.worker_cpus)
            check_workers_import(ray, timeout=self.start_timeout)
            workers = driver.start(payload, endpoints, plan.timeout, plan.repeats)
            total = len(plan.data) * len(names)
            done = total - sum(len(job[3]) for job in jobs)
            with CellProgress(total, done=done, enabled=plan.show_progress, title="Ray") as bar:
                if plan.batch is None:
                    driver.run(workers, jobs, bar)
                else:  # the driver submits the batches, the workers score in passes
                    from assay.engine.ray.batch import DriverBatches, run_passes

                    assert output.storage.local is not None  # checked in `_run`
                    with DriverBatches(
                        plan.batch, plan.metrics, output.storage.local, plan.budget, bar.status
                    ) as batches:
                        run_passes(ray, driver, workers, jobs, bar, batches)
            driver.limiter_states()
        finally:
            driver.stop()
            if owned:
                ray.shutdown()
        return driver.lost, driver.reassigned

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
            run_dir=output.shown,
            experiment_name=plan.experiment_name,
        )


__all__ = ["RayExecutor", "RunStats"]
