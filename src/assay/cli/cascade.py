"""`assay cascade fit DATA --first small --then local`: a judge cascade's band chosen on your rows.

Both judges answer the rows once; every candidate band and tolerance is routed over their
answers (`assay.alignment.fit_cascade`); the command prints the band kept, what each share of
escalated cells buys, and how well the first judge's P(yes) predicts the stronger judge's
verdicts, and with `--output` writes them as JSON for `Cascade(first=..., then=..., band=...,
tolerance=...)`. `small` names the packaged 0.5B judge (`assay[small-judge]`); any other value is
a model string (`local`, `openai/gpt-4o-mini`, ...).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from assay.cli.console import stdout

cascade_app = typer.Typer(help="A judge cascade: a cheap judge first, a stronger one where unsure.")

Judge = Annotated[str, typer.Option(help="small (the packaged 0.5B judge) or a model string")]


def _judge(name: str) -> Any:
    from assay.models import llm_factory

    if name == "small":
        from assay.models.local_weights import small_judge_path

        return llm_factory("local", model_path=small_judge_path())
    return llm_factory(name)


@cascade_app.command("fit")
def fit_command(
    data: Annotated[Path, typer.Argument(help="Rows like those the cascade will judge")],
    metric: Annotated[
        str, typer.Option(help="The judged metric, e.g. faithfulness or aspect_critic(...)")
    ] = "faithfulness",
    first: Judge = "small",
    then: Judge = "local",
    budget: Annotated[
        float, typer.Option(help="Share of cells the cascade may send to the stronger judge")
    ] = 0.5,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the fit as JSON")
    ] = None,
) -> None:
    """Choose a cascade's band and tolerance on DATA against the stronger judge."""
    from assay.alignment import fit_cascade
    from assay.cli.metric_spec import parse_metric

    chosen = parse_metric(metric)
    fit = fit_cascade(str(data), chosen, first=_judge(first), then=_judge(then), budget=budget)
    stdout.print(escape(str(fit)), highlight=False, soft_wrap=True)
    if output is not None:
        found = {"metric": metric, "rows": str(data), **fit.to_dict()}
        output.write_text(json.dumps(found, indent=1) + "\n")
        stdout.print(f"written: {escape(str(output))}")
