"""`assay cards`: judge reliability cards (what was measured about a metric with a judge)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from assay.cli.console import stdout

cards_app = typer.Typer(
    help="Judge reliability cards: agreement with people, stability, and what is unmeasured.",
    invoke_without_command=True,
)
Llm = Annotated[
    str | None,
    typer.Option(
        "--llm", help="The judge (a model string); default: ASSAY_LLM or the embedded judge"
    ),
]


def _judge(llm: str | None) -> object | None:
    if llm is None:
        return None
    from assay.models import llm_factory

    return llm_factory(llm, cache=False)


@cards_app.callback()
def list_cards(ctx: typer.Context, llm: Llm = None) -> None:
    """List the cards known for the judge, one line per metric."""
    if ctx.invoked_subcommand is not None:
        return
    from assay.benchmark.cards import CORE_METRICS, judge_card, load_cards

    judge = _judge(llm)
    names = list(dict.fromkeys([*CORE_METRICS, *(card.metric for card in load_cards())]))
    for name in names:
        card = judge_card(name, judge)
        line = card.headline() if card else f"{name}: no card for this judge (unmeasured)"
        stdout.print(escape(line), highlight=False, soft_wrap=True)


@cards_app.command("show")
def show_card(metric: str, llm: Llm = None) -> None:
    """Print one metric's card: every agreement figure, stability, and what is unmeasured."""
    from assay.benchmark.cards import judge_card

    card = judge_card(metric, _judge(llm))
    if card is None:
        stdout.print(
            f"{escape(metric)}: no card for this judge and configuration; its agreement with "
            "people is unmeasured."
        )
        return
    stdout.print(
        f"[bold]{escape(card.metric)}[/bold] judged by {escape(str(card.judge.get('model')))}"
    )
    stdout.print("  agreement with human labels:" if card.agreement else "  agreement: unmeasured")
    for measurement in card.agreement:
        stdout.print(f"    {escape(measurement.text())}", highlight=False, soft_wrap=True)
        stdout.print(f"      from {escape(measurement.source)}", style="dim", soft_wrap=True)
    for measurement in card.stability:
        stdout.print(f"    {escape(measurement.text())}", highlight=False)
    for missing in card.unmeasured:
        stdout.print(f"  unmeasured: {escape(missing)}", soft_wrap=True)


@cards_app.command("build")
def build(
    results: Annotated[Path, typer.Option(help="The benchmark results directory")] = Path(
        "benchmarks/results"
    ),
    output: Annotated[
        Path | None, typer.Option(help="Where to write (default: the shipped file)")
    ] = None,
) -> None:
    """Rebuild the cards from committed benchmark results (cards are never written by hand)."""
    from assay.benchmark.cards import CARDS_FILE, build_cards, write_cards

    written = write_cards(build_cards(results), output or CARDS_FILE)
    stdout.print(f"wrote {escape(str(written))}")
