"""A run from a .jsonl or .csv file to a results file whose memory does not grow with the data.

`evaluate()` returns every row with its outcomes, so a run holds its whole dataset and grid: for
100k rows and two classic metrics that was most of a gigabyte. A run that writes its rows to a file
(`--output`) or saves them in a run directory (`--run-dir`) does not need them afterwards, so
`stream_file` reads the file twice, a piece of `PIECE_ROWS` rows at a time
(`EvaluationDataset.iter_file`):

1. every row is read and checked (the same checks as `EvaluationDataset.load`, the metric's fields
   and sample kind, text a judge cannot be sent) and fed to the run's fingerprint: a mistake is
   still refused before any work, including the faults a CSV reader finds only at the end of the
   file (a quote never closed swallows the rest of it; a header with no rows);
2. each piece is scored by the engine's own per-cell code (`run._execute`, with the run directory,
   progress bar and budget shared by the pieces), its rows are appended to the output (a temporary
   file renamed into place at the end, so the output is whole or absent), and its outcomes are
   folded into the summary, then dropped.

A resumed run does not read its saved cells all at once either: `RunDirectory.open_indexed` keeps
where each one is (8 bytes a cell) and a piece reads its own. What stays in memory is one piece,
the summary's counters and the error cells (shown in the summary). The summary is the in-memory
run's: the same counts, and the mean over the same numbers summed exactly (`math.fsum`'s rule).

A .json file (one array) is not streamed: the standard library parses a document whole and no
incremental JSON parser is a dependency, so such a run reads it whole (`file_run._streams`).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._util.sync import run_sync
from assay.engine.checkpoint import CellIndex, RunDirectory, fingerprint
from assay.engine.file_run import FileRun, FileRunOptions, check_output, failures, ray_executor
from assay.engine.interrupt import current_interruption, run_budget
from assay.engine.plan import _check_sendable, check_settings, coerce_metrics
from assay.engine.progress import CellProgress
from assay.engine.repeats import check_repeats, repeat_settings
from assay.engine.run import Part, _concurrency, _execute, _Plan, _prepare_metrics
from assay.errors import DataError, UsageError
from assay.metrics.base import Metric
from assay.metrics.callbacks import RAGAS_EVALUATION_CHAIN_NAME, Callbacks
from assay.schema.dataset import EvaluationDataset, atomic_open, json_line
from assay.schema.outcome import Error, Ok
from assay.schema.result import EvaluationResult, MetricSummary
from assay.schema.usage import Usage
from assay.schema.values import as_number

PIECE_ROWS = 2000


@dataclass
class _Tally:
    """One metric's summary, folded a piece at a time."""

    name: str
    n_rows: int = 0
    n_ok: int = 0
    n_skipped: int = 0
    n_error: int = 0
    numbers: int = 0
    partials: list[float] = field(default_factory=list)  # an exact running sum (Shewchuk)
    labels: Counter[str] = field(default_factory=Counter)

    def add(self, value: float) -> None:
        kept = []
        for partial in self.partials:
            if abs(value) < abs(partial):
                value, partial = partial, value
            high = value + partial
            low = partial - (high - value)
            if low:
                kept.append(low)
            value = high
        self.partials = [*kept, value]

    def summary(self) -> MetricSummary:
        mean = math.fsum(self.partials) / self.numbers if self.numbers else None
        return MetricSummary(
            name=self.name,
            n_rows=self.n_rows,
            n_ok=self.n_ok,
            n_skipped=self.n_skipped,
            n_error=self.n_error,
            mean=mean,
            labels=dict(self.labels),
        )


@dataclass
class StreamedResult:
    """What a streamed run leaves in memory: the summary, the failed cells and the usage. Read
    like an `EvaluationResult` by the summary printer and `--fail-under`; the rows are in the
    output file or the run directory."""

    n_rows: int
    metric_names: list[str]
    tallies: list[_Tally]
    failed: list[tuple[int, str, Error]]
    usage_of_cells: Usage
    sent: Usage
    whole_run: Usage
    resumed_cells: int
    run_dir: str | None
    seconds: float

    def summaries(self) -> list[MetricSummary]:
        return [tally.summary() for tally in self.tallies]

    def summary(self, metric: str) -> MetricSummary:
        for tally in self.tallies:
            if tally.name == metric:
                return tally.summary()
        raise UsageError(
            f"no metric {metric!r} in this result; it has {', '.join(self.metric_names)}"
        )

    def errors(self) -> list[tuple[int, str, Error]]:
        return list(self.failed)

    def usage(self) -> Usage:
        return self.usage_of_cells

    def sent_usage(self) -> Usage:
        return self.sent

    def whole_run_usage(self) -> Usage:
        return self.whole_run

    def __repr__(self) -> str:
        parts = []
        for item in self.summaries():
            shown = "n/a" if item.mean is None else f"{item.mean:.4f}"
            parts.append(f"'{item.name}': {shown} ({item.coverage_text()} rows)")
        return "{" + ", ".join(parts) + "}"


