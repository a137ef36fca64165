"""`assay report`: an HTML page from evaluation results, a run directory or experiments, with
the alignment of judges with human labels (`assay align --report` / `-o` files) when given."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer


def report_command(
    results: Annotated[
        list[str] | None,
        typer.Argument(
            help="An `assay evaluate --output` .jsonl, a --run-dir directory, or an experiment (name or file); "
            "two or more are compared, the first being the baseline. A .json alignment report "
            "(`assay align --report`) or aligned file (`assay align -o`) is shown as an alignment section",
            show_default=False,
        ),
    ] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write")] = Path(
        "report.html"
    ),
    alignment: Annotated[
        list[Path] | None,
        typer.Option(
            "--alignment",
            help="An alignment report (`assay align --report`, `AlignmentReport.to_json`) or the "
            "aligned file `assay align -o` wrote: its held-out agreement, confusion matrices and "
            "reliability diagram become a section of the page (repeat for several judges)",
            show_default=False,
        ),
    ] = None,
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
    """Write a self-contained HTML report: score distributions, coverage, errors, cost, every row,
    and how far aligned judges agree with human labels."""
    from assay.cli.console import stdout
    from assay.report import write_report

    if output.suffix.lower() not in {".html", ".htm"}:
        raise typer.BadParameter("the report is HTML: give a .html file", param_hint="--output")
    runs = [source for source in results or [] if not _is_alignment_file(source)]
    sections = [_alignment_report(source) for source in results or [] if source not in runs]
    sections += [_alignment_report(path) for path in alignment or []]
    target = write_report(runs, output, data=data, root_dir=root_dir, sections=sections)
    stdout.print(f"report written to {target}", highlight=False, soft_wrap=True)


def _is_alignment_file(source: str) -> bool:
    """A .json file holding an alignment report or an aligned state (results are never .json)."""
    path = Path(source)
    if path.suffix.lower() != ".json" or not path.is_file():
        return False
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and (
        ("statistics" in data and "label_kind" in data) or "alignment" in data
    )


def _alignment_report(source: str | Path) -> Any:
    from assay.alignment import AlignmentReport

    return AlignmentReport.load(source)


__all__ = ["report_command"]
