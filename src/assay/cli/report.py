"""`assay report`: an HTML page from evaluation results, a run directory or experiments."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def report_command(
    results: Annotated[
        list[str],
        typer.Argument(
            help="An `assay evaluate --output` .jsonl, a --run-dir directory, or an experiment (name or file); "
            "two or more are compared, the first being the baseline"
        ),
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write")] = Path(
        "report.html"
    ),
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="For a run directory: the dataset file it was run on, to show each row's inputs",
        ),
    ] = None,
    root_dir: Annotated[
        Path,
        typer.Option("--root-dir", help="Where experiments/ is, for experiments given by name"),
    ] = Path("."),
) -> None:
    """Write a self-contained HTML report: score distributions, coverage, errors, cost, and every row."""
    from assay.cli.app import stdout
    from assay.report import write_report

    if output.suffix.lower() not in {".html", ".htm"}:
        raise typer.BadParameter("the report is HTML: give a .html file", param_hint="--output")
    target = write_report(results, output, data=data, root_dir=root_dir)
    stdout.print(f"report written to {target}", highlight=False, soft_wrap=True)