async def stream_file(
    data: Path,
    metrics: Sequence[Metric | str],
    *,
    llm: Any,
    embeddings: Any,
    output: Path | None,
    run_dir: Path | None,
    column_map: dict[str, str] | None,
    concurrency: int | None,
    timeout: float | None,
    strict: bool,
    show_progress: bool,
    budget: float | None,
    repeats: int = 1,
) -> StreamedResult:
    """Score the .jsonl or .csv file `data` a piece at a time (see the module), writing rows to
    `output` and cells to `run_dir` as they finish."""
    check_settings(timeout, budget)
    repeats = check_repeats(repeats)
    chosen = _prepare_metrics(coerce_metrics(list(metrics)), llm, embeddings)
    specs = [metric.spec() for metric in chosen]
    names = [metric.name for metric in chosen]

    def pieces() -> Iterator[EvaluationDataset]:
        return EvaluationDataset.iter_file(data, column_map=column_map, size=PIECE_ROWS)

    n_rows, run_fingerprint = _check_all(pieces(), chosen, specs, repeat_settings(repeats))
    if not n_rows:
        raise UsageError(f"{data}: the dataset has no rows")
    checkpoint = RunDirectory(run_dir) if run_dir is not None else None
    index: CellIndex | None = None
    if checkpoint is not None:
        index = checkpoint.open_indexed(
            run_fingerprint=run_fingerprint,
            description={"n_rows": n_rows, "metrics": specs},
            n_rows=n_rows,
            metric_names=names,
        )
    tallies = [_Tally(name) for name in names]
    failed: list[tuple[int, str, Error]] = []
    totals = {"cells": Usage(), "sent": Usage()}
    resumed = 0
    began = time.perf_counter()
    interruption = current_interruption()
    spending = run_budget(budget, interruption)
    total = n_rows * len(chosen)
    done = len(index) if index is not None else 0
    try:
        with (
            CellProgress(total, done=done, enabled=show_progress) as progress,
            atomic_open(output) if output is not None else contextlib.nullcontext() as handle,
        ):
            first = 0
            for piece in pieces():
                rows = range(first, first + len(piece))
                plan = _Plan(
                    data=piece,
                    metrics=chosen,
                    run_dir=run_dir,
                    max_concurrency=_concurrency(concurrency, chosen),
                    timeout=timeout,
                    strict=strict,
                    show_progress=False,
                    budget=budget,
                    callbacks=Callbacks(None),
                    name=RAGAS_EVALUATION_CHAIN_NAME,
                    experiment_name=None,
                    specs=specs,
                    repeats=repeats,
                )
                kept = index.cells(rows) if index is not None else {}
                part = Part(checkpoint, kept, first, progress, spending)
                result = await _execute(plan, None, part)
                _fold(result, first, tallies, failed)
                totals["cells"] = totals["cells"] + result.usage()
                totals["sent"] = totals["sent"] + result.sent_usage()
                resumed += result.resumed_cells
                if handle is not None:
                    for record in result.iter_row_records():
                        handle.write(json_line(record))
                first += len(piece)
    finally:
        if checkpoint is not None:
            checkpoint.close()
    spent_before = checkpoint.spent if checkpoint is not None else Usage()
    return StreamedResult(
        n_rows=n_rows,
        metric_names=names,
        tallies=tallies,
        failed=failed,
        usage_of_cells=totals["cells"],
        sent=totals["sent"],
        whole_run=totals["sent"] + spent_before,
        resumed_cells=resumed,
        run_dir=str(run_dir) if run_dir is not None else None,
        seconds=time.perf_counter() - began,
    )


