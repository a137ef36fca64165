"""`assay evaluate`: score a dataset file and print a summary (or, with --estimate, a forecast)."""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from assay.errors import UsageError

Opt = Optional  # typer reads Optional[...] annotations; 3.10 needs them spelled this way


def evaluate_command(
    data: Annotated[Path, typer.Argument(help="Dataset file: .jsonl, .json or .csv")],
    metrics: Annotated[
        str,
        typer.Option(
            "--metrics",
            "-m",
            help="Comma-separated metric ids, e.g. bleu_score,rouge_score(rouge_type=rouge1)",
        ),
    ],
    output: Annotated[
        Opt[str],
        typer.Option(
            "--output",
            "-o",
            help="Write one JSON object per row with its metric outcomes (checked before the run, written atomically); with --ray a directory or an fsspec URI",
        ),
    ] = None,
    run_dir: Annotated[
        Opt[Path], typer.Option("--run-dir", help="Save cells as they finish; rerun to resume")
    ] = None,
    column_map: Annotated[
        Opt[str], typer.Option("--column-map", help="Rename columns: field=column,...")
    ] = None,
    llm: Annotated[
        Opt[str],
        typer.Option("--llm", help="Judge model, e.g. openai/gpt-4o-mini, ollama/llama3.1, local"),
    ] = None,
    base_url: Annotated[
        Opt[str], typer.Option("--base-url", help="Endpoint of an OpenAI-compatible judge")
    ] = None,
    embeddings: Annotated[
        Opt[str],
        typer.Option("--embeddings", help="Embedding model, e.g. openai/text-embedding-3-small"),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not read or write the response cache")
    ] = False,
    estimate: Annotated[
        bool, typer.Option("--estimate", help="Print calls, tokens and cost; make no model call")
    ] = False,
    budget: Annotated[
        Opt[float], typer.Option("--budget", help="Stop making model calls after this many USD")
    ] = None,
    concurrency: Annotated[
        Opt[int],
        typer.Option(
            "--concurrency", help="Cells scored at once (default: 16, fewer for a slow local judge)"
        ),
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds allowed per cell")] = 600.0,
    request_timeout: Annotated[
        Opt[float],
        typer.Option(
            "--request-timeout",
            metavar="SECONDS",
            help="Seconds allowed per model request, whole answer included (default 120; 900 for the embedded judge)",
        ),
    ] = None,
    fail_under: Annotated[
        Opt[float],
        typer.Option(
            "--fail-under",
            help="Exit 1 if any metric's mean over its scored rows is below this, or it has no scored rows",
        ),
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Stop at the first error")] = False,
    progress: Annotated[
        bool, typer.Option("--progress/--no-progress", help="Show a progress bar")
    ] = True,
    ray: Annotated[
        Opt[str],
        typer.Option(
            "--ray",
            metavar="ADDRESS",
            help="Run on Ray: local, auto or a cluster address (assay[ray]); --output is then a directory",
        ),
    ] = None,
    workers: Annotated[int, typer.Option("--workers", help="Ray workers (with --ray)")] = 2,
    resume: Annotated[
        bool, typer.Option("--resume", help="With --ray: finish the run saved in --output")
    ] = False,
    output_format: Annotated[
        Opt[str],
        typer.Option(
            "--output-format",
            help="With --ray: jsonl or parquet row files (default: the resumed run's, else jsonl)",
        ),
    ] = None,
) -> None:
    """Score every row of DATA with the chosen metrics and print a summary.

    Exit codes:
    0  done
    1  nothing scored (every cell skipped or failed), or a metric below --fail-under
    2  a usage or data error, reported in one line before any work
    """
    from assay.cli.console import stderr, stdout
    from assay.cli.metric_spec import parse_column_map, parse_metrics
    from assay.engine.progress import print_summary
    from assay.engine.run import evaluate
    from assay.schema.dataset import EvaluationDataset

    # Every argument is checked before any work, so a mistake never costs a run.
    _check_number("--timeout", timeout, minimum=0.0, inclusive=False)
    _check_number("--request-timeout", request_timeout, minimum=0.0, inclusive=False)
    _check_number("--budget", budget, minimum=0.0, inclusive=True, unit="USD")
    _check_number("--fail-under", fail_under)
    if concurrency is not None and concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {concurrency}")
    executor = _ray_executor(ray, workers, output, resume, run_dir, concurrency, output_format)
    output_file = Path(output) if output is not None and executor is None else None
    if output_file is not None:
        _check_output(output_file, data, run_dir)
    if run_dir is not None and run_dir.exists() and not run_dir.is_dir():
        raise UsageError(
            f"--run-dir {run_dir} is a file, not a directory; give a directory (it is created if missing)"
        )
    dataset = EvaluationDataset.load(data, column_map=parse_column_map(column_map))
    if not len(dataset):
        raise UsageError(f"{data}: the dataset has no rows")
    chosen = parse_metrics(metrics)
    judge, embedder = _models(
        chosen, llm, base_url, embeddings, cache=not no_cache, request_timeout=request_timeout
    )
    if estimate:
        _print_estimate(dataset, chosen, judge, stdout)
        return
    try:
        with _one_line_warnings(stderr):
            result = evaluate(
                dataset,
                chosen,
                llm=judge,
                embeddings=embedder,
                run_dir=run_dir,
                max_concurrency=concurrency if executor is None else None,
                timeout=timeout,
                strict=strict,
                show_progress=progress,
                budget=budget,
                executor=executor,
            )
    except KeyboardInterrupt:
        where = (
            f"; finished cells are saved in {run_dir}: run the same command to resume"
            if run_dir
            else f"; finished rows are saved in {_shown(output)}: run the same command with --resume"
            if executor is not None
            else ""
        )
        stderr.print(f"interrupted{where}")
        raise typer.Exit(130) from None
    print_summary(result, stdout)
    if executor is not None:
        _print_ray_run(executor, _shown(output), stdout)
    elif output_file is not None:
        _write_output(result, output_file, run_dir)
        stdout.print(f"per-row results written to {output}", highlight=False)
    failures = _failures(result, fail_under)
    for line in failures:
        stderr.print(line, highlight=False, soft_wrap=True, markup=False)
    if failures:
        raise typer.Exit(1)


def _ray_executor(
    address: str | None,
    workers: int,
    output: str | None,
    resume: bool,
    run_dir: Path | None,
    concurrency: int | None,
    output_format: str | None = None,
) -> Any:
    """--ray: a RayExecutor writing to the --output directory; --resume and --output-format only
    go with it."""
    if address is None:
        if resume:
            raise UsageError("--resume goes with --ray (a local run resumes with --run-dir)")
        if output_format is not None:
            raise UsageError("--output-format goes with --ray (a local --output is a JSONL file)")
        return None
    if output is None:
        raise UsageError("--ray needs --output DIR: the directory the workers write rows to")
    from assay.engine.ray.storage import is_uri

    if not is_uri(output) and Path(output).exists() and not Path(output).is_dir():
        raise UsageError(f"--output {output} is a file; with --ray it is a directory")
    if run_dir is not None:
        raise UsageError(
            "--run-dir does not go with --ray: the --output directory is the checkpoint"
        )
    if workers < 1:
        raise UsageError(f"--workers must be at least 1, got {workers}")
    if output_format not in (None, "jsonl", "parquet"):
        raise UsageError(f"--output-format must be jsonl or parquet, got {output_format!r}")
    from assay.engine.ray.executor import RayExecutor

    return RayExecutor(
        address=address,
        num_workers=workers,
        max_in_flight=concurrency or 16,
        output=output,
        output_format=output_format,
        resume=resume,
    )


def _shown(output: str | None) -> str:
    """--output as messages name it (a URI without its password)."""
    from assay.engine.ray.storage import shown

    return shown(output) if output is not None else ""


def _print_ray_run(executor: Any, output: str, console: Any) -> None:
    stats = executor.last_run
    if stats is None:
        return
    console.print(
        f"ray: {stats.rows_scored} rows scored, {stats.rows_kept} already in {output}; "
        f"{stats.workers_lost} worker loss(es), {stats.rows_reassigned} rows re-assigned, "
        f"{stats.repeated_requests} repeated model requests, {stats.reassigned_cached_requests} "
        f"answers to re-assigned rows from the cache; rows and summary.json in {output}",
        highlight=False,
        soft_wrap=True,
    )


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


def _check_output(output: Path, data: Path, run_dir: Path | None) -> None:
    """--output must be writable, and must not be the input or the run directory's own file."""
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


def _write_output(result: Any, output: Path, run_dir: Path | None) -> None:
    """Write --output; should that fail after all (disk full, permissions changed), keep the results
    in a file of the temporary directory rather than lose them."""
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


def _failures(result: Any, fail_under: float | None) -> list[str]:
    """Why the run should exit 1, one line each: nothing scored at all, or a metric below the bar."""
    summaries = result.summaries()
    if summaries and all(item.n_ok == 0 for item in summaries):
        errors = sum(item.n_error for item in summaries)
        skipped = sum(item.n_skipped for item in summaries)
        return [
            f"no cell was scored: {errors} failed and {skipped} were skipped, coverage 0 for every metric"
        ]
    if fail_under is None:
        return []
    failures = []
    for item in summaries:
        if item.n_ok == 0:
            failures.append(
                f"{item.name}: no scored rows (0/{item.n_rows}), below --fail-under {fail_under:g}"
            )
        elif item.mean is None:
            failures.append(
                f"{item.name}: its values are labels, not numbers, so there is no mean to hold "
                f"against --fail-under {fail_under:g}"
            )
        elif item.mean < fail_under:
            failures.append(
                f"{item.name}: mean {item.mean:.4f} over {item.coverage_text()} scored rows is below "
                f"--fail-under {fail_under:g}"
            )
    return failures


@contextlib.contextmanager
def _one_line_warnings(console: Any) -> Iterator[None]:
    """Warnings during the run (e.g. unreadable checkpoint lines) as one line each on stderr."""

    def show(
        message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None
    ) -> None:
        console.print(f"warning: {message}", highlight=False, soft_wrap=True, markup=False)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


def _models(
    chosen: list[Any],
    llm: str | None,
    base_url: str | None,
    embeddings: str | None,
    *,
    cache: bool,
    request_timeout: float | None = None,
):
    """Build the judge and embeddings only if a chosen metric needs them (credentials checked here)."""
    from assay.models import defaults, factory

    options: dict[str, Any] = {"cache": cache}
    if request_timeout is not None:
        options["timeout"] = request_timeout
    judge = embedder = None
    if llm is not None:
        judge = factory.llm_factory(llm, base_url=base_url, **options)
    elif any(metric.needs_llm for metric in chosen):
        judge = defaults.default_llm(**options)
    if embeddings is not None:
        embedder = factory.embedding_factory(embeddings, base_url=base_url, **options)
    elif any(metric.needs_embeddings for metric in chosen):
        embedder = defaults.default_embeddings(**options)
    return judge, embedder


def _print_estimate(dataset: Any, chosen: list[Any], judge: Any, console: Any) -> None:
    from rich.table import Table

    from assay.engine.estimate import estimate_run

    forecast = estimate_run(dataset, chosen, llm=judge)
    table = Table(title=f"estimate for {len(dataset)} rows (no model was called)")
    for column in ("metric", "cells", "requests", "input tokens", "output tokens", "cost (USD)"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for item in forecast.metrics:
        cost = "unknown price" if item.cost is None else f"{item.cost:.4f}"
        table.add_row(
            item.name,
            str(item.cells),
            str(item.calls.requests),
            f"{item.calls.input_tokens:,}",
            f"{item.calls.output_tokens:,}",
            cost,
        )
    total = "unknown price" if forecast.cost is None else f"{forecast.cost:.4f}"
    table.add_row(
        "total",
        "",
        str(forecast.requests),
        f"{forecast.input_tokens:,}",
        f"{forecast.output_tokens:,}",
        total,
        style="bold",
    )
    console.print(table)
