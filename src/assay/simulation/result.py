"""What a simulation returns: every conversation with how it ended, and the dataset to score."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from assay.schema.dataset import EvaluationDataset
from assay.schema.usage import Usage
from assay.simulation.conversation import ENDINGS, Conversation


@dataclass
class SimulationResult:
    """conversations: one per scenario, in the scenarios' order, finished or failed.
    resumed: how many were read back from `run_dir` instead of being simulated again."""

    conversations: list[Conversation]
    seconds: float = 0.0
    run_dir: str | None = None
    resumed: int = 0

    @property
    def dataset(self) -> EvaluationDataset:
        """The finished conversations (goal met, gave up, max turns) as `MultiTurnSample`s with
        their tool calls, `reference` = the scenario's reference outcome; failed ones are left
        out (see `errors()`). Ready for `evaluate` with the multi-turn metrics."""
        return EvaluationDataset(
            [c.to_sample() for c in self.conversations if c.ok], name="simulation"
        )

    def errors(self) -> list[Conversation]:
        """The conversations that ended in a typed error (`conversation.error`)."""
        return [c for c in self.conversations if not c.ok]

    def counts(self) -> dict[str, int]:
        """How many conversations ended each way: goal_met, gave_up, max_turns, error."""
        found = {name: 0 for name in (*ENDINGS, "error")}
        for conversation in self.conversations:
            found[conversation.status] += 1
        return found

    def usage(self) -> Usage:
        """What the simulated user's and the judge's model calls used, all conversations."""
        total = Usage()
        for conversation in self.conversations:
            total = total + conversation.usage
        return total

    def to_jsonl(self, path: str | Path) -> None:
        """Write the dataset (finished conversations) as evaluation rows, one per line; `assay
        evaluate` and `EvaluationDataset.load` read it back."""
        self.dataset.to_jsonl(path)

    def __len__(self) -> int:
        return len(self.conversations)

    def __repr__(self) -> str:
        counts = ", ".join(f"{name}={count}" for name, count in self.counts().items() if count)
        return f"SimulationResult({len(self.conversations)} conversations: {counts or 'none'})"


def print_simulation(
    result: SimulationResult, console: Console | None = None, *, max_errors: int = 5
) -> None:
    """A table of how the conversations ended, the model usage, and the first errors."""
    console = console or Console()
    table = Table(title=f"assay simulate: {len(result)} conversations")
    for column in ("ended", "conversations", "mean turns"):
        table.add_column(column, justify="left" if column == "ended" else "right")
    for name, count in result.counts().items():
        turns = [c.turns for c in result.conversations if c.status == name]
        mean = f"{sum(turns) / len(turns):.1f}" if turns else "-"
        table.add_row(f"[red]{name}" if name == "error" and count else name, str(count), mean)
    console.print(table)
    usage = result.usage()
    if usage.requests or usage.cached_requests:
        console.print(
            f"model calls: {usage.requests} requests, {usage.cached_requests} answered from cache; "
            f"{usage.input_tokens:,} input + {usage.output_tokens:,} output tokens; "
            f"cost ${usage.cost:.4f}",
            highlight=False,
        )
    if result.resumed:
        console.print(
            f"{result.resumed} conversation(s) resumed from {escape(str(result.run_dir))}"
        )
    errors = result.errors()
    for conversation in errors[:max_errors]:
        error = conversation.error
        assert error is not None
        console.print(
            f"[red]error[/red] {escape(conversation.name)}: {escape(error.error_type)}: "
            f"{escape(error.message)}",
            highlight=False,
        )
    if len(errors) > max_errors:
        console.print(f"... and {len(errors) - max_errors} more errors")


def report_simulation(result: object, console: Console, *, output: Path | None = None) -> bool:
    """What `assay simulate` prints: the forecast, or the summary and where the rows went.
    True when a conversation ended in an error (the command then exits 1)."""
    if not isinstance(result, SimulationResult):
        console.print(f"estimate (no model was called): {result}", highlight=False)
        return False
    print_simulation(result, console)
    if output is not None:
        console.print(f"{len(result.dataset)} conversations written to {output}", highlight=False)
    return bool(result.errors())


__all__ = ["SimulationResult", "print_simulation", "report_simulation"]
