"""`assay evaluate`: score a dataset file and print a summary (or, with --estimate, a forecast).

The command parses its options, calls `assay.engine.evaluate_file` / `estimate_file` (which check
everything before any work, run, write --output and hold the run against --fail-under) and prints.
The options are declared once, as the `Annotated` aliases below, so the command reads as a list.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

Data = Annotated[Path, typer.Argument(help="Dataset file: .jsonl, .json or .csv")]
Metrics = Annotated[
    str,
    typer.Option(
        "--metrics",
        "-m",
        help="Comma-separated metric ids, e.g. bleu_score,rouge_score(rouge_type=rouge1)",
    ),
]
Output = Annotated[
    str | None,
    typer.Option(
        "--output",
        "-o",
        help="Write one JSON object per row with its metric outcomes (checked before the run, written atomically); with --ray a directory or an fsspec URI",
    ),
]
RunDir = Annotated[
    Path | None, typer.Option("--run-dir", help="Save cells as they finish; rerun to resume")
]
ColumnMap = Annotated[
    str | None, typer.Option("--column-map", help="Rename columns: field=column,...")
]
Llm = Annotated[
    str | None,
    typer.Option("--llm", help="Judge model, e.g. openai/gpt-4o-mini, ollama/llama3.1, local"),
]
BaseUrl = Annotated[
    str | None, typer.Option("--base-url", help="Endpoint of an OpenAI-compatible judge")
]
Embeddings = Annotated[
    str | None,
    typer.Option("--embeddings", help="Embedding model, e.g. openai/text-embedding-3-small"),
]
NoCache = Annotated[
    bool, typer.Option("--no-cache", help="Do not read or write the response cache")
]
Estimate = Annotated[
    bool, typer.Option("--estimate", help="Print calls, tokens and cost; make no model call")
]
Budget = Annotated[
    float | None, typer.Option("--budget", help="Stop making model calls after this many USD")
]
Concurrency = Annotated[
    int | None,
    typer.Option(
        "--concurrency",
        help="Cells scored at once (default: twice the judge's ceiling of calls in flight, at most "
        "256; a remote judge's calls start at 16 at once and grow while it keeps up; the embedded "
        "judge's ceiling is its few slots)",
    ),
]
Timeout = Annotated[float, typer.Option("--timeout", help="Seconds allowed per cell")]
RequestTimeout = Annotated[
    float | None,
    typer.Option(
        "--request-timeout",
        metavar="SECONDS",
        help="Seconds allowed per model request, whole answer included (default 120; 900 for the embedded judge)",
    ),
]
FailUnder = Annotated[
    float | None,
    typer.Option(
        "--fail-under",
        help="Exit 1 if any metric's mean over its scored rows is below this, or it has no scored rows",
    ),
]
Strict = Annotated[bool, typer.Option("--strict", help="Stop at the first error")]
Progress = Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar")]
Ray = Annotated[
    str | None,
    typer.Option(
        "--ray",
        metavar="ADDRESS",
        help="Run on Ray: local, auto or a cluster address (assay[ray]); --output is then a directory",
    ),
]
Workers = Annotated[
    int | None, typer.Option("--workers", help="Ray workers (with --ray; default 2)")
]
Resume = Annotated[
    bool, typer.Option("--resume", help="With --ray: finish the run saved in --output")
]
OutputFormat = Annotated[
    str | None,
    typer.Option(
        "--output-format",
        help="With --ray: jsonl or parquet row files (default: the resumed run's, else jsonl)",
    ),
]

Batch = Annotated[
    bool,
    typer.Option(
        "--batch",
        help="Send the judge's calls through the provider's batch API (OpenAI, Anthropic): half "
        "the price, answers within 24 hours; with --run-dir a killed run resumes its batches",
    ),
]
BatchFallback = Annotated[
    str | None,
    typer.Option(
        "--batch-fallback",
        metavar="retry|live",
        help="With --batch: a failed or expired request goes in the next batch (retry, the "
        "default) or is asked live at once, at the live price (live)",
    ),
]
Repeats = Annotated[
    int,
    typer.Option(
        "--repeats",
        metavar="N",
        help="Ask each judged cell this many times (1-20): the value is the askings' mean, and the "
        "summary says how many cells kept their decision every time",
    ),
]


def evaluate_command(
    data: Data,
    metrics: Metrics,
    output: Output = None,
    run_dir: RunDir = None,
    column_map: ColumnMap = None,
    llm: Llm = None,
    base_url: BaseUrl = None,
    embeddings: Embeddings = None,
    no_cache: NoCache = False,
    estimate: Estimate = False,
    budget: Budget = None,
    concurrency: Concurrency = None,
    timeout: Timeout = 600.0,
    request_timeout: RequestTimeout = None,
    fail_under: FailUnder = None,
    strict: Strict = False,
    progress: Progress = True,
    ray: Ray = None,
    workers: Workers = None,
    resume: Resume = False,
    output_format: OutputFormat = None,
    batch: Batch = False,
    batch_fallback: BatchFallback = None,
    repeats: Repeats = 1,
) -> None:
    """Score every row of DATA with the chosen metrics and print a summary.

    Exit codes:
    0  done
    1  nothing scored (every cell skipped or failed), or a metric below --fail-under
    2  a usage or data error, reported in one line before any work
    """
    from assay.cli.console import stderr, stdout
    from assay.cli.metric_spec import parse_column_map, parse_metrics
    from assay.engine.file_run import FileRunOptions, estimate_file, evaluate_file
    from assay.engine.model_choice import ModelChoice

    models = ModelChoice(
        llm=llm,
        embeddings=embeddings,
        base_url=base_url,
        cache=not no_cache,
        request_timeout=request_timeout,
    )
    options = FileRunOptions(
        output=output,
        run_dir=run_dir,
        column_map=parse_column_map(column_map),
        models=models,
        budget=budget,
        concurrency=concurrency,
        timeout=timeout,
        fail_under=fail_under,
        strict=strict,
        show_progress=progress,
        ray=ray,
        workers=workers,
        resume=resume,
        output_format=output_format,
        stream=True,  # with --output or --run-dir, memory does not grow with the rows
        batch=batch,
        batch_fallback=batch_fallback,
        repeats=repeats,
    )
    chosen = parse_metrics(metrics)
    if estimate:
        _print_estimate(estimate_file(data, chosen, options), stdout)
        return
    try:
        with _one_line_warnings(stderr), _draining(run_dir is not None and ray is None, stderr):
            run = evaluate_file(
                data, chosen, options, on_result=lambda r: _summary(r, chosen, llm, stdout)
            )
    except KeyboardInterrupt:
        stderr.print(f"interrupted{_where_kept(run_dir, output, ray)}")
        raise typer.Exit(130) from None
    _print_run(run, stdout, stderr)


_NO_CARD = "no judge card for this judge and configuration (agreement with people unmeasured)"


def _summary(result: Any, metrics: list[Any], llm: str | None, stdout: Any) -> None:
    """The run's summary, then for each judged metric the one-line judge card (how far its
    numbers can be trusted), or that its agreement with people is unmeasured."""
    from rich.markup import escape

    from assay.benchmark.cards import judge_card
    from assay.engine.progress import print_summary

    print_summary(result, stdout)
    measured = result.stability() if hasattr(result, "stability") else []  # not when streamed
    for stability in (s for s in measured if s.cells):
        stdout.print(f"[dim]asked again: {escape(stability.line())}[/dim]", highlight=False)
    for metric in metrics:
        if getattr(metric, "needs_llm", False):
            card = judge_card(metric, llm)
            line = card.headline() if card else f"{metric.name}: {_NO_CARD}"
            stdout.print(f"[dim]card: {escape(line)}[/dim]", highlight=False, soft_wrap=True)


@contextlib.contextmanager
def _draining(enabled: bool, console: Any) -> Iterator[None]:
    """With a run directory, a first Ctrl-C lets the cells in flight land and be saved (a few
    seconds at most) before the run stops; a second stops at once (`assay.engine.interrupt`)."""
    if not enabled:
        yield
        return
    from assay.engine.interrupt import draining_on_sigint

    def said(interruption: Any) -> None:
        console.print(
            f"interrupting: saving the answers of the cells in flight (up to {interruption.grace:g} s); "
            "press Ctrl-C again to stop now",
            highlight=False,
            soft_wrap=True,
        )

    with draining_on_sigint(on_first=said):
        yield


def _print_run(run: Any, stdout: Any, stderr: Any) -> None:
    """After the summary: where the rows went, then why the run fails (exit 1), if it does."""
    if run.ray is not None:
        _print_ray_run(run.ray, run.output or "", stdout)
    elif run.output is not None:
        stdout.print(f"per-row results written to {run.output}", highlight=False)
    for line in run.failures:
        stderr.print(line, highlight=False, soft_wrap=True, markup=False)
    if run.failures:
        raise typer.Exit(1)


def _where_kept(run_dir: Path | None, output: str | None, ray: str | None) -> str:
    """After Ctrl-C: where the finished work is, and how to pick it up."""
    if run_dir:
        return f"; finished cells are saved in {run_dir}: run the same command to resume"
    if ray is not None:
        from assay.engine.file_run import shown

        return f"; finished rows are saved in {shown(output)}: run the same command with --resume"
    return ""


def _print_ray_run(stats: Any, output: str, console: Any) -> None:
    console.print(
        f"ray: {stats.rows_scored} rows scored, {stats.rows_kept} already in {output}; "
        f"{stats.workers_lost} worker loss(es), {stats.rows_reassigned} rows re-assigned, "
        f"{stats.repeated_requests} repeated model requests, {stats.reassigned_cached_requests} "
        f"answers to re-assigned rows from the cache; rows and summary.json in {output}",
        highlight=False,
        soft_wrap=True,
    )


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


def _print_estimate(found: Any, console: Any) -> None:
    from rich.table import Table

    forecast = found.estimate
    table = Table(title=f"estimate for {found.rows} rows (no model was called)")
    columns = ("metric", "cells", "requests", "input tokens", "output tokens", "cost (USD)")
    for column in (*columns, "batch cost (USD)", "waves"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for item in forecast.metrics:
        table.add_row(
            item.name,
            str(item.cells),
            str(item.calls.requests),
            f"{item.calls.input_tokens:,}",
            f"{item.calls.output_tokens:,}",
            _usd(item.cost),
            _usd(item.batch_cost, item.cost),
            str(item.waves),
        )
    table.add_row(
        "total",
        "",
        str(forecast.requests),
        f"{forecast.input_tokens:,}",
        f"{forecast.output_tokens:,}",
        _usd(forecast.cost),
        _usd(forecast.batch_cost, forecast.cost),
        str(forecast.waves),
        style="bold",
    )
    console.print(table)
    if forecast.requests:
        console.print(
            f"--batch: up to {forecast.waves} wave(s) of batches, each answered within 24 hours "
            "(a call that waits for an earlier answer goes in a later wave; repairs add one)",
            highlight=False,
            soft_wrap=True,
        )


def _usd(cost: float | None, live: float | None = None) -> str:
    """A cost cell: dollars, or why there is none (a batch cost's live price is known but the
    judge has no batch API)."""
    if cost is not None:
        return f"{cost:.4f}"
    return "no batch API" if live is not None else "unknown price"


__all__ = ["evaluate_command"]
