"""`assay prompts adapt`: translate a metric's prompts into another language and save them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

prompts_app = typer.Typer(help="Localise metric prompts.", no_args_is_help=True)


@prompts_app.command("adapt")
def adapt_command(
    metric: Annotated[
        str,
        typer.Option(
            "--metric", "-m", help="Metric id, e.g. faithfulness or faithfulness(statements=claims)"
        ),
    ],
    language: Annotated[str, typer.Option("--language", "-l", help="Target language, e.g. german")],
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", help="Directory for {metric}_{prompt}_{language}.json files"
        ),
    ] = Path("prompts"),
    llm: Annotated[
        str | None,
        typer.Option("--llm", help="Translator model (default: the configured judge)"),
    ] = None,
    instruction: Annotated[
        bool, typer.Option("--instruction/--examples-only", help="Also translate the instruction")
    ] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace existing files")] = False,
) -> None:
    """Translate METRIC's prompt examples (and optionally instructions) into LANGUAGE and save them;
    pass the directory as `prompts_path` (or load them with `load_prompts`) to use them."""
    from assay.cli.console import stdout
    from assay.cli.metric_spec import parse_metric
    from assay.models.defaults import default_llm
    from assay.models.factory import llm_factory
    from assay.prompts.localize import adapt_prompts, apply_prompts, save_prompts

    chosen = parse_metric(
        metric
    )  # its settings decide which prompts it sends, and so which are adapted
    translator = llm_factory(llm) if llm else default_llm()
    adapted = adapt_prompts(chosen, language, translator, adapt_instruction=instruction)
    apply_prompts(chosen, adapted)
    output.mkdir(parents=True, exist_ok=True)
    written = save_prompts(chosen, output, overwrite=overwrite)
    for path in written:
        stdout.print(f"wrote {path}", highlight=False)
