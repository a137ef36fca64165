"""Progress display and the summary table, both with rich, both on stderr/stdout as asked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from assay.schema.result import EvaluationResult

if TYPE_CHECKING:
    from assay.engine.stream_run import StreamedResult
from assay.schema.usage import Usage


class CellProgress:
    """A rows x metrics progress bar with ETA and a running error count; silent when disabled."""

    def __init__(
        self,
        total: int,
        *,
        done: int = 0,
        enabled: bool = True,
        console: Console | None = None,
        title: str = "Evaluating",
        unit: str = "cells",
    ):
        self.enabled = enabled
        self.errors = 0
        self._progress: Progress | None = None
        if enabled:
            self._progress = Progress(
                TextColumn(f"[bold]{escape(title)}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(unit),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                TextColumn("{task.fields[errors]}"),
                TextColumn("{task.fields[status]}"),
                console=console or Console(stderr=True),
                transient=False,
            )
            self._task = self._progress.add_task(
                "evaluate", total=total, completed=done, errors="", status=""
            )

    def __enter__(self) -> CellProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.stop()

    def advance(self, *, failed: bool) -> None:
        if failed:
            self.errors += 1
        if self._progress is not None:
            label = f"[red]{self.errors} error(s)" if self.errors else ""
            self._progress.update(self._task, advance=1, errors=label)

    def status(self, text: str) -> None:
        """A line of what the run waits for (batch mode: its batches' states), after the bar."""
        if self._progress is not None:
            self._progress.update(self._task, status=f"[dim]{escape(text)}")


def summary_table(result: EvaluationResult | StreamedResult) -> Table:
    """Mean, coverage and the counts that explain it, one line per metric."""
    table = Table(title=f"assay: {result.n_rows} rows, {len(result.metric_names)} metrics")
    table.add_column("metric", style="bold")
    table.add_column("mean", justify="right")
    table.add_column("coverage", justify="right")
    table.add_column("skipped", justify="right")
    table.add_column("errors", justify="right")
    for item in result.summaries():
        if item.mean is not None:
            shown = f"{item.mean:.4f}"
        elif item.labels:
            shown = ", ".join(f"{label}: {count}" for label, count in sorted(item.labels.items()))
        else:
            shown = "n/a"
        table.add_row(
            item.name,
            shown,
            f"{item.coverage_text()} ({item.coverage:.0%})",
            str(item.n_skipped),
            f"[red]{item.n_error}" if item.n_error else "0",
        )
    return table


def _spent(usage: Usage) -> str:
    cost = f"${usage.cost:.4f}"
    if usage.unpriced_requests:
        cost += f" (+{usage.unpriced_requests} requests to models with no known price)"
    return (
        f"{usage.requests} requests, {usage.cached_requests} answered from cache; "
        f"{usage.input_tokens:,} input + {usage.output_tokens:,} output tokens; cost {cost}"
    )


def print_summary(
    result: EvaluationResult | StreamedResult,
    console: Console | None = None,
    *,
    max_errors: int = 5,
) -> None:
    console = console or Console()
    console.print(summary_table(result))
    sent, whole = result.sent_usage(), result.whole_run_usage()
    if result.resumed_cells and (whole.requests or whole.cached_requests):
        console.print(f"model calls by this invocation: {_spent(sent)}", highlight=False)
    elif sent.requests or sent.cached_requests:
        console.print(f"model calls: {_spent(sent)}", highlight=False)
    if result.resumed_cells and whole != sent:
        # A resumed run: what this invocation sent above, what every invocation spent here.
        console.print(
            f"the whole run ({result.resumed_cells} cells resumed from {escape(str(result.run_dir))}): "
            f"{_spent(whole)}",
            highlight=False,
        )
    errors = result.errors()
    for row, metric, error in errors[:max_errors]:
        console.print(
            f"[red]error[/red] row {row}, {escape(metric)}: {escape(error.error_type)}: {escape(error.message)}",
            highlight=False,
        )
    if len(errors) > max_errors:
        console.print(f"... and {len(errors) - max_errors} more errors (see the per-row output)")


__all__ = ["CellProgress", "print_summary", "summary_table"]
