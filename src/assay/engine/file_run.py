"""Evaluate a dataset file into a results file: what `assay evaluate` does, callable from Python.

`evaluate()` scores data already in memory. A run from files has more to decide, and deciding it
before any work is the point: every option is checked first (a bad number, a `--output` that cannot
be written or is the input itself, a run directory that is a file, Ray options without `--ray`), the
dataset is read and must have rows, the models are built (so a missing credential stops the run
before its first call), and only then are cells scored. Afterwards the per-row results are written
atomically (kept in a temporary file should the write fail) and the run is held against
`fail_under`. `estimate_file` stops after the checks and forecasts calls, tokens and cost.

Error messages name the options as the command line spells them (`--timeout`), as the rest of the
library's argument checks do. Printing stays with the caller: `assay.cli.evaluate` prints the
summary (through `on_result`, before the output file is written), the Ray line and the failures.
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.engine.batch.options import BatchOptions, check_batch
from assay.engine.estimate import RunEstimate, estimate_run
from assay.engine.model_choice import ModelChoice
from assay.engine.plan import coerce_metrics
from assay.engine.repeats import check_repeats
from assay.engine.run import evaluate
from assay.errors import UsageError
from assay.metrics.base import Metric
from assay.schema.dataset import STREAMED_SUFFIXES
from assay.schema.result import EvaluationResult

if TYPE_CHECKING:
    from assay.engine.stream_run import StreamedResult


@dataclass(frozen=True)
class FileRunOptions:
    """How `evaluate_file` runs; every field is checked when the options are made.

    output: a .jsonl file for one JSON object per row (with `ray`, a directory or fsspec URI).
    run_dir: save cells as they finish; run again with the same directory to resume.
    column_map: {field: column} renames, as `EvaluationDataset.load` takes them.
    models: the judge and embeddings (`ModelChoice`); built only where a metric needs one.
    budget: stop making model calls after this many USD. concurrency: cells scored at once
        (None: evaluate's default). timeout: seconds per cell. fail_under: a run whose metric mean
        (over its scored rows) is below this, or has no scored rows, fails (see `FileRun.failures`).
    strict: stop at the first error. show_progress: the progress bar.
    ray: run on Ray ("local", "auto" or a cluster address) with `workers` workers, writing rows to
        `output`; resume: finish the Ray run saved there; output_format: "jsonl" or "parquet".
    batch: send the judges' calls through the provider's batch API, at half the price, within a
        day (`evaluate(batch=...)`); batch_fallback: "retry" (a failed or expired line goes in the
        next batch) or "live" (it is asked live at once). A batch run is not streamed.
    repeats: ask each judged cell this many times (`evaluate(repeats=...)`).
    stream: with a .jsonl or .csv file and an `output` or a `run_dir`, score it a piece at a time
        so that memory does not grow with the rows (`engine/stream_run.py`); `FileRun.result` is
        then a `StreamedResult` (the summary and failed cells; the rows are in the files). The
        command line always streams such runs. A .json file (one array) is read whole.
    """

    output: str | Path | None = None
    run_dir: str | Path | None = None
    column_map: Mapping[str, str] | None = None
    models: ModelChoice = field(default_factory=ModelChoice)
    budget: float | None = None
    concurrency: int | None = None
    timeout: float = 600.0
    fail_under: float | None = None
    strict: bool = False
    show_progress: bool = True
    ray: str | None = None
    workers: int | None = None  # Ray workers; None: 2 (only with `ray`)
    resume: bool = False
    output_format: str | None = None
    stream: bool = False
    batch: bool = False
    batch_fallback: str | None = None
    repeats: int = 1

    def __post_init__(self) -> None:
        check_batch(self.batch, self.batch_fallback)
        check_repeats(self.repeats)
        _check_number("--timeout", self.timeout, minimum=0.0, inclusive=False)
        _check_number(
            "--request-timeout", self.models.request_timeout, minimum=0.0, inclusive=False
        )
        _check_number("--budget", self.budget, minimum=0.0, inclusive=True, unit="USD")
        _check_number("--fail-under", self.fail_under)
        if self.concurrency is not None and self.concurrency < 1:
            raise UsageError(f"--concurrency must be at least 1, got {self.concurrency}")
        if isinstance(self.run_dir, str):
            object.__setattr__(self, "run_dir", Path(self.run_dir))

    @property
    def batch_mode(self) -> BatchOptions | bool:
        """What `evaluate(batch=...)` is given."""
        return BatchOptions(fallback=self.batch_fallback or "retry") if self.batch else False

    @property
    def run_path(self) -> Path | None:
        """`run_dir` as a path."""
        return None if self.run_dir is None else Path(self.run_dir)


@dataclass
class FileRun:
    """What `evaluate_file` did: the result, where the rows went, and why it fails, if it does.

    result: the `EvaluationResult`. output: where the per-row results were written (None: nowhere;
    a URI without its password). ray: the Ray run's statistics (`RunStats`), None without Ray.
    failures: one line per reason the run fails (nothing scored at all, or a metric below
    `fail_under`); empty when it passes."""

    result: EvaluationResult | StreamedResult
    output: str | None = None
    ray: Any = None
    failures: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures


def evaluate_file(
    data: str | Path,
    metrics: Sequence[Metric | str],
    options: FileRunOptions | None = None,
    *,
    on_result: Callable[[EvaluationResult], None] | None = None,
) -> FileRun:
    """Score every row of the dataset file `data` with `metrics` (objects or ids), write the rows
    to `options.output`, and say whether the run passes. `on_result` is called with the result as
    soon as the run ends, before the output is written (a failed write still leaves it shown)."""
    options = options or FileRunOptions()
    if _streams(Path(data), options):
        from assay.engine.stream_run import stream_file_run

        return stream_file_run(Path(data), metrics, options, on_result)
    executor, output_file, dataset, chosen = _prepare(Path(data), metrics, options)
    judge = options.models.llm_for(any(metric.needs_llm for metric in chosen))
    embedder = options.models.embeddings_for(any(metric.needs_embeddings for metric in chosen))
    result = evaluate(
        dataset,
        chosen,
        llm=judge,
        embeddings=embedder,
        run_dir=options.run_dir,
        max_concurrency=options.concurrency if executor is None else None,
        timeout=options.timeout,
        strict=options.strict,
        show_progress=options.show_progress,
        budget=options.budget,
        executor=executor,
        batch=options.batch_mode,
        repeats=options.repeats,
    )
    if not isinstance(result, EvaluationResult):  # return_executor is never asked for here
        raise TypeError(f"evaluate returned {type(result).__name__}, not an EvaluationResult")
    if on_result is not None:
        on_result(result)
    run = FileRun(result=result, failures=failures(result, options.fail_under))
    if executor is not None:
        run.output, run.ray = shown(options.output), executor.last_run
    elif output_file is not None:
        write_output(result, output_file, options.run_path)
        run.output = str(options.output)
    return run


def _streams(data: Path, options: FileRunOptions) -> bool:
    return (
        options.stream
        and options.ray is None
        and not options.batch  # a batch run's waves span the whole dataset
        and data.suffix.lower() in STREAMED_SUFFIXES
        and (options.output is not None or options.run_dir is not None)
    )


@dataclass(frozen=True)
class FileEstimate:
    """`estimate_file`'s answer: the rows read and the `RunEstimate` (per metric: cells, requests,
    tokens, cost; totals as properties)."""

    rows: int
    estimate: RunEstimate


def estimate_file(
    data: str | Path, metrics: Sequence[Metric | str], options: FileRunOptions | None = None
) -> FileEstimate:
    """What `evaluate_file` with the same arguments would cost, after the same checks (the models
    are built, so credentials are checked); no model is called."""
    options = options or FileRunOptions()
    _, _, dataset, chosen = _prepare(Path(data), metrics, options)
    judge = options.models.llm_for(any(metric.needs_llm for metric in chosen))
    options.models.embeddings_for(any(metric.needs_embeddings for metric in chosen))
    return FileEstimate(
        len(dataset), estimate_run(dataset, chosen, llm=judge, repeats=options.repeats)
    )


def _prepare(
    data: Path, metrics: Sequence[Metric | str], options: FileRunOptions
) -> tuple[Any, Path | None, Any, list[Metric]]:
    """Every check before any work: (Ray executor or None, local output file or None, dataset,
    metrics)."""
    from assay.schema.dataset import EvaluationDataset

    executor = ray_executor(options)
    output_file = Path(options.output) if options.output is not None and executor is None else None
    if output_file is not None:
        check_output(output_file, data, options.run_path)
    run_dir = options.run_path
    if run_dir is not None and run_dir.exists() and not run_dir.is_dir():
        raise UsageError(
            f"--run-dir {run_dir} is a file, not a directory; give a directory (it is created if missing)"
        )
    dataset = EvaluationDataset.load(data, column_map=dict(options.column_map or {}))
    if not len(dataset):
        raise UsageError(f"{data}: the dataset has no rows")
    return executor, output_file, dataset, coerce_metrics(list(metrics))


def ray_executor(options: FileRunOptions) -> Any:
    """With `ray`: a RayExecutor writing to the `output` directory; `resume` and `output_format`
    only go with it. Without: None."""
    address, output = options.ray, options.output
    if address is None:
        if options.resume:
            raise UsageError("--resume goes with --ray (a local run resumes with --run-dir)")
        if options.output_format is not None:
            raise UsageError("--output-format goes with --ray (a local --output is a JSONL file)")
        if options.workers is not None:
            raise UsageError(
                "--workers goes with --ray (a local run's parallelism is --concurrency)"
            )
        return None
    if output is None:
        raise UsageError("--ray needs --output DIR: the directory the workers write rows to")
    from assay.engine.ray.storage import is_uri

    if not is_uri(output) and Path(output).exists() and not Path(output).is_dir():
        raise UsageError(f"--output {output} is a file; with --ray it is a directory")
    if options.run_dir is not None:
        raise UsageError(
            "--run-dir does not go with --ray: the --output directory is the checkpoint"
        )
    workers = 2 if options.workers is None else options.workers
    if workers < 1:
        raise UsageError(f"--workers must be at least 1, got {workers}")
    if options.output_format not in (None, "jsonl", "parquet"):
        raise UsageError(f"--output-format must be jsonl or parquet, got {options.output_format!r}")
    from assay.engine.ray.executor import RayExecutor

    return RayExecutor(
        address=address,
        num_workers=workers,
        max_in_flight=options.concurrency or 16,
        output=output,
        output_format=options.output_format,
        resume=options.resume,
    )


def shown(output: str | Path | None) -> str:
    """An output location as messages name it (a URI without its password)."""
    from assay.engine.ray.storage import shown as without_password

    return without_password(str(output)) if output is not None else ""


def _check_number(
    option: str,
    value: float | None,
    *,
    minimum: float | None = None,
    inclusive: bool = True,
    unit: str = "seconds",
) -> None:
    if value is None:
        return
    if math.isnan(value):
        raise UsageError(f"{option} must be a number, got nan")
    if minimum is not None and (value < minimum or (not inclusive and value == minimum)):
        bound = f"{minimum:g} {unit} or more" if inclusive else f"more than {minimum:g} {unit}"
        raise UsageError(f"{option} must be {bound}, got {value:g}")


def _same_file(first: Path, second: Path) -> bool:
    if first.resolve() == second.resolve():
        return True
    try:
        return os.path.samefile(first, second)  # hard links, bind mounts
    except OSError:
        return False


def check_output(output: Path, data: Path, run_dir: Path | None) -> None:
    """`output` must be a writable .jsonl path, and neither the input nor the run directory's file."""
    if output.suffix.lower() not in {".jsonl", ".ndjson"}:
        raise UsageError(f"--output must be a .jsonl file, got {output}")
    if output.is_dir():
        raise UsageError(
            f"--output {output} is a directory; give a file path such as {output / 'results.jsonl'}"
        )
    target = output.resolve()  # through a symbolic link, to the file that is written
    if run_dir is not None and target == (run_dir / "cells.jsonl").resolve():
        raise UsageError(
            f"--output {output} is the --run-dir's own cells.jsonl; choose a path outside {run_dir}"
        )
    parent = target.parent
    if not parent.exists():
        raise UsageError(
            f"--output {output}: the directory {parent} does not exist; create it first"
        )
    if not parent.is_dir():
        raise UsageError(f"--output {output}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"--output {output}: the directory {parent} is not writable")
    if target.exists() and not os.access(target, os.W_OK):
        raise UsageError(f"--output {output} exists and is not writable")
    if data.exists() and _same_file(output, data):
        raise UsageError(
            f"--output {output} is the input data file {data}; writing results there would "
            "overwrite the data: choose another path"
        )


def write_output(result: EvaluationResult, output: Path, run_dir: Path | None) -> None:
    """Write the per-row results; should that fail after all (disk full, permissions changed),
    keep them in a file of the temporary directory rather than lose them, and say where."""
    try:
        result.to_jsonl(output)
        return
    except OSError as exc:
        problem = exc.strerror or str(exc)
    fallback = Path(tempfile.gettempdir()) / f"assay-results-{os.getpid()}-{int(time.time())}.jsonl"
    try:
        result.to_jsonl(fallback)
        kept = f"the results were written to {fallback} instead"
    except OSError:
        kept = (
            f"the finished cells are in {run_dir}" if run_dir else "the results could not be saved"
        )
    raise UsageError(f"could not write --output {output} ({problem}); {kept}")


def failures(result: EvaluationResult | StreamedResult, fail_under: float | None) -> list[str]:
    """Why the run fails, one line each: nothing scored at all, or a metric below the bar."""
    summaries = result.summaries()
    if summaries and all(item.n_ok == 0 for item in summaries):
        errors = sum(item.n_error for item in summaries)
        skipped = sum(item.n_skipped for item in summaries)
        return [
            f"no cell was scored: {errors} failed and {skipped} were skipped, coverage 0 for every metric"
        ]
    if fail_under is None:
        return []
    found = []
    for item in summaries:
        if item.n_ok == 0:
            found.append(
                f"{item.name}: no scored rows (0/{item.n_rows}), below --fail-under {fail_under:g}"
            )
        elif item.mean is None:
            found.append(
                f"{item.name}: its values are labels, not numbers, so there is no mean to hold "
                f"against --fail-under {fail_under:g}"
            )
        elif item.mean < fail_under:
            found.append(
                f"{item.name}: mean {item.mean:.4f} over {item.coverage_text()} scored rows is below "
                f"--fail-under {fail_under:g}"
            )
    return found


__all__ = [
    "FileEstimate",
    "FileRun",
    "FileRunOptions",
    "check_output",
    "estimate_file",
    "evaluate_file",
    "failures",
    "ray_executor",
    "write_output",
]
