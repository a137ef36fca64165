"""`assay evaluate`: score a dataset file and print a summary (or, with --estimate, a forecast)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

Opt = Optional  # typer reads Optional[...] annotations; 3.10 needs them spelled this way


def evaluate_command(
    data: Annotated[Path, typer.Argument(help="Dataset file: .jsonl, .json or .csv")],
    metrics: Annotated[str, typer.Option("--metrics", "-m", help="Comma-separated metric ids, e.g. bleu_score,rouge_score(rouge_type=rouge1)")],
    output: Annotated[Opt[Path], typer.Option("--output", "-o", help="Write one JSON object per row with its metric outcomes")] = None,
    run_dir: Annotated[Opt[Path], typer.Option("--run-dir", help="Save cells as they finish; rerun to resume")] = None,
    column_map: Annotated[Opt[str], typer.Option("--column-map", help="Rename columns: field=column,...")] = None,
    llm: Annotated[Opt[str], typer.Option("--llm", help="Judge model, e.g. openai/gpt-4o-mini, ollama/llama3.1, local")] = None,
    base_url: Annotated[Opt[str], typer.Option("--base-url", help="Endpoint of an OpenAI-compatible judge")] = None,
    embeddings: Annotated[Opt[str], typer.Option("--embeddings", help="Embedding model, e.g. openai/text-embedding-3-small")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache")] = False,
    estimate: Annotated[bool, typer.Option("--estimate", help="Print calls, tokens and cost; make no model call")] = False,
    budget: Annotated[Opt[float], typer.Option("--budget", help="Stop making model calls after this many USD")] = None,
    concurrency: Annotated[Opt[int], typer.Option("--concurrency", help="Cells scored at once (default: 16, fewer for a slow local judge)")] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds allowed per cell")] = 600.0,
    strict: Annotated[bool, typer.Option("--strict", help="Stop at the first error")] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar")] = True,
) -> None:
    """Score every row of DATA with the chosen metrics and print a summary."""
    from assay.cli.app import stderr, stdout
    from assay.cli.metric_spec import parse_column_map, parse_metrics
    from assay.engine.progress import print_summary
    from assay.engine.run import evaluate
    from assay.schema.dataset import EvaluationDataset

    if output is not None and output.suffix.lower() not in {".jsonl", ".ndjson"}:
        raise typer.BadParameter("--output must be a .jsonl file", param_hint="--output")
    dataset = EvaluationDataset.load(data, column_map=parse_column_map(column_map))
    chosen = parse_metrics(metrics)
    judge, embedder = _models(chosen, llm, base_url, embeddings, cache=not no_cache)
    if estimate:
        _print_estimate(dataset, chosen, judge, stdout)
        return
    try:
        result = evaluate(
            dataset,
            chosen,
            llm=judge,
            embeddings=embedder,
            run_dir=run_dir,
            max_concurrency=concurrency,
            timeout=timeout,
            strict=strict,
            show_progress=progress,
            budget=budget,
        )
    except KeyboardInterrupt:
        where = f"; finished cells are saved in {run_dir}: run the same command to resume" if run_dir else ""
        stderr.print(f"interrupted{where}")
        raise typer.Exit(130) from None
    print_summary(result, stdout)
    if output is not None:
        result.to_jsonl(output)
        stdout.print(f"per-row results written to {output}", highlight=False)


def _models(chosen: list[Any], llm: str | None, base_url: str | None, embeddings: str | None, *, cache: bool):
    """Build the judge and embeddings only if a chosen metric needs them (credentials checked here)."""
    from assay.models.defaults import default_embeddings, default_llm
    from assay.models.factory import embedding_factory, llm_factory

    judge = embedder = None
    if llm is not None:
        judge = llm_factory(llm, base_url=base_url, cache=cache)
    elif any(metric.needs_llm for metric in chosen):
        judge = default_llm(cache=cache)
    if embeddings is not None:
        embedder = embedding_factory(embeddings, base_url=base_url, cache=cache)
    elif any(metric.needs_embeddings for metric in chosen):
        embedder = default_embeddings(cache=cache)
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
        table.add_row(item.name, str(item.cells), str(item.calls.requests), f"{item.calls.input_tokens:,}",
                      f"{item.calls.output_tokens:,}", cost)
    total = "unknown price" if forecast.cost is None else f"{forecast.cost:.4f}"
    table.add_row("total", "", str(forecast.requests), f"{forecast.input_tokens:,}", f"{forecast.output_tokens:,}",
                  total, style="bold")
    console.print(table)
