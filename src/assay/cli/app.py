"""`assay` command line entry point."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from assay._version import __version__
from assay.errors import AssayError

app = typer.Typer(
    name="assay",
    help="Evaluate LLM, RAG and agent applications.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
stdout = Console()
stderr = Console(stderr=True)


def _version(value: bool) -> None:
    if value:
        print(f"assay {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        Optional[bool],  # noqa: UP007 (typer needs Optional on 3.10)
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit."),
    ] = None,
) -> None:
    """assay: typed, resumable evaluations of LLM applications."""


@app.command("evaluate")
def evaluate_command(
    data: Annotated[Path, typer.Argument(help="Dataset file: .jsonl, .json or .csv")],
    metrics: Annotated[str, typer.Option("--metrics", "-m", help="Comma-separated metric ids, e.g. bleu_score,rouge_score(rouge_type=rouge1)")],
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write one JSON object per row with its metric outcomes")] = None,  # noqa: UP007
    run_dir: Annotated[Optional[Path], typer.Option("--run-dir", help="Save cells as they finish; rerun to resume")] = None,  # noqa: UP007
    column_map: Annotated[Optional[str], typer.Option("--column-map", help="Rename columns: field=column,...")] = None,  # noqa: UP007
    concurrency: Annotated[int, typer.Option("--concurrency", help="Cells scored at once")] = 16,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds allowed per cell")] = 600.0,
    strict: Annotated[bool, typer.Option("--strict", help="Stop at the first error")] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar")] = True,
) -> None:
    """Score every row of DATA with the chosen metrics and print a summary."""
    from assay.cli.metric_spec import parse_column_map, parse_metrics
    from assay.engine.progress import print_summary
    from assay.engine.run import evaluate
    from assay.schema.dataset import EvaluationDataset

    dataset = EvaluationDataset.load(data, column_map=parse_column_map(column_map))
    chosen = parse_metrics(metrics)
    if output is not None and output.suffix.lower() not in {".jsonl", ".ndjson"}:
        raise typer.BadParameter("--output must be a .jsonl file", param_hint="--output")
    try:
        result = evaluate(
            dataset,
            chosen,
            run_dir=run_dir,
            max_concurrency=concurrency,
            timeout=timeout,
            strict=strict,
            show_progress=progress,
        )
    except KeyboardInterrupt:
        where = f"; finished cells are saved in {run_dir}: run the same command to resume" if run_dir else ""
        stderr.print(f"interrupted{where}")
        raise typer.Exit(130) from None
    print_summary(result, stdout)
    if output is not None:
        result.to_jsonl(output)
        stdout.print(f"per-row results written to {output}")


@app.command("metrics")
def metrics_command() -> None:
    """List every metric with the fields it needs and the models it uses."""
    from assay.metrics.registry import metric_classes

    table = Table(title="assay metrics")
    table.add_column("id", style="bold", no_wrap=True)
    table.add_column("sample")
    table.add_column("required fields")
    table.add_column("llm", no_wrap=True)
    table.add_column("embeddings", no_wrap=True)
    for name, cls in metric_classes().items():
        table.add_row(
            name,
            cls.sample_kind.replace("_", "-"),
            ", ".join(cls.required_fields),
            "yes" if cls.needs_llm else "no",
            "yes" if cls.needs_embeddings else "no",
        )
    stdout.print(table)


def main() -> None:
    """Run the CLI; assay's own errors become one line on stderr and exit code 2."""
    try:
        app()
    except AssayError as exc:
        stderr.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(2)
