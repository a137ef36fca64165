"""`assay experiments list|compare`: what runs exist, and whether one really beats another."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

experiments_app = typer.Typer(help="List and compare experiment runs.", no_args_is_help=True)

RootOption = Annotated[
    Path,
    typer.Option(
        "--root-dir", help="Directory holding experiments/ (default: the working directory)"
    ),
]


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.4f}"


@experiments_app.command("list")
def list_command(root_dir: RootOption = Path(".")) -> None:
    """Show every run under ROOT_DIR/experiments: when, how many rows, errors and parameters."""
    from rich.markup import escape

    from assay.cli.console import stdout
    from assay.errors import UsageError
    from assay.experiments.store import experiments_dir, list_experiments

    if not root_dir.is_dir():
        raise UsageError(f"no such directory: {root_dir}")
    found = list_experiments(root_dir)
    if not found:
        stdout.print(f"no experiments in {escape(str(experiments_dir(root_dir)))}", highlight=False)
        return
    width = max(len(entry["name"]) for entry in [*found, {"name": "name"}])
    stdout.print(
        f"{'name':<{width}}  {'created':<25}  {'status':<11}  {'rows':>5}  {'errors':>6}  params",
        highlight=False,
    )
    for entry in found:
        params = entry.get("params") or {}
        shown = ", ".join(
            [
                *(json.dumps(a, ensure_ascii=False) for a in params.get("args", [])),
                *(
                    f"{k}={json.dumps(v, ensure_ascii=False)}"
                    for k, v in params.get("kwargs", {}).items()
                ),
            ]
        )
        rows = "?" if entry["n_rows"] is None else str(entry["n_rows"])
        errors = "?" if entry["n_errors"] is None else str(entry["n_errors"])
        stdout.print(
            escape(
                f"{entry['name']:<{width}}  {entry.get('created') or '-':<25}  {entry['status']:<11}  "
                f"{rows:>5}  {errors:>6}  {shown}"
            ),
            highlight=False,
            soft_wrap=True,
        )


@experiments_app.command("compare")
def compare_command(
    experiments: Annotated[
        list[str],
        typer.Argument(help="Runs by name (or path to .jsonl/.csv); the first is the baseline"),
    ],
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            "-m",
            help="Column to compare (repeatable; default: every shared numeric column)",
        ),
    ] = None,
    root_dir: RootOption = Path("."),
    confidence: Annotated[
        float, typer.Option("--confidence", help="Level of the bootstrap interval")
    ] = 0.95,
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap resamples")] = 5000,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the bootstrap (same seed, same interval)")
    ] = 0,
    rows: Annotated[
        int, typer.Option("--rows", help="Largest per-row changes to list per metric")
    ] = 5,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="Print the full comparison, every per-row delta included, as JSON"
        ),
    ] = False,
) -> None:
    """Per-metric means with coverage, and for each run against the first: the mean per-row
    difference with a paired bootstrap confidence interval, and the rows that changed most."""
    from rich.markup import escape

    from assay.cli.console import stdout
    from assay.experiments.compare import compare_experiments
    from assay.experiments.store import load_experiment

    runs = [load_experiment(name, root_dir) for name in experiments]
    result = compare_experiments(
        runs, metric or None, confidence=confidence, resamples=resamples, seed=seed
    )
    if as_json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return

    def say(text: str) -> None:
        stdout.print(escape(text), highlight=False, soft_wrap=True)

    level = f"{confidence:.0%}"
    say(f"baseline: {result.experiments[0]}; rows matched by {result.matched_by}")
    say("")
    say("means (coverage = rows with a numeric value / rows)")
    width = max(len(m) for m in [*result.metrics, "metric"])
    run_width = max(len(n) for n in [*result.experiments, "run"])
    for name in result.metrics:
        for run in result.experiments:
            item = result.mean(run, name)
            mean = "n/a" if item.mean is None else f"{item.mean:.4f}"
            say(f"  {name:<{width}}  {run:<{run_width}}  {mean:>8}  ({item.coverage})")
    say("")
    say(
        f"differences against {result.experiments[0]} (paired rows; {level} bootstrap CI, "
        f"{result.resamples} resamples, seed {result.seed})"
    )
    for diff in result.differences:
        interval = "n/a" if diff.low is None else f"[{_signed(diff.low)}, {_signed(diff.high)}]"
        say(
            f"  {diff.metric:<{width}}  {diff.other:<{run_width}}  delta {_signed(diff.mean_delta)}  "
            f"CI {interval}  pairs {diff.n_pairs}  better/worse/same {diff.better}/{diff.worse}/{diff.same}  "
            f"-> {diff.verdict}"
        )
    if rows > 0:
        for diff in result.differences:
            changed = [row for row in diff.rows if row.delta != 0][:rows]
            if not changed:
                continue
            say("")
            say(f"largest changes in {diff.metric}, {diff.other} vs {diff.baseline}:")
            for row in changed:
                label = f"{result.matched_by} {json.dumps(row.key, ensure_ascii=False)}"
                say(f"  {label}: {row.baseline:.4g} -> {row.other:.4g} ({_signed(row.delta)})")
