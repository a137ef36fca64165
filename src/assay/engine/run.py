"""`evaluate` / `aevaluate`: one job per (row, metric), every cell ending in a typed outcome.

The run is planned up front (which cells apply, which are already in the checkpoint), then
the remaining cells run concurrently under a limit. Each finished cell is appended to the run
directory (when one is given) before the progress bar moves, so a crash or kill -9 loses at
most the cells in flight.

The parameters are Ragas' (in Ragas' order) followed by assay's own, keyword-only ones. Ragas'
`run_config`, `batch_size`, `raise_exceptions`, `callbacks`, `experiment_name` and
`return_executor` are honoured as their docstrings below say; `token_usage_parser` and
`allow_nest_asyncio` are accepted and change nothing, because assay always meters usage and never
patches the event loop.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from assay._util.sync import run_sync
from assay.engine.batch.llm import batched_metrics
from assay.engine.batch.options import BatchOptions
from assay.engine.batch.waves import Waves, waves_for
from assay.engine.cell import NO_USAGE, score_cell
from assay.engine.checkpoint import RunDirectory, fingerprint
from assay.engine.executor import ExceptionInRunner, Executor
from assay.engine.interrupt import Interrupted, current_interruption, drain, run_budget
from assay.engine.models import coerce_embeddings, coerce_llm, own_models_coerced
from assay.engine.plan import (
    check_flags,
    check_metric_fits,
    check_settings,
    coerce_dataset,
    coerce_metrics,
)
from assay.engine.progress import CellProgress
from assay.engine.repeats import check_repeats, repeat_settings
from assay.engine.run_config import run_settings
from assay.errors import UsageError, first_leaf
from assay.metrics.base import Metric
from assay.metrics.callbacks import RAGAS_EVALUATION_CHAIN_NAME, Callbacks
from assay.models.defaults import default_embeddings, default_llm
from assay.models.endpoint import sharing_answers
from assay.models.retry import RetryPolicy
from assay.models.usage import Budget, budgeting
from assay.schema.dataset import EvaluationDataset
from assay.schema.outcome import Cell, Error, Ok, Outcome, Skipped
from assay.schema.result import EvaluationResult
from assay.schema.usage import Usage


def _prepare_metrics(
    metrics: list[Metric], llm: Any, embeddings: Any, retry: RetryPolicy | None = None
) -> list[Metric]:
    """Give metrics lacking a model the run's one; with none given, the configured default
    (ASSAY_LLM / ASSAY_EMBEDDINGS, else the embedded offline models). Built only if needed.
    The metrics given are never changed: each one that gets a model is a copy."""
    llm = coerce_llm(llm, retry=retry)
    embeddings = coerce_embeddings(embeddings, retry=retry)
    metrics = [own_models_coerced(metric, retry) for metric in metrics]
    options: dict[str, Any] = {"retry": retry} if retry is not None else {}
    if llm is None and any(m.needs_llm and getattr(m, "llm", None) is None for m in metrics):
        llm = default_llm(**options)
    if embeddings is None and any(
        m.needs_embeddings and getattr(m, "embeddings", None) is None for m in metrics
    ):
        embeddings = default_embeddings(**options)
    return [metric.with_models(llm=llm, embeddings=embeddings) for metric in metrics]


def _concurrency(requested: int | None, metrics: list[Metric]) -> int:
    """Cells in flight. By default twice each judge's concurrency ceiling (a cell alternates
    between model calls and its own work), at most 256: the judge's adaptive limiter, not this
    pool, decides how many calls run at once. With an RPM limit, at most rpm / 4 cells, so that a
    cell does not spend its timeout queued for a request slot."""
    if requested is not None:
        if requested < 1:
            raise UsageError(f"max_concurrency must be at least 1, got {requested}")
        return requested
    bounds = [256]
    for metric in metrics:
        for model in (getattr(metric, "llm", None), getattr(metric, "embeddings", None)):
            limiter = getattr(model, "limiter", None)
            if limiter is None:
                continue
            bounds.append(2 * limiter.concurrency.ceiling)
            if limiter.limits.rpm:
                bounds.append(max(4, int(limiter.limits.rpm // 4)))
    return min(bounds)


@dataclass
class _Plan:
    """A checked run, ready to execute."""

    data: EvaluationDataset
    metrics: list[Metric]
    run_dir: str | Path | None
    max_concurrency: int
    timeout: float | None
    strict: bool
    show_progress: bool
    budget: float | None
    callbacks: Callbacks
    name: str
    experiment_name: str | None
    specs: list[dict[str, Any]] = field(default_factory=list)
    batch: Waves | None = None  # batch mode: the run's model calls go in provider batches
    repeats: int = 1  # askings of each judged cell (engine/repeats.py)


async def aevaluate(
    dataset: Any,
    metrics: Sequence[Metric | str] | None = None,
    llm: Any = None,
    embeddings: Any = None,
    experiment_name: str | None = None,
    callbacks: Any = None,
    run_config: Any = None,
    token_usage_parser: Any = None,
    raise_exceptions: bool = False,
    column_map: Mapping[str, str] | None = None,
    show_progress: bool = True,
    batch_size: int | None = None,
    return_executor: bool = False,
    *,
    run_dir: str | Path | None = None,
    max_concurrency: int | None = None,
    timeout: float | None = 600.0,
    strict: bool = False,
    budget: float | None = None,
    in_ci: bool = False,
    executor: Any = None,
    batch: bool | BatchOptions = False,
    repeats: int = 1,
) -> EvaluationResult | Executor:
    """Score every row of `dataset` with every metric.

    dataset: an EvaluationDataset, a list of dicts or samples, a pandas DataFrame, a Hugging
        Face dataset, or a path to .jsonl/.json/.csv. Legacy column names are mapped.
    metrics: metric objects (`BleuScore()`) or ids (`"bleu_score"`). None: Ragas' default list,
        answer_relevancy, context_precision, faithfulness and context_recall.
    llm / embeddings: given to metrics that need them and have none of their own (in copies: the
        metric objects given are not changed). When not given: ASSAY_LLM / ASSAY_EMBEDDINGS, else
        the embedded offline judge and embeddings. A model string ("openai/gpt-4o-mini") is built
        with llm_factory / embedding_factory; a LangChain or LlamaIndex model is wrapped; a raw SDK
        client or anything else is a UsageError.
    experiment_name: the run's name, kept on the result and shown to callbacks (the root chain;
        without it, "ragas evaluation", the name Ragas gives it).
    callbacks: objects with some of the hooks of `assay.EvaluationCallback` (run, row and metric
        start/end, with each cell's typed outcome and usage), or LangChain callback handlers.
    run_config: a `RunConfig`; the fields set in it become the cell timeout, max_concurrency and
        the retry policy of the run's models (see `assay.engine.run_config`).
    token_usage_parser: accepted and not needed: every model call's tokens and cost are metered
        (`result.total_tokens()`, `result.total_cost()`).
    raise_exceptions: True is `strict=True`: stop at the first failed cell, raising
        `ExceptionInRunner` (a `RunFailed`) naming the row, the metric and the error.
    column_map: Ragas' direction, {name Ragas expects: your column}, e.g. {"user_input": "query"}.
    show_progress: the progress bar and, at the end, nothing else.
    batch_size: at most this many cells in flight (Ragas runs jobs in batches of this size).
    return_executor: return an `Executor` instead of running: its `results()` runs the evaluation,
        `cancel()` stops it from any thread.
    run_dir: a directory where finished cells are saved as they complete; running again
        with the same directory resumes, recomputing only what is missing or failed.
    max_concurrency: cells scored at once (default: twice the judge's concurrency ceiling, at most 256;
        the judge's adaptive limiter decides how many model calls run at once).
    timeout: seconds allowed per cell before it becomes an `error` outcome (more than 0; None: no limit).
    strict: raise `RunFailed` at the first error outcome instead of recording it.
    budget: a spending cap in USD; once reached no new model call is made and the cells
        left are `error` outcomes of type BudgetExhausted (a resumed run picks them up).
    in_ci: accepted (old Ragas' repeat-for-reproducibility switch); no effect, since judged calls
        are deterministic (temperature 0) and cached.
    executor: None runs the cells in this process; `RayExecutor(...)` (`assay.engine.ray.executor`)
        runs the same per-cell code on a Ray cluster, writing rows to its output directory.
    batch: True (or `BatchOptions(...)`) sends the judges' calls through the provider's batch API
        at half the price, in waves, within 24 hours (docs/batch.md); a judge without one is
        refused before any work. Cells have no timeout then; with `run_dir`, a run killed while
        its batches are in flight resumes by polling them.
    repeats: ask each judged cell this many times (1 to 20), each asking a request of its own
        (its own seed; sampled at temperature 0.7 when the judge is set to 0): the cell's value is
        the askings' mean (the majority for booleans and labels), and `Ok.repeats` holds each
        value, the spread and whether the decision was unanimous (`result.stability()`).
        Metrics without a judge are asked once. Cost and `estimate` count every asking.
    """
    del token_usage_parser, in_ci  # usage is always metered; calls are deterministic
    if experiment_name is not None and not isinstance(experiment_name, str):
        raise UsageError(
            f"experiment_name must be a string or None, got {type(experiment_name).__name__}"
        )
    timeout, max_concurrency, retry = run_settings(run_config, timeout, max_concurrency, batch_size)
    check_settings(timeout, budget)
    check_flags(raise_exceptions=raise_exceptions, strict=strict)
    repeats = check_repeats(repeats)
    data = coerce_dataset(dataset, column_map)
    if not len(data):
        raise UsageError("the dataset has no rows")
    name = experiment_name or RAGAS_EVALUATION_CHAIN_NAME
    hooks = Callbacks(callbacks, name=name)
    chosen = _prepare_metrics(coerce_metrics(metrics), llm, embeddings, retry)
    for metric in chosen:
        check_metric_fits(metric, data)
    waves = waves_for(batch)
    if waves is not None:
        batched = batched_metrics(chosen, waves)  # refuses a judge without a batch API
        # On Ray the workers make their own twins of the judges (engine/ray/batch.py).
        chosen = batched if executor is None else chosen
        timeout = None  # a batch may take up to a day; its answers are what the cells wait for
        max_concurrency = max_concurrency or waves.options.max_cells
    plan = _Plan(
        data=data,
        metrics=chosen,
        run_dir=run_dir,
        max_concurrency=_concurrency(max_concurrency, chosen),
        timeout=timeout,
        strict=bool(strict or raise_exceptions),
        show_progress=show_progress,
        budget=budget,
        callbacks=hooks,
        name=name,
        experiment_name=experiment_name,
        specs=[metric.spec() for metric in chosen],
        batch=waves,
        repeats=repeats,
    )
    start = functools.partial(_execute, plan)
    if executor is not None:  # e.g. RayExecutor: the same plan, run elsewhere
        if not callable(getattr(executor, "aexecute", None)):
            raise UsageError(
                f"executor must be None or a RayExecutor, got {type(executor).__name__}"
            )
        start = functools.partial(executor.aexecute, plan)
    if return_executor:
        return Executor(start)
    return await start(None)


@dataclass
class Part:
    """What a piece of a streamed run (`engine/stream_run.py`) shares with the others: the open
    run directory, the piece's kept cells (by the run's row numbers), the number of its first
    row, one progress bar and one budget."""

    checkpoint: RunDirectory | None
    kept: dict[tuple[int, str], Cell]
    first_row: int
    progress: CellProgress
    spending: Budget | None


async def _execute(
    plan: _Plan, cancel: threading.Event | None, part: Part | None = None
) -> EvaluationResult:
    data, chosen = plan.data, plan.metrics
    outcomes: list[dict[str, Outcome]] = [{} for _ in range(len(data))]
    usages: list[dict[str, Usage]] = [{} for _ in range(len(data))]
    first = part.first_row if part is not None else 0
    kept: dict[tuple[int, str], Cell] = {}
    if part is not None:
        checkpoint, kept = part.checkpoint, part.kept
    else:
        checkpoint = RunDirectory(plan.run_dir) if plan.run_dir is not None else None
    if checkpoint is not None and part is None:
        kept = checkpoint.open(
            run_fingerprint=fingerprint(
                (sample.to_dict() for sample in data), plan.specs, repeat_settings(plan.repeats)
            ),
            description={"n_rows": len(data), "metrics": plan.specs},
            n_rows=len(data),
            metric_names=[metric.name for metric in chosen],
        )
    for (row, name), cell in kept.items():
        if 0 <= row - first < len(outcomes):
            outcomes[row - first][name] = cell.outcome
            if cell.usage is not None:
                usages[row - first][name] = NO_USAGE if cell.usage == NO_USAGE else cell.usage
    del kept  # the cells' wrappers: only their outcomes and usage are kept

    resumed = sum(len(cells) for cells in outcomes)
    pending = [
        (row, metric)
        for row in range(len(data))
        for metric in chosen
        if metric.name not in outcomes[row]
    ]
    remaining = {row: 0 for row, _ in pending}
    for row, _ in pending:
        remaining[row] += 1
    announced: set[int] = set()
    total = len(data) * len(chosen)
    started = time.perf_counter()
    failure: list[ExceptionInRunner] = []
    sent = [Usage()]  # what this invocation's model calls used
    queue = iter(pending)
    hooks = plan.callbacks
    waves = plan.batch
    interruption = current_interruption()
    spending = part.spending if part is not None else run_budget(plan.budget, interruption)
    await hooks.emit("on_run_start", plan.name, len(data), [metric.name for metric in chosen])

    try:
        shown = (
            contextlib.nullcontext(part.progress)
            if part is not None
            else CellProgress(total, done=total - len(pending), enabled=plan.show_progress)
        )
        with shown as progress:

            async def worker(stop: anyio.CancelScope) -> None:
                # A fixed pool of workers pulls cells from one queue: memory stays flat
                # however many cells there are, and at most `max_concurrency` run at once.
                for row, metric in queue:
                    if cancel is not None and cancel.is_set():
                        return
                    if interruption is not None and interruption.requested.is_set():
                        return  # Ctrl-C: no new cells; those in flight may still land
                    if row not in announced:
                        announced.add(row)
                        await hooks.emit("on_row_start", row, data[row])
                    await hooks.emit("on_metric_start", row, metric.name)
                    began = time.perf_counter()
                    outcome: Ok | Skipped | Error
                    if spending is not None and spending.exhausted:
                        outcome, usage = (
                            Error(
                                error_type="BudgetExhausted",
                                message=f"not started: the budget of ${spending.limit:g} was reached",
                                attempts=0,
                            ),
                            Usage(),
                        )
                    else:
                        with waves.cell(first + row, metric.name) if waves else _NO_WAVES:
                            outcome, usage = await score_cell(
                                metric, data[row], timeout=plan.timeout, repeats=plan.repeats
                            )
                    sent[0] = sent[0] + usage
                    if isinstance(outcome, Error) and outcome.error_type == Interrupted.__name__:
                        continue  # never sent (Ctrl-C): left for the resumed run, not saved
                    outcomes[row][metric.name] = outcome
                    usages[row][metric.name] = usage
                    if checkpoint is not None:
                        checkpoint.append(
                            Cell(
                                row=first + row,
                                metric=metric.name,
                                outcome=outcome,
                                seconds=time.perf_counter() - began,
                                usage=usage,
                            )
                        )
                    progress.advance(failed=isinstance(outcome, Error))
                    await hooks.emit("on_metric_end", row, metric.name, outcome, usage)
                    remaining[row] -= 1
                    if not remaining[row]:
                        await hooks.emit("on_row_end", row, dict(outcomes[row]))
                    if plan.strict and isinstance(outcome, Error):
                        failure.append(
                            ExceptionInRunner(row, metric.name, outcome.error_type, outcome.message)
                        )
                        stop.cancel()
                        return

            with budgeting(spending), sharing_answers():
                async with anyio.create_task_group() as outer:
                    if cancel is not None:
                        outer.start_soon(_watch, cancel, outer.cancel_scope)
                    if interruption is not None:
                        outer.start_soon(drain, interruption, outer.cancel_scope)
                    if waves is not None:
                        where = checkpoint.path if checkpoint is not None else None
                        outer.start_soon(waves.run, where, progress.status)
                    async with anyio.create_task_group() as group:
                        for _ in range(min(plan.max_concurrency, len(pending))):
                            group.start_soon(worker, group.cancel_scope)
                    outer.cancel_scope.cancel()  # the work is done: stop watching
    except BaseException as exc:
        leaf = first_leaf(exc)  # e.g. a callback's own error, out of the task groups
        await hooks.emit("on_run_error", leaf)
        if leaf is not exc and isinstance(leaf, Exception):
            raise leaf from None
        raise
    finally:
        if checkpoint is not None and part is None:
            checkpoint.close()
    if interruption is not None and interruption.requested.is_set():
        raise KeyboardInterrupt  # the cells that landed are in the run directory
    if failure:
        await hooks.emit("on_run_error", failure[0])
        raise failure[0]
    for row in range(len(data)):  # cancelled: what never finished says so
        for metric in chosen:
            if metric.name not in outcomes[row]:
                outcomes[row][metric.name] = Error(
                    error_type="Cancelled",
                    attempts=0,
                    message="the run was cancelled before this cell finished",
                )
                usages[row][metric.name] = Usage()
    result = EvaluationResult(
        data,
        plan.specs,
        outcomes,
        usages=usages,
        seconds=time.perf_counter() - started,
        run_dir=str(plan.run_dir) if plan.run_dir is not None else None,
        experiment_name=plan.experiment_name,
        sent=sent[0],
        whole_run=sent[0] + checkpoint.spent if checkpoint is not None else sent[0],
        resumed_cells=resumed,
    )
    await hooks.emit("on_run_end", result)
    return result


_NO_WAVES = contextlib.nullcontext()


async def _watch(cancel: threading.Event, scope: anyio.CancelScope) -> None:
    """Cancel `scope` once `cancel` is set (by `Executor.cancel()`, from any thread)."""
    while not cancel.is_set():
        await anyio.sleep(0.05)
    scope.cancel()


@functools.wraps(aevaluate)
def evaluate(
    *args: Any, allow_nest_asyncio: bool = True, **kwargs: Any
) -> EvaluationResult | Executor:
    """Synchronous twin of `aevaluate` (same parameters). Works in scripts, in Jupyter and inside
    a running event loop: the loop is never patched; a worker thread runs the evaluation instead.
    `allow_nest_asyncio` (Ragas' switch for patching the loop) is accepted and has no effect."""
    del allow_nest_asyncio
    return run_sync(aevaluate(*args, **kwargs))


__all__ = [
    "aevaluate",
    "coerce_dataset",
    "coerce_embeddings",
    "coerce_llm",
    "coerce_metrics",
    "evaluate",
    "score_cell",
]
