"""`assay testset generate DOCS_DIR --size N -o testset.jsonl`: a test set from a folder of
plain-text, Markdown or reStructuredText files, with a progress bar per stage."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional, TypeAlias, TypeVar

import typer

_T = TypeVar("_T")
# typer reads Optional[...] annotations; on 3.10 they must be spelled this way
Opt: TypeAlias = Optional[_T]  # noqa: UP045

testset_app = typer.Typer(
    help="Generate evaluation data from documents.", no_args_is_help=True, add_completion=False
)


class _StageBars:
    """One rich progress bar per stage (each transform, personas, samples), on stderr."""

    def __init__(self, enabled: bool) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.progress = (
            Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
            )
            if enabled
            else None
        )
        self.tasks: dict[str, Any] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.progress is None:
            return
        if stage not in self.tasks:
            self.tasks[stage] = self.progress.add_task(stage, total=max(total, 1))
        self.progress.update(self.tasks[stage], completed=done, total=max(total, 1))

    def __enter__(self) -> _StageBars:
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()


@testset_app.command("generate")
def generate_command(
    docs: Annotated[Path, typer.Argument(help="A folder of .md/.txt/.rst files (or one file)")],
    size: Annotated[int, typer.Option("--size", "-n", help="How many samples to make", min=1)] = 10,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The test set to write (JSON Lines)")
    ] = Path("testset.jsonl"),
    llm: Annotated[
        Opt[str],
        typer.Option(
            "--llm",
            help="Model writing and judging, e.g. openai/gpt-4o-mini (default: $ASSAY_LLM, else local)",
        ),
    ] = None,
    base_url: Annotated[
        Opt[str], typer.Option("--base-url", help="Endpoint of an OpenAI-compatible model")
    ] = None,
    embeddings: Annotated[
        Opt[str],
        typer.Option(
            "--embeddings", help="Embedding model (default: $ASSAY_EMBEDDINGS, else local)"
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Same seed and inputs, same test set")] = 42,
    checkpoint: Annotated[
        Opt[Path],
        typer.Option(
            "--checkpoint", help="Directory to checkpoint into; a rerun continues from it"
        ),
    ] = None,
    style: Annotated[
        Opt[list[str]],
        typer.Option(
            "--style",
            help="Query style (repeatable): perfect_grammar, web_search_like, poor_grammar, misspelled",
        ),
    ] = None,
    personas: Annotated[
        int, typer.Option("--personas", help="How many personas to make", min=1)
    ] = 3,
    max_candidates: Annotated[
        Opt[int],
        typer.Option("--max-candidates", help="Candidate budget (default 3 x size + 10)", min=1),
    ] = None,
    llm_extractors: Annotated[
        bool,
        typer.Option(
            "--llm-extractors",
            help="Also extract headlines, summaries, themes and entities with the LLM",
        ),
    ] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not use the response cache")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars")] = False,
) -> None:
    """Build a knowledge graph (no LLM call by default), write questions, gate them, save them."""
    from assay.cli.console import stdout
    from assay.errors import UsageError
    from assay.models import defaults, factory
    from assay.testset import TestsetGenerator, load_documents

    if output.exists() and output.is_dir():
        raise UsageError(f"--output {output} is a directory; give a file such as testset.jsonl")
    if not output.parent.exists():
        raise UsageError(f"--output: the folder {output.parent} does not exist")
    documents = load_documents(docs)
    options: dict[str, Any] = {"cache": not no_cache}
    model = (
        factory.llm_factory(llm, base_url=base_url, **options)
        if llm
        else defaults.default_llm(**options)
    )
    embedder = (
        factory.embedding_factory(embeddings, base_url=base_url, **options)
        if embeddings
        else defaults.default_embeddings(**options)
    )
    generator = TestsetGenerator(llm=model, embedding_model=embedder)
    with _StageBars(not quiet) as bars:
        testset = generator.generate_with_documents(
            documents,
            testset_size=size,
            seed=seed,
            checkpoint_dir=checkpoint,
            query_styles=style,
            num_personas=personas,
            max_candidates=max_candidates,
            use_llm_extractors=llm_extractors,
            on_progress=bars,
        )
    testset.save(output)
    report_path = output.with_name(output.stem + ".report.json")
    testset.save_report(report_path)
    _print_summary(stdout, testset, output, report_path)


def _print_summary(console: Any, testset: Any, output: Path, report_path: Path) -> None:
    from rich.markup import escape

    report = testset.report
    console.print(
        f"{report.produced} of {report.requested} samples written to {escape(str(output))} "
        f"(report: {escape(str(report_path))})",
        highlight=False,
        soft_wrap=True,
    )
    for name, count in report.produced_split.items():
        console.print(
            f"  {name}: {count} (asked {report.requested_split.get(name, 0)})", highlight=False
        )
    for move in report.reassigned:
        console.print(
            f"  {move.synthesizer} handed {move.samples} to {move.to}: {move.reason}",
            highlight=False,
        )
    rejections = report.rejection_counts()
    if rejections:
        console.print(
            "  refused or failed candidates: "
            + ", ".join(f"{k} {v}" for k, v in sorted(rejections.items())),
            highlight=False,
        )
    console.print(
        f"  coverage: {report.documents_seeded} of {report.documents} documents seed a sample; "
        f"calls: {report.calls}",
        highlight=False,
    )
    if report.shortfall:
        console.print(
            f"[yellow]shortfall: {report.shortfall} samples missing:[/yellow] "
            + escape("; ".join(report.shortfall_reasons)),
            highlight=False,
            soft_wrap=True,
        )


__all__ = ["generate_command", "testset_app"]
