"""`assay cache stats|clear`: inspect or empty the model response cache."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

cache_app = typer.Typer(help="Inspect or clear the model response cache.", no_args_is_help=True)

PathOption = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option(
        "--path", help="Cache file (default: ASSAY_CACHE_DIR, ./.assay/ or the user cache dir)"
    ),
]


@cache_app.command("stats")
def stats_command(path: PathOption = None) -> None:
    """Show where the cache is, how many answers it holds, and for which models."""
    from assay.cli.console import stdout
    from assay.models.cache import open_cache

    stats = open_cache(path).stats()
    stdout.print(f"cache: {stats['path']}", highlight=False)
    stdout.print(f"entries: {stats['entries']}  size: {stats['bytes'] / 1e6:.2f} MB")
    for row in stats["by_model"]:
        stdout.print(
            f"  {row['kind']:<9} {row['model']}: {row['entries']} entries", highlight=False
        )


@cache_app.command("clear")
def clear_command(path: PathOption = None) -> None:
    """Delete every cached answer."""
    from assay.cli.console import stdout
    from assay.models.cache import open_cache

    removed = open_cache(path).clear()
    stdout.print(f"removed {removed} cached entries")
