"""`assay trajectories`: an export of platform traces as evaluation rows for `assay evaluate`,
one conversation per trace or per session, tool calls and tool outputs included.

The command parses its options, calls `assay.integrations.trajectory.convert_export` and prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

Export = Annotated[
    Path, typer.Argument(help="Traces: .jsonl (one trace per line) or .json (a list, or a page)")
]
Output = Annotated[Path, typer.Option("--output", "-o", help="Evaluation rows to write (.jsonl)")]
By = Annotated[str, typer.Option("--by", help="One conversation per 'trace' or per 'session'")]


def trajectories_command(export: Export, output: Output, by: By = "trace") -> None:
    """Turn exported traces into conversations (MultiTurnSample rows) for `assay evaluate`."""
    from assay.cli.console import stdout
    from assay.errors import UsageError
    from assay.integrations.trajectory import convert_export
    from assay.schema.samples import MultiTurnSample

    if by not in ("trace", "session"):
        raise UsageError(f"--by must be 'trace' or 'session', got {by!r}")
    chosen: Literal["trace", "session"] = "session" if by == "session" else "trace"
    dataset = convert_export(export, output, by=chosen)
    calls = sum(len(s.tool_calls()) for s in dataset if isinstance(s, MultiTurnSample))
    stdout.print(
        f"{len(dataset)} conversations ({calls} tool calls) written to {output}", highlight=False
    )