def stream_file_run(
    data: Path,
    metrics: Sequence[Metric | str],
    options: FileRunOptions,
    on_result: Callable[[Any], None] | None,
) -> FileRun:
    """`evaluate_file` a piece at a time, after the same checks (`FileRunOptions.stream`)."""

    ray_executor(options)  # refuses --resume, --workers and --output-format without --ray
    output = Path(options.output) if options.output is not None else None
    if output is not None:
        check_output(output, data, options.run_path)
    run_dir = options.run_path
    if run_dir is not None and run_dir.exists() and not run_dir.is_dir():
        raise UsageError(
            f"--run-dir {run_dir} is a file, not a directory; give a directory (it is created if missing)"
        )
    if data.is_dir() or not data.exists():
        raise DataError("file not found" if not data.exists() else "is a directory", file=str(data))
    chosen = coerce_metrics(list(metrics))
    judge = options.models.llm_for(any(metric.needs_llm for metric in chosen))
    embedder = options.models.embeddings_for(any(metric.needs_embeddings for metric in chosen))
    result = run_sync(
        stream_file(
            data,
            chosen,
            llm=judge,
            embeddings=embedder,
            output=output,
            run_dir=run_dir,
            column_map=dict(options.column_map or {}) or None,
            concurrency=options.concurrency,
            timeout=options.timeout,
            strict=options.strict,
            show_progress=options.show_progress,
            budget=options.budget,
            repeats=options.repeats,
        )
    )
    if on_result is not None:
        on_result(result)
    run = FileRun(result=result, failures=failures(result, options.fail_under))
    run.output = str(options.output) if output is not None else None
    return run


def _check_all(
    pieces: Iterator[EvaluationDataset],
    metrics: list[Metric],
    specs: list[dict[str, Any]],
    settings: dict[str, Any],
) -> tuple[int, str]:
    """Read every row once: the checks `evaluate` makes before any work, over the whole file,
    and the run's fingerprint. Returns (rows, fingerprint)."""
    present: set[str] = set()
    kind: str | None = None
    count = 0

    def rows() -> Iterator[dict[str, Any]]:
        nonlocal kind, count
        for piece in pieces:
            kind = piece.kind
            present.update(piece.features(), piece.extra_columns())
            for metric in metrics:
                if (metric.needs_llm or metric.needs_embeddings) and piece.kind in (
                    metric.sample_kinds
                ):
                    _sendable(metric, piece, count)
            for sample in piece:
                yield sample.to_dict()
            count += len(piece)

    run_fingerprint = fingerprint(rows(), specs, settings)
    for metric in metrics:
        if kind is None:
            break
        if kind not in metric.sample_kinds:
            wanted = (
                "multi-turn (conversation)" if metric.sample_kind == "multi_turn" else "single-turn"
            )
            raise UsageError(
                f"metric {metric.name} scores {wanted} samples, but the dataset is {kind.replace('_', '-')}"
            )
        absent = [name for name in metric.fields_for(kind)[0] if name not in present]
        if absent:
            raise UsageError(
                f"metric {metric.name} needs {', '.join(absent)}, which no row of the dataset has "
                f"(it has {', '.join(sorted(present)) or 'no fields'})"
            )
    return count, run_fingerprint


def _sendable(metric: Metric, piece: EvaluationDataset, first: int) -> None:
    """`plan._check_sendable` on one piece, its row counted from the start of the file."""
    try:
        _check_sendable(metric, piece)
    except DataError as exc:
        row = getattr(exc, "row", None)
        raise DataError(
            str(exc.args[0]) if exc.args else str(exc),
            row=first + row if isinstance(row, int) else None,
            row_is_index=True,
            field=getattr(exc, "field", None),
        ) from None


def _fold(
    result: EvaluationResult,
    first: int,
    tallies: list[_Tally],
    failed: list[tuple[int, str, Error]],
) -> None:
    """Add a piece's outcomes to the summary's counters and keep its failed cells."""
    for tally in tallies:
        for cells in result.outcomes:
            cell = cells[tally.name]
            tally.n_rows += 1
            if isinstance(cell, Ok):
                tally.n_ok += 1
                if isinstance(cell.value, str):
                    tally.labels[cell.value] += 1
                number = as_number(cell.value)
                if number is not None:
                    tally.numbers += 1
                    tally.add(number)
            elif isinstance(cell, Error):
                tally.n_error += 1
            else:
                tally.n_skipped += 1
    failed.extend((first + row, name, error) for row, name, error in result.errors())


__all__ = ["PIECE_ROWS", "StreamedResult", "stream_file", "stream_file_run"]
