"""`assay align METRIC --train labels.jsonl --test labels_test.jsonl -o aligned.json`

Aligns a judge on the training labels (few-shot examples chosen by similarity with labels taking
turns, a threshold calibrated for score judges, optionally an instruction search first), reports
held-out agreement before and after with 95% intervals, and writes the aligned state, which
`Metric.load_alignment` / `assay.alignment.load_aligned_metric` read back, with the held-out
report beside it in the same file (`assay report --alignment aligned.json` shows it).

The command parses its options (`--examples`, `--map`, the metric spec), calls
`assay.alignment.align_judge` and prints; the options are declared once, as the `Annotated`
aliases below, so the command reads as a list.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from assay.errors import UsageError

MetricSpec = Annotated[
    str,
    typer.Argument(
        help="Metric to align, e.g. faithfulness, context_recall, domain_specific_rubrics, coherence"
    ),
]
Train = Annotated[
    Path,
    typer.Option(
        "--train",
        help="Training labels: .jsonl, .csv, .json (rows, review export or Ragas annotations)",
    ),
]
Output = Annotated[
    Path, typer.Option("--output", "-o", help="Where to write the aligned state (JSON)")
]
Test = Annotated[
    Path | None,
    typer.Option("--test", help="Held-out labels; without it a test part is split off --train"),
]
TestSize = Annotated[
    float, typer.Option("--test-size", help="Share split off --train when --test is not given")
]
Seed = Annotated[
    int, typer.Option("--seed", help="Seed of the split, the fixed examples and the bootstrap")
]
LabelColumn = Annotated[
    str | None, typer.Option("--label-column", help="Column holding the label (default: label)")
]
GroupColumn = Annotated[
    str | None,
    typer.Option("--group-column", help="Rows sharing a value never straddle two splits"),
]
MetricName = Annotated[
    str | None, typer.Option("--metric-name", help="Which metric of a Ragas annotation file")
]
Criterion = Annotated[
    str | None, typer.Option("--criterion", help="Which criterion of a review-queue export")
]
LabelMap = Annotated[
    list[str] | None,
    typer.Option(
        "--map",
        help="Relabel before fitting: LABEL=VALUE, repeatable (--map good=1 --map bad=0; "
        "--map 0=1 --map 1=0 flips yes/no labels); each side is read as JSON when it can be",
    ),
]
Llm = Annotated[
    str | None, typer.Option("--llm", help="Judge model, e.g. openai/gpt-4o-mini, local")
]
BaseUrl = Annotated[
    str | None, typer.Option("--base-url", help="Endpoint of an OpenAI-compatible judge")
]
Embeddings = Annotated[
    str | None, typer.Option("--embeddings", help="Embedding model for choosing examples")
]
Examples = Annotated[
    str,
    typer.Option(
        "--examples",
        "-k",
        help="Few-shot examples per row (0: threshold only); several as 0,3, or auto "
        "(tries 0 and 3 on the training rows and keeps the better)",
    ),
]
SimilarityThreshold = Annotated[
    float | None,
    typer.Option("--similarity-threshold", help="Leave out examples less similar than this"),
]
NoBalance = Annotated[
    bool, typer.Option("--no-balance", help="Nearest examples whatever their labels")
]
NoThreshold = Annotated[
    bool, typer.Option("--no-threshold", help="Do not calibrate a decision threshold")
]
Selection = Annotated[
    str,
    typer.Option("--selection", help="similar: per row; fixed: the same examples for every row"),
]
Optimize = Annotated[
    bool, typer.Option("--optimize", help="Search the instruction with GeneticOptimizer first")
]
MaxCalls = Annotated[
    int | None, typer.Option("--max-calls", help="Cap on judge calls of the instruction search")
]
ReportJson = Annotated[Path | None, typer.Option("--report", help="Also write the report as JSON")]
ReportHtml = Annotated[
    Path | None, typer.Option("--html", help="Also write the report as an HTML page")
]
Resamples = Annotated[
    int, typer.Option("--resamples", help="Bootstrap resamples for the intervals")
]
NoCache = Annotated[
    bool, typer.Option("--no-cache", help="Do not read or write the response cache")
]
NoProgress = Annotated[bool, typer.Option("--no-progress", help="No progress bars")]


def align_command(
    metric: MetricSpec,
    train: Train,
    output: Output,
    test: Test = None,
    test_size: TestSize = 0.2,
    seed: Seed = 42,
    label_column: LabelColumn = None,
    group_column: GroupColumn = None,
    metric_name: MetricName = None,
    criterion: Criterion = None,
    label_map: LabelMap = None,
    llm: Llm = None,
    base_url: BaseUrl = None,
    embeddings: Embeddings = None,
    examples: Examples = "3",
    similarity_threshold: SimilarityThreshold = None,
    no_balance: NoBalance = False,
    no_threshold: NoThreshold = False,
    selection: Selection = "similar",
    optimize: Optimize = False,
    max_calls: MaxCalls = 1000,
    report_json: ReportJson = None,
    report_html: ReportHtml = None,
    resamples: Resamples = 2000,
    no_cache: NoCache = False,
    no_progress: NoProgress = False,
) -> None:
    """Align a judge with human labels and report held-out agreement."""
    from assay.alignment.fit import AlignOptions, align_judge
    from assay.cli.metric_spec import parse_metric
    from assay.engine.model_choice import ModelChoice

    k = _k_option(examples)
    judge_metric = parse_metric(metric)
    options = AlignOptions(
        output=output,
        test_size=test_size,
        seed=seed,
        label_column=label_column,
        group_column=group_column,
        metric_name=metric_name,
        criterion=criterion,
        mapping=_mapping(label_map or []),
        models=ModelChoice(llm=llm, embeddings=embeddings, base_url=base_url, cache=not no_cache),
        examples=k,
        similarity_threshold=similarity_threshold,
        balance=not no_balance,
        calibrate=not no_threshold,
        selection=selection,
        optimize=optimize,
        max_calls=max_calls,
        resamples=resamples,
        show_progress=not no_progress,
    )
    run = align_judge(judge_metric, train, test, options)
    _print_run(run)
    if report_json is not None:
        run.report.to_json(report_json)
    if report_html is not None:
        run.report.to_html(report_html)


def _print_run(run: Any) -> None:
    from assay.cli.console import stdout

    stdout.print(run.report.table())
    state = run.metric.alignment
    threshold = "none" if state.threshold is None else f"{state.threshold:.4g}"
    stdout.print(
        f"aligned state written to {run.output} ({len(state.examples)} examples in the pool, k={state.k}, threshold {threshold})"
    )
    for note in run.notes:
        stdout.print(f"note: {note}", highlight=False, soft_wrap=True)


def _k_option(text: str) -> Any:
    """--examples: a whole number, several separated by commas, or auto."""
    from assay.alignment.calibration import k_candidates

    cleaned = text.strip().lower()
    if cleaned == "auto":
        return "auto"
    try:
        values = [int(part) for part in cleaned.split(",")]
    except ValueError:
        raise UsageError(
            f"--examples takes a whole number >= 0, several as 0,3, or auto; got {text!r}"
        ) from None
    k_candidates(values)  # the same check align() makes, before any model is loaded
    return values[0] if len(values) == 1 else values


def _mapping(pairs: list[str]) -> dict[Any, Any]:
    """`--map LABEL=VALUE` options as a dict; `1`, `0.5`, `true` and `"x"` are read as JSON."""

    def value(text: str) -> Any:
        try:
            return json.loads(text)
        except ValueError:
            return text

    found: dict[Any, Any] = {}
    for pair in pairs:
        label, sep, target = pair.partition("=")
        if not sep or not label.strip():
            raise UsageError(f"--map takes LABEL=VALUE (e.g. --map good=1), got {pair!r}")
        key = value(label.strip())
        if isinstance(key, (list, dict)):
            raise UsageError(f"--map: a label to map is a single value, got {label!r}")
        found[key] = value(target.strip())
    return found


__all__ = ["align_command"]
