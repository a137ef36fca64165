"""`assay` command line entry point. Each command lives in its own module."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer
from rich.markup import escape

from assay._version import __version__
from assay.cli.console import stderr
from assay.errors import AssayError

app = typer.Typer(
    name="assay",
    help="Evaluate LLM, RAG and agent applications.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        print(f"assay {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        Optional[bool],  # noqa: UP045 (typer needs Optional on 3.10)
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = None,
) -> None:
    """assay: typed, resumable evaluations of LLM applications."""


def _register() -> None:
    from assay.cli import (
        align,
        benchmark,
        cache,
        cards,
        cascade,
        evaluate,
        experiments,
        metrics,
        platform,
        prompts,
        quickstart,
        report,
        simulate,
        testset,
        trajectories,
    )

    app.command("evaluate")(evaluate.evaluate_command)
    app.command("metrics")(metrics.metrics_command)
    app.add_typer(cache.cache_app, name="cache")
    app.add_typer(prompts.prompts_app, name="prompts")
    app.command("benchmark")(benchmark.benchmark_command)
    app.add_typer(cards.cards_app, name="cards")
    app.add_typer(cascade.cascade_app, name="cascade")
    app.command("align")(align.align_command)
    app.command("report")(report.report_command)
    app.command("quickstart")(quickstart.quickstart_command)
    app.add_typer(experiments.experiments_app, name="experiments")
    app.command("serve")(platform.serve_command)
    app.command("worker")(platform.worker_command)
    app.add_typer(platform.keys_app, name="keys")
    app.add_typer(platform.users_app, name="users")
    app.add_typer(testset.testset_app, name="testset")
    app.command("simulate")(simulate.simulate_command)
    app.command("trajectories")(trajectories.trajectories_command)


_register()


def main() -> None:
    """Run the CLI; assay's own errors become one line on stderr and exit code 2, and so does a
    database the platform commands cannot reach (a wrong URL, a server that is down): a user's
    error, not a bug, so no traceback."""
    try:
        app()
    except AssayError as exc:
        stderr.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except Exception as exc:
        reason = _database_unreachable(exc)
        if reason is None:
            raise
        stderr.print(
            f"[red]error:[/red] cannot use the database: {escape(reason)}",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(2)


def _database_unreachable(exc: Exception) -> str | None:
    """The first line of SQLAlchemy's OperationalError (refused, unknown host, bad password, no
    such database), or None for any other exception."""
    kind = type(exc)
    if kind.__name__ != "OperationalError" or not kind.__module__.startswith("sqlalchemy"):
        return None
    cause = getattr(exc, "orig", None) or exc
    return str(cause).strip().splitlines()[0] if str(cause).strip() else kind.__name__
